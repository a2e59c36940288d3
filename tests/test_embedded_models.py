"""The shipped embedded models: they load, embed sanely, and the plain one sees colour."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from foilbench.errors import ModelError
from foilbench.models.embedded import VARIANTS, file_sha256, load_variant, model_name, weights_dir
from foilbench.models.registry import EMBEDDED_DEFAULTS, resolve_model


def test_the_registry_names_are_the_shipped_files():
    assert sorted(EMBEDDED_DEFAULTS) == sorted(model_name(v) for v in VARIANTS)
    total = 0
    for v in VARIANTS:
        path = weights_dir() / f"{model_name(v)}.safetensors"
        assert path.exists() and path.with_suffix(".json").exists()
        total += path.stat().st_size
    assert total <= 20 * 1024 * 1024  # the cap for all three together


@pytest.mark.parametrize("name", EMBEDDED_DEFAULTS)
def test_shipped_weights_give_finite_unit_embeddings(name):
    model = resolve_model(name, device="cpu")
    assert model.family == "dual" and model.info.score_kind == "cosine"
    sha = file_sha256(weights_dir() / f"{name}.safetensors")
    assert sha in model.info.fingerprint and "rgb-resize" in model.info.fingerprint
    images = [Image.new("RGB", (160, 160), (255, 255, 255)), Image.new("L", (50, 70), 30)]
    img = model.embed_images(images)
    txt = model.embed_texts(["a red cube", "a blue sphere on a white background"])
    for emb in (img, txt):
        assert emb.dtype == np.float32 and emb.shape == (2, model.net.cfg.embed_dim)
        assert np.isfinite(emb).all()
        np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    scores = model.pair_scores(img, txt)
    assert scores.shape == (2,) and (np.abs(scores) <= 1 + 1e-6).all()


def test_unknown_words_are_counted_not_fatal():
    model = load_variant("plain", device="cpu")
    emb = model.embed_texts(["a glittery cube", "a red cube"])
    assert np.isfinite(emb).all()
    assert model.stats()["unknown_words"] == {"glittery": 1}


def test_missing_weights_name_the_path(tmp_path):
    with pytest.raises(ModelError, match=str(tmp_path)):
        load_variant("plain", device="cpu", directory=tmp_path)
    with pytest.raises(ModelError, match="possible: plain, swapneg, confneg"):
        load_variant("plainest", device="cpu")


def test_plain_model_reads_colour_on_single_objects():
    """Auto-Comp-style N = 1 probe: one rendered object in each of the 14 colours and both
    conditions; the right colour must beat all 13 others. Chance is 1/14 per item, so 8 or
    more right out of 28 has probability about 0.001 under chance."""
    from foilbench.train.evaluate import n1_colour_probe

    result = n1_colour_probe(load_variant("plain", device="cpu"), n_objects_per_colour=1)
    assert result["overall"]["n"] == 28
    assert round(result["overall"]["mean"] * 28) >= 8, result
