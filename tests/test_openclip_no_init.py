"""A model built from a local weights file without its random initialisation
(models/openclip/no_init.py) is the model open_clip builds with it: the same tensors, buffers,
transforms, fingerprint and embeddings (bit for bit), the same errors for a file that does not
fit; and the skip is used only where open_clip loads every weight strictly."""

from __future__ import annotations

import re
import threading

import numpy as np
import open_clip
import pytest
import torch

import foilbench.models.openclip.adapter as adapter_module
from _models_tiny import tiny_images, write_openclip_config  # noqa: E402
from foilbench.errors import ModelError
from foilbench.models.openclip import no_init
from foilbench.models.registry import resolve_model

TEXTS = ["a red cube left of a blue sphere", "a blue cube left of a red sphere", "two cats"]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("noinit")
    cfg = write_openclip_config(folder, "fb-noinit-tiny")
    open_clip.add_model_config(cfg)
    torch.manual_seed(3)
    model = open_clip.create_model("fb-noinit-tiny")
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(folder / "w.safetensors"))
    torch.save(state, folder / "w.pt")
    return {"cfg": cfg, "dir": folder, "state": state}


@pytest.fixture
def shortcut_calls(monkeypatch):
    """Per model built, how many random fills were skipped (None: none were, the skip was
    not used)."""
    calls = []
    real = adapter_module.random_fills_skipped

    def spy():
        mode = real()
        calls.append(mode)
        return mode

    monkeypatch.setattr(adapter_module, "random_fills_skipped", spy)
    return calls


def open_clips_own(spec, monkeypatch):
    """The adapter as open_clip builds it, random initialisation included."""
    with monkeypatch.context() as m:
        m.setattr(adapter_module, "skips_init", lambda *args: False)
        return resolve_model(spec, device="cpu")


def assert_same_model(fast, slow):
    a = dict(fast.model.named_buffers())
    a.update(fast.model.state_dict(keep_vars=True))
    b = dict(slow.model.named_buffers())
    b.update(slow.model.state_dict(keep_vars=True))
    assert sorted(a) == sorted(b) and "attn_mask" in a
    for key in b:
        assert a[key].dtype == b[key].dtype and a[key].device == b[key].device, key
        assert torch.equal(a[key], b[key]), key
    assert [n for n, _ in fast.model.named_parameters()] == \
        [n for n, _ in slow.model.named_parameters()]
    assert all(p.requires_grad for p in fast.model.parameters())
    assert repr(fast.preprocess) == repr(slow.preprocess)
    assert fast.info.fingerprint == slow.info.fingerprint
    images = tiny_images(4)
    assert np.array_equal(fast.embed_images(images), slow.embed_images(images))
    assert np.array_equal(fast.embed_texts(TEXTS), slow.embed_texts(TEXTS))


def test_tiny_config_model_equals_open_clips_loader(tiny, shortcut_calls, monkeypatch):
    spec = f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.safetensors'}"
    fast = resolve_model(spec, device="cpu")
    assert len(shortcut_calls) == 1 and shortcut_calls[0].skipped > 0  # skipped
    assert_same_model(fast, open_clips_own(spec, monkeypatch))


@pytest.mark.slow
def test_vit_b_32_with_seeded_weights_equals_open_clips_loader(tmp_path, shortcut_calls,
                                                               monkeypatch):
    from safetensors.torch import save_file

    torch.manual_seed(11)
    state = {k: v.contiguous()
             for k, v in open_clip.create_model("ViT-B-32").state_dict().items()}
    weights = tmp_path / "vitb32.safetensors"
    save_file(state, str(weights))
    del state
    spec = f"openclip:ViT-B-32:{weights}"
    fast = resolve_model(spec, device="cpu")
    assert len(shortcut_calls) == 1 and shortcut_calls[0].skipped > 0
    assert_same_model(fast, open_clips_own(spec, monkeypatch))


def test_no_random_fill_reaches_the_model_and_other_threads_still_fill(tiny, shortcut_calls,
                                                                      monkeypatch):
    filled = []
    real = torch.Tensor.normal_

    def watch(tensor, *args, **kwargs):
        filled.append(tensor.shape)
        return real(tensor, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "normal_", watch)
    resolve_model(f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.safetensors'}", device="cpu")
    assert shortcut_calls[0].skipped > 0 and filled == []
    # the same build with the skip switched off fills, so the watch above can see a fill
    open_clips_own(f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.safetensors'}", monkeypatch)
    assert filled


def test_the_skip_holds_in_its_own_thread_only():
    out = []
    with no_init.random_fills_skipped() as mode:
        worker = threading.Thread(target=lambda: out.append(torch.zeros(3).normal_()))
        worker.start()
        worker.join()
        here = torch.zeros(3).normal_()
    assert mode.skipped == 1 and torch.equal(here, torch.zeros(3))
    assert not torch.equal(out[0], torch.zeros(3))


def broken_file(tiny, tmp_path, how):
    from safetensors.torch import save_file

    state = dict(tiny["state"])
    if how == "missing":
        del state["text_projection"]
    elif how == "unexpected":
        state["extra.weight"] = torch.zeros(2)
    else:
        state["ln_final.weight"] = torch.zeros(7)
    path = tmp_path / f"{how}.safetensors"
    save_file(state, str(path))
    return path


@pytest.mark.parametrize("how, words", [
    ("missing", "1 tensor(s) missing from the file, e.g. text_projection"),
    ("unexpected", "1 tensor(s) not in the model, e.g. extra.weight"),
    ("shape", "ln_final.weight is [7] in the file but [32] in the model"),
])
def test_a_file_that_does_not_fit_is_refused_as_open_clip_refuses_it(
        tiny, tmp_path, shortcut_calls, monkeypatch, how, words):
    spec = f"openclip:{tiny['cfg']}:{broken_file(tiny, tmp_path, how)}"
    with pytest.raises(ModelError, match=re.escape(words)) as fast:
        resolve_model(spec, device="cpu")
    assert len(shortcut_calls) == 1  # built with the skip, refused all the same
    with pytest.raises(ModelError) as slow:
        open_clips_own(spec, monkeypatch)
    assert str(fast.value) == str(slow.value)


def test_pt_files_skip_too_and_equal_open_clips_build(tiny, shortcut_calls, monkeypatch):
    spec = f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.pt'}"
    adapter = resolve_model(spec, device="cpu")
    assert shortcut_calls[0].skipped > 0
    assert_same_model(adapter, open_clips_own(spec, monkeypatch))


def test_only_strictly_loaded_files_of_open_clips_own_towers_skip(tiny, tmp_path):
    assert no_init.skips_init(open_clip, "fb-noinit-tiny", tiny["dir"] / "w.safetensors")
    assert no_init.skips_init(open_clip, "ViT-B-32", tmp_path / "W.PTH")
    assert not no_init.skips_init(open_clip, "fb-noinit-tiny", None)  # a tag or random weights
    assert not no_init.skips_init(open_clip, "ViT-B-32", tmp_path / "w.npz")  # not strict
    assert not no_init.skips_init(open_clip, "ViT-B-16-SigLIP", tmp_path / "w.safetensors")  # timm
    assert no_init.skips_init(open_clip, "RN50-quickgelu", tmp_path / "w.safetensors")
    assert not no_init.skips_init(open_clip, "coca_ViT-B-32", tmp_path / "w.safetensors")  # CoCa
