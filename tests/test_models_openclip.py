"""open_clip adapter against a direct open_clip computation on tiny random models."""

from __future__ import annotations

import json
import warnings

import numpy as np
import open_clip  # noqa: F401  (the openclip extra is a test dependency)
import pytest
import torch
from PIL import Image

from _models_tiny import tiny_images, write_openclip_config  # noqa: E402
from foilbench.errors import ModelError, UnknownNameError  # noqa: E402
from foilbench.models.fingerprint import HASH_CACHE_FILE, file_sha256  # noqa: E402
from foilbench.models.registry import resolve_model  # noqa: E402

TEXTS = ["a red cube left of a blue sphere", "a blue cube left of a red sphere", "two cats"]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny GELU open_clip model: JSON config, safetensors and .pt weights."""
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("openclip")
    cfg = write_openclip_config(folder, "fb-tiny-gelu")
    open_clip.add_model_config(cfg)
    torch.manual_seed(0)
    model, _, preprocess = open_clip.create_model_and_transforms("fb-tiny-gelu")
    model.eval()
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(folder / "w.safetensors"))
    torch.save(state, folder / "w.pt")
    return {"cfg": cfg, "model": model, "preprocess": preprocess, "dir": folder}


def direct(model, preprocess, arch, images, texts):
    with torch.no_grad():
        im = model.encode_image(torch.stack([preprocess(i) for i in images]))
        tx = model.encode_text(open_clip.get_tokenizer(arch)(texts))
    im = torch.nn.functional.normalize(im, dim=-1).numpy()
    tx = torch.nn.functional.normalize(tx, dim=-1).numpy()
    return im, tx


@pytest.mark.parametrize("weights", ["w.safetensors", "w.pt"])
def test_config_and_weights_match_open_clip(tiny, weights):
    spec = f"openclip:{tiny['cfg']}:{tiny['dir'] / weights}"
    adapter = resolve_model(spec, device="cpu")
    images = tiny_images(3)
    want_im, want_tx = direct(tiny["model"], tiny["preprocess"], "fb-tiny-gelu", images, TEXTS)
    got_im, got_tx = adapter.embed_images(images), adapter.embed_texts(TEXTS)
    assert adapter.family == "dual" and got_im.dtype == np.float32
    np.testing.assert_allclose(got_im, want_im, atol=1e-5)
    np.testing.assert_allclose(got_tx, want_tx, atol=1e-5)
    cos = (want_im * want_tx).sum(1)
    np.testing.assert_allclose(adapter.pair_scores(got_im, got_tx), cos, atol=1e-5)
    assert adapter.info.score_kind == "cosine"
    assert adapter.info.extras["activation"] == "gelu"


def test_arch_name_with_local_weights_and_same_fingerprint(tiny):
    a = resolve_model(f"openclip:fb-tiny-gelu:{tiny['dir'] / 'w.safetensors'}", device="cpu")
    b = resolve_model(f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.safetensors'}", device="cpu")
    assert a.info.fingerprint == b.info.fingerprint  # same arch, weights, preprocessing
    assert a.info.extras["weights_sha256"] == file_sha256(tiny["dir"] / "w.safetensors")


def test_logit_score_is_exp_temperature_times_cosine(tiny):
    adapter = resolve_model(f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.pt'}?score=logit",
                            device="cpu")
    im, tx = adapter.embed_images(tiny_images(3)), adapter.embed_texts(TEXTS)
    scale = tiny["model"].logit_scale.exp().item()
    np.testing.assert_allclose(adapter.pair_scores(im, tx), scale * (im * tx).sum(1), rtol=1e-5)
    assert adapter.info.score_kind == "logit"


def test_quickgelu_config_changes_activation_scores_and_fingerprint(tiny, tmp_path):
    cfg_q = write_openclip_config(tmp_path, "fb-tiny-qg", quick_gelu=True)
    weights = tiny["dir"] / "w.safetensors"
    gelu = resolve_model(f"openclip:{tiny['cfg']}:{weights}", device="cpu")
    quick = resolve_model(f"openclip:{cfg_q}:{weights}", device="cpu")
    assert quick.info.extras["activation"] == "quick_gelu"
    assert quick.info.fingerprint != gelu.info.fingerprint
    images = tiny_images(2)
    assert not np.allclose(quick.embed_images(images), gelu.embed_images(images), atol=1e-4)
    # and it equals open_clip's own QuickGELU model with the same weights
    model = open_clip.create_model("fb-tiny-qg", pretrained=str(weights)).eval()
    assert any(type(m).__name__ == "QuickGELU" for m in model.modules())
    want, _ = direct(model, quick.preprocess, "fb-tiny-qg", images, TEXTS)
    np.testing.assert_allclose(quick.embed_images(images), want, atol=1e-5)


def test_openai_tag_on_gelu_arch_switches_to_quickgelu_with_warning():
    """Against the installed open_clip registry: the OpenAI weights were trained with
    QuickGELU in every open_clip version."""
    from foilbench.models.openclip.spec import quickgelu_for_tag

    arch, force, warning = quickgelu_for_tag("ViT-B-32", "openai")
    assert (arch, force) == ("ViT-B-32", True) and "QuickGELU" in warning
    assert quickgelu_for_tag("ViT-B-32-quickgelu", "openai") == ("ViT-B-32-quickgelu", False, None)


# A fixed registry, so every branch is tested whatever open_clip version is installed (which
# tags a -quickgelu architecture lists has changed between releases).
FAKE_ARCHS = {"A": {"quick_gelu": False}, "A-quickgelu": {"quick_gelu": True},
              "Q-quickgelu": {"quick_gelu": True}}
FAKE_TAGS = {("A", "gelu_tag"): {"hf_hub": "x/a"}, ("A", "qg_tag"): {"quick_gelu": True},
             ("A-quickgelu", "gelu_tag"): {"quick_gelu": False},
             ("A-quickgelu", "qg_tag"): {"quick_gelu": True},
             # the tag says nothing (roberta-ViT-B-32:laion2b_s12b_b32k in open_clip 3.3.0): the
             # architecture's own QuickGELU is built, as open_clip builds it
             ("Q-quickgelu", "silent_tag"): {"hf_hub": "x/q"},
             ("Q-quickgelu", "gelu_tag"): {"quick_gelu": False}}  # stated GELU, no GELU variant


@pytest.fixture
def fake_registry(monkeypatch):
    monkeypatch.setattr(open_clip, "get_model_config", lambda arch: FAKE_ARCHS.get(arch))
    monkeypatch.setattr(open_clip, "get_pretrained_cfg",
                        lambda arch, tag: FAKE_TAGS.get((arch, tag), {}))
    monkeypatch.setattr(open_clip, "list_pretrained_tags_by_model",
                        lambda arch: sorted(t for a, t in FAKE_TAGS if a == arch))
    monkeypatch.setattr(open_clip, "list_models", lambda: sorted(FAKE_ARCHS))


@pytest.mark.parametrize(("arch", "tag", "want_arch", "want_force", "warns"), [
    ("A", "gelu_tag", "A", False, None),  # activation matches: nothing to do
    ("A-quickgelu", "qg_tag", "A-quickgelu", False, None),
    ("A", "qg_tag", "A", True, "trained with QuickGELU"),  # force QuickGELU on a GELU arch
    ("A-quickgelu", "gelu_tag", "A", False, "building 'A' instead"),  # GELU variant exists
    ("Q-quickgelu", "silent_tag", "Q-quickgelu", False, None),  # tag silent: arch as it is
])
def test_quickgelu_for_tag_every_branch(fake_registry, arch, tag, want_arch, want_force, warns):
    from foilbench.models.openclip.spec import quickgelu_for_tag

    got_arch, force, warning = quickgelu_for_tag(arch, tag)
    assert (got_arch, force) == (want_arch, want_force)
    assert (warning is None) if warns is None else (warns in warning)


def test_quickgelu_for_tag_refusals(fake_registry):
    from foilbench.models.openclip.spec import quickgelu_for_tag

    with pytest.raises(ModelError, match="no GELU variant exists"):
        quickgelu_for_tag("Q-quickgelu", "gelu_tag")
    with pytest.raises(ModelError, match="has no pretrained tag 'nope'; known tags: gelu_tag, "
                                         "qg_tag"):
        quickgelu_for_tag("A", "nope")
    with pytest.raises(ModelError, match="unknown open_clip architecture 'B'"):
        quickgelu_for_tag("B", "gelu_tag")


def test_openai_named_weights_on_gelu_arch_warn(tiny, tmp_path):
    named = tmp_path / "openai-ViT.safetensors"
    named.write_bytes((tiny["dir"] / "w.safetensors").read_bytes())
    with pytest.warns(UserWarning, match="QuickGELU"):
        resolve_model(f"openclip:fb-tiny-gelu:{named}", device="cpu")


def test_bad_specs_are_named(tiny, tmp_path):
    missing = tmp_path / "nope.safetensors"
    with pytest.raises(ModelError, match=str(missing)):
        resolve_model(f"openclip:fb-tiny-gelu:{missing}", device="cpu")
    with pytest.raises(ModelError, match="ViT-B-32"):
        resolve_model("openclip:ViT-B-3:laion2b_s34b_b79k", device="cpu")
    with pytest.raises(ModelError, match="laion2b_s34b_b79k"):
        resolve_model("openclip:ViT-B-32:no-such-tag", device="cpu")
    with pytest.raises(ModelError, match="must be"):
        resolve_model("openclip:ViT-B-32", device="cpu")
    with pytest.raises(ModelError, match="score"):
        resolve_model(f"openclip:{tiny['cfg']}?score=nope", device="cpu")


def test_unknown_name_lists_close_matches():
    with pytest.raises(UnknownNameError, match=r"Did you mean: foilbench-plain"):
        resolve_model("foilbench-plian")


def test_unknown_scheme_lists_close_matches():
    with pytest.raises(UnknownNameError, match=r"Did you mean: .*openclip:\.\.\."):
        resolve_model("openclp:ViT-B-32:openai")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_cuda_without_gpu_is_a_clear_error(tiny):
    with pytest.raises(ModelError, match="no CUDA GPU"):
        resolve_model(f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.pt'}", device="cuda")


def test_odd_images_are_converted_and_huge_ones_refused_by_name(tiny):
    adapter = resolve_model(f"openclip:{tiny['cfg']}:{tiny['dir'] / 'w.pt'}", device="cpu")
    rgb = tiny_images(1)[0]
    odd = [rgb.convert("L"), rgb.convert("CMYK"), rgb.convert("RGBA"),
           Image.fromarray(np.asarray(rgb.convert("L"), dtype=np.uint16) * 257).convert("I;16")]
    emb = adapter.embed_images(odd)
    assert emb.shape == (4, 16) and np.isfinite(emb).all()
    # 16-bit grey scaled to 8 bits equals the 8-bit grey image
    np.testing.assert_allclose(emb[3], emb[0], atol=1e-5)
    huge = Image.new("L", (8200, 8200))
    huge.filename = "/data/scans/huge.png"
    with pytest.raises(ModelError, match="huge.png"):
        adapter.embed_images([huge])


def test_weight_hash_is_cached_by_path_size_mtime(tiny, tmp_path):
    weights = tmp_path / "w.bin"
    weights.write_bytes(b"abc")
    cache = tmp_path / "c"
    real = file_sha256(weights, cache_dir=cache)
    assert real == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    table = json.loads((cache / HASH_CACHE_FILE).read_text())
    table[str(weights.resolve())]["sha256"] = "planted"
    (cache / HASH_CACHE_FILE).write_text(json.dumps(table))
    assert file_sha256(weights, cache_dir=cache) == "planted"  # served from the cache
    weights.write_bytes(b"abcd")  # size changes -> re-hashed
    assert file_sha256(weights, cache_dir=cache) != "planted"


def test_no_weights_config_warns_random_init(tiny):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        adapter = resolve_model(f"openclip:{tiny['cfg']}", device="cpu")
    assert any("randomly initialised" in str(w.message) for w in seen)
    assert adapter.info.extras["weights_sha256"] is None


def test_hub_spec_offline_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="foilbench-test/not-cached"):
        resolve_model("openclip:hf-hub:foilbench-test/not-cached", device="cpu")


class _NotATensor:
    pass


def test_pickled_objects_in_pt_files_are_refused(tiny, tmp_path):
    evil = tmp_path / "evil.pt"
    torch.save({"state_dict": dict(tiny["model"].state_dict()), "extra": _NotATensor()}, evil)
    with pytest.raises(ModelError, match="evil.pt"):
        resolve_model(f"openclip:fb-tiny-gelu:{evil}", device="cpu")
