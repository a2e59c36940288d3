"""hf: adapter (CLIP, SigLIP) against the transformers model's own forward on tiny models."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers  # noqa: F401  (the hf extra is a test dependency)

from _models_tiny import clip_bpe_files, save_tiny_hf_dual, tiny_images  # noqa: E402
from foilbench.errors import ModelError  # noqa: E402
from foilbench.models.registry import resolve_model  # noqa: E402

TEXTS = ["a red cube", "a blue sphere left of a red cube", "three green cones"]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("clip")
    return save_tiny_hf_dual(root / "model", "clip", root / "tok")


@pytest.fixture(scope="module")
def siglip_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("siglip")
    return save_tiny_hf_dual(root / "model", "siglip", root / "tok")


@pytest.fixture(scope="module")
def siglip2_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("siglip2")
    return save_tiny_hf_dual(root / "model", "siglip2", root / "tok")


@pytest.fixture(params=["clip", "siglip", "siglip2"])
def tiny_dir(request):
    return request.param, request.getfixturevalue(f"{request.param}_dir")


def model_logits(folder, images, texts, padding):
    """logits_per_image[i, t] straight from the transformers model."""
    from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(folder).eval()
    tok = AutoTokenizer.from_pretrained(folder)
    proc = AutoImageProcessor.from_pretrained(folder)
    enc = tok(texts, padding=padding, truncation=True, return_tensors="pt")
    kwargs = {"input_ids": enc["input_ids"], **proc(images=images, return_tensors="pt")}
    if padding == "longest":
        kwargs["attention_mask"] = enc["attention_mask"]
    with torch.no_grad():
        out = model(**kwargs)
    return out.logits_per_image.numpy().astype(np.float64), model


def test_scores_match_the_model_forward(tiny_dir):
    kind, folder = tiny_dir
    images = tiny_images(3)
    padding = "longest" if kind == "clip" else "max_length"
    logits, model = model_logits(folder, images, TEXTS, padding)
    diag = np.diag(logits)
    default = resolve_model(f"hf:{folder}", device="cpu")
    im, tx = default.embed_images(images), default.embed_texts(TEXTS)
    got = default.pair_scores(im, tx)
    if kind == "clip":
        assert default.info.score_kind == "cosine"
        np.testing.assert_allclose(got, diag / model.logit_scale.exp().item(), atol=1e-5)
    else:
        assert default.info.score_kind == "sigmoid"
        np.testing.assert_allclose(got, 1 / (1 + np.exp(-diag)), atol=1e-5)
    as_logit = resolve_model(f"hf:{folder}?score=logit", device="cpu")
    np.testing.assert_allclose(as_logit.pair_scores(im, tx), diag, atol=1e-4)
    cosine = resolve_model(f"hf:{folder}?score=cosine", device="cpu")
    np.testing.assert_allclose(cosine.pair_scores(im, tx), (im * tx).sum(1), atol=1e-5)
    assert as_logit.info.fingerprint != cosine.info.fingerprint
    # the default is the same scorer as naming its kind explicitly, so it shares the fingerprint
    explicit = resolve_model(f"hf:{folder}?score={default.info.score_kind}", device="cpu")
    assert explicit.info.fingerprint == default.info.fingerprint


def test_siglip_default_is_sigmoid_of_scaled_biased_cosine(siglip_dir):
    sig = resolve_model(f"hf:{siglip_dir}", device="cpu")
    im, tx = sig.embed_images(tiny_images(3)), sig.embed_texts(TEXTS)
    cos = (im * tx).sum(1)
    np.testing.assert_allclose(sig.pair_scores(im, tx), 1 / (1 + np.exp(-(np.exp(2.0) * cos - 3))),
                               atol=1e-6)


def test_fingerprint_tracks_weights(tiny_dir, tmp_path):
    kind, folder = tiny_dir
    a = resolve_model(f"hf:{folder}", device="cpu").info
    assert "model.safetensors" in a.extras["local_files_sha256"]
    from transformers import AutoModel

    model = AutoModel.from_pretrained(folder)
    with torch.no_grad():
        model.logit_scale.add_(0.5)
    copy = tmp_path / "copy"
    model.save_pretrained(copy)
    for name in ("vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json",
                 "preprocessor_config.json", "tokenizer.json"):
        if (folder / name).exists():
            (copy / name).write_bytes((folder / name).read_bytes())
    b = resolve_model(f"hf:{copy}", device="cpu").info
    assert a.fingerprint != b.fingerprint


def test_missing_folder_is_named(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelError, match=str(missing)):
        resolve_model(f"hf:{missing}", device="cpu")
    with pytest.raises(ModelError, match="score"):
        resolve_model(f"hf:{missing}?score=probability", device="cpu")


def test_hub_id_offline_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="HF_HUB_OFFLINE"):
        resolve_model("hf:foilbench-test/not-cached-anywhere", device="cpu")


def test_clip_tokenizer_from_open_clip_vocab_gives_open_clip_ids(tmp_path):
    import open_clip
    from transformers import CLIPTokenizer

    vocab, merges = clip_bpe_files(tmp_path)
    tok = CLIPTokenizer(str(vocab), str(merges))
    ours = tok("a red cube left of two spheres")["input_ids"]
    theirs = open_clip.get_tokenizer("ViT-B-32")(["a red cube left of two spheres"])[0]
    assert ours == theirs[: len(ours)].tolist()
