"""Model families as base classes: dispatch by type, the legacy string, the batched base, and
model schemes from plugins."""

from __future__ import annotations

import importlib.metadata
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from PIL import Image

from _core_helpers import ColourEncoder, colour_pair_folder
from foilbench.data.format import load_benchmark
from foilbench.errors import ModelError
from foilbench.models.base import (
    ApiChoiceModel,
    DualEncoder,
    ModelInfo,
    PairwiseScorer,
    family_of,
)
from foilbench.models.batched import (
    TRIMMED_TEXT_FACTOR,
    BatchedDualEncoder,
    forward_batch_size,
)
from foilbench.models.registry import model_schemes, resolve_model
from foilbench.scoring.engine import evaluate


def test_family_by_class():
    assert family_of(ColourEncoder()) is DualEncoder
    assert ColourEncoder().family == "dual" and PairwiseScorer.family == "pairwise"
    assert ApiChoiceModel.family == "api_choice"


def test_legacy_family_string_still_works_with_a_warning(tmp_path):
    class Legacy:  # a third-party adapter written before the base classes
        family = "dual"

        def __init__(self):
            self.inner = ColourEncoder(fingerprint="legacy")
            self.info = self.inner.info

        def embed_images(self, images):
            return self.inner.embed_images(images)

        def embed_texts(self, texts):
            return self.inner.embed_texts(texts)

        def pair_scores(self, a, b):
            return self.inner.pair_scores(a, b)

    bench = load_benchmark(colour_pair_folder(tmp_path / "b"))
    with pytest.warns(DeprecationWarning, match="Legacy sets family = 'dual'.*DualEncoder"):
        legacy = evaluate(Legacy(), bench, progress=False)
    new = evaluate(ColourEncoder(), bench, progress=False)
    assert np.array_equal(np.stack(legacy.scores), np.stack(new.scores))


def test_an_object_of_no_family_is_refused():
    with pytest.raises(ModelError, match="has family None.*subclass DualEncoder"):
        family_of(object())


class _Towers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.image = torch.nn.Linear(3, 4)
        self.text = torch.nn.Embedding(10, 4)


class ToyBatched(BatchedDualEncoder):
    """Image features from the mean colour, text features from the text length."""

    def __init__(self, batch_size: int, score: str = "cosine"):
        self.net = _Towers()
        self.batch_size, self.score, self.embed_dim = batch_size, score, 4
        self.logit_scale, self.logit_bias = 10.0, -2.0
        self.calls: list[int] = []
        self.info = ModelInfo(spec="toy", fingerprint="toy", family=self.family,
                              score_kind=score)

    def image_features(self, images, offset):
        self.calls.append(len(images))
        x = torch.tensor(np.stack([np.asarray(im, np.float32).mean((0, 1)) / 255
                                   for im in images]))
        return self.net.image(x)

    def text_features(self, texts, offset):
        self.calls.append(len(texts))
        return self.net.text(torch.tensor([len(t) % 10 for t in texts]))


def test_batched_base_chunks_normalises_and_scores():
    images = [Image.new("RGB", (4, 4), (k * 20, 0, 255 - k * 20)) for k in range(5)]
    model = ToyBatched(batch_size=2)
    emb = model.embed_images(images)
    assert model.calls == [2, 2, 1] and emb.dtype == np.float32 and emb.shape == (5, 4)
    assert np.linalg.norm(emb, axis=1) == pytest.approx(np.ones(5), abs=1e-6)
    whole = ToyBatched(batch_size=64).embed_images(images)
    assert np.abs(emb - whole).max() < 1e-6
    assert model.embed_texts([]).shape == (0, 4)
    txt = model.embed_texts(["a", "bb", "ccc", "dddd", "eeeee"])
    cos = model.pair_scores(emb, txt)
    assert cos == pytest.approx(np.einsum("nd,nd->n", emb, txt), abs=1e-6)
    model.score = "sigmoid"
    assert model.pair_scores(emb, txt) == pytest.approx(1 / (1 + np.exp(-(10 * cos - 2))))


def test_engine_never_splits_its_batches_again(tmp_path):
    bench = load_benchmark(colour_pair_folder(tmp_path / "b"))
    model = ToyBatched(batch_size=2)
    assert forward_batch_size(model, 64) == 2 and forward_batch_size(ColourEncoder(), 64) == 64
    evaluate(model, bench, batch_size=64, progress=False)
    assert max(model.calls) <= 2 and sum(model.calls) == len(bench.unique_images()) + len(
        bench.unique_texts())


class ToyTrimming(ToyBatched):
    """ToyBatched whose text batches run at their longest text (exact here: features depend
    on each text alone), so it takes twice its batch of texts per call."""

    trims_text = True

    def __init__(self, batch_size: int):
        super().__init__(batch_size)
        self.text_calls: list[int] = []

    def text_features(self, texts, offset):
        self.text_calls.append(len(texts))
        return super().text_features(texts, offset)


def test_trimmed_text_batches_hold_twice_the_batch(tmp_path):
    model = ToyTrimming(batch_size=3)
    assert model.text_batch_size() == 3 * TRIMMED_TEXT_FACTOR == 6
    assert ToyBatched(batch_size=3).text_batch_size() == 3
    assert forward_batch_size(model, 64) == 3
    assert forward_batch_size(model, 64, texts=True) == 6
    assert forward_batch_size(model, 4, texts=True) == 4  # the run's batch still caps
    texts = [f"caption {'x' * (k % 7)}" for k in range(14)]
    out = model.embed_texts(texts)
    assert model.text_calls == [6, 6, 2]
    ref = ToyBatched(batch_size=64).embed_texts(texts)
    assert np.abs(out - ref).max() < 1e-6  # batching changes the calls, not the features

    bench = load_benchmark(colour_pair_folder(tmp_path / "b"))
    model = ToyTrimming(batch_size=1)
    evaluate(model, bench, batch_size=64, progress=False)
    n_texts = len(bench.unique_texts())
    assert n_texts > 2 and sum(model.text_calls) == n_texts
    assert max(model.text_calls) == 2  # texts two per call; images one
    assert len(model.calls) - len(model.text_calls) == len(bench.unique_images())


def test_model_scheme_from_an_entry_point(monkeypatch):
    real = importlib.metadata.entry_points
    plugin = SimpleNamespace(name="toyscheme", value="test_models_families:toy_from_spec",
                             dist=SimpleNamespace(name="foilbench-toy-plugin"))

    def fake_entry_points(**kwargs):
        if kwargs.get("group") == "foilbench.model_schemes":
            return [plugin]
        return real(**kwargs)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    model_schemes.cache_clear()
    try:
        assert "toyscheme" in model_schemes().names()
        model = resolve_model("toyscheme:8", device="cpu")
        assert isinstance(model, BatchedDualEncoder) and model.batch_size == 8
        assert "plugin from foilbench-toy-plugin" in model_schemes().entry("toyscheme").description
    finally:
        model_schemes.cache_clear()


def toy_from_spec(rest: str, device: str = "auto", dtype: str = "float32") -> ToyBatched:
    """The plugin's scheme factory: ``toyscheme:BATCH``."""
    return ToyBatched(batch_size=int(rest))
