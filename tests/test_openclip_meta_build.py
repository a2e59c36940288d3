"""A local safetensors model built on the meta device (models/openclip/meta_build.py) is the
model open_clip's own loader builds: the same tensors, buffers, transforms, fingerprint and
embeddings (bit for bit), the same errors for a file that does not fit, and open_clip's loader
wherever the shortcut does not apply."""

from __future__ import annotations

import logging
import re

import numpy as np
import open_clip
import pytest
import torch

import foilbench.models.openclip.adapter as adapter_module
from _models_tiny import tiny_images, write_openclip_config  # noqa: E402
from foilbench.errors import ModelError
from foilbench.models.openclip import meta_build
from foilbench.models.registry import resolve_model

TEXTS = ["a red cube left of a blue sphere", "a blue cube left of a red sphere", "two cats"]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("metabuild")
    cfg = write_openclip_config(folder, "fb-meta-tiny")
    open_clip.add_model_config(cfg)
    torch.manual_seed(3)
    model = open_clip.create_model("fb-meta-tiny")
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(folder / "w.safetensors"))
    torch.save(state, folder / "w.pt")
    return {"cfg": cfg, "dir": folder, "state": state}


@pytest.fixture
def shortcut_calls(monkeypatch):
    """What each call of the meta-device build returned (None: open_clip's loader was used)."""
    calls = []
    real = adapter_module.build_without_init

    def spy(*args):
        calls.append(real(*args))
        return calls[-1]

    monkeypatch.setattr(adapter_module, "build_without_init", spy)
    return calls


def open_clips_own(spec, monkeypatch):
    """The adapter as open_clip's own loader builds it (the shortcut switched off)."""
    with monkeypatch.context() as m:
        m.setattr(adapter_module, "build_without_init", lambda *args: None)
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
    assert shortcut_calls and shortcut_calls[0] is not None  # the shortcut built it
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
    assert shortcut_calls and shortcut_calls[0] is not None
    assert_same_model(fast, open_clips_own(spec, monkeypatch))


def test_no_initialiser_writes_real_memory(tiny, shortcut_calls, monkeypatch):
    touched = []
    real = torch.nn.init.normal_

    def watch(tensor, *args, **kwargs):
        touched.append(tensor.is_meta)
        return real(tensor, *args, **kwargs)

    monkeypatch.setattr(torch.nn.init, "normal_", watch)
    resolve_model(f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.safetensors'}", device="cpu")
    assert shortcut_calls[0] is not None
    assert touched and all(touched)  # open_clip initialised, but only on the meta device


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
def test_a_file_that_does_not_fit_is_refused_as_open_clips_loader_refuses(
        tiny, tmp_path, shortcut_calls, monkeypatch, how, words):
    spec = f"openclip:{tiny['cfg']}:{broken_file(tiny, tmp_path, how)}"
    with pytest.raises(ModelError, match=re.escape(words)) as fast:
        resolve_model(spec, device="cpu")
    assert shortcut_calls == [None]  # the shortcut stepped aside
    with pytest.raises(ModelError) as slow:
        open_clips_own(spec, monkeypatch)
    assert str(fast.value) == str(slow.value)


def test_pt_files_take_open_clips_loader(tiny, shortcut_calls, monkeypatch):
    spec = f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.pt'}"
    adapter = resolve_model(spec, device="cpu")
    assert shortcut_calls == [None]
    assert_same_model(adapter, open_clips_own(spec, monkeypatch))


def test_open_clips_random_init_line_is_not_logged_and_the_filter_goes(tiny, caplog):
    filters = list(logging.getLogger().filters)
    with caplog.at_level(logging.INFO):
        resolve_model(f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.safetensors'}",
                      device="cpu")
    assert not [r for r in caplog.records if "initiali" in r.getMessage()]
    assert logging.getLogger().filters == filters


def test_the_causal_mask_is_the_text_towers_own():
    tower = open_clip.transformer.TextTransformer(context_length=9, width=16, heads=2,
                                                  layers=1, output_dim=8)
    assert torch.equal(meta_build.causal_mask(tower.attn_mask.shape), tower.attn_mask)
    assert meta_build.causal_mask((3, 4)) is None


def test_a_meta_tensor_without_a_rule_sends_the_build_back():
    class Odd(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("table", torch.ones(3), persistent=False)

    with torch.device("meta"):
        odd = Odd()
    assert meta_build._rebuild_masks(odd) == "no rule makes .table again"
    assert meta_build._left_on_meta(odd) == ".table was left on the meta device"
    plain = torch.nn.Module()
    plain.cached = torch.empty(2, device="meta")
    assert meta_build._left_on_meta(plain) == ".cached was left on the meta device"
