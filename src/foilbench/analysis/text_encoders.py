"""Sentence encoders for the caption controls (CompoSET App. F.2), from local weights.

CompoSET App. F.2: "we compute token-level Levenshtein distance using CLIP ViT-B/32 BPE tokens,
fraction of tokens changed, and sentence-embedding cosine using all-mpnet-base-v2." The paper's
encoder is used when the user names a local copy (``foilbench audit controls --text-model
DIR``); without one, all-MiniLM-L6-v2 (:func:`foilbench.models.text_models.minilm`: a folder
in ``$FOILBENCH_MINILM`` or the Hub's ``sentence-transformers/all-MiniLM-L6-v2``) is the
labelled fallback (column ``minilm_cosine``; its cosines are not the paper's numbers).

A directory is read as a sentence-transformers model when it has ``modules.json`` and the
package is installed (its own pooling and normalisation), else as a plain transformers encoder
with mean pooling over the attention mask and L2 normalisation -- the pooling
all-mpnet-base-v2 is published with (``1_Pooling/config.json``: mean tokens):

    e(text) = sum_t m_t h_t / sum_t m_t,   cosine = e(a) . e(b) / (|e(a)| |e(b)|)

with h_t the last hidden states and m_t the attention mask. The maximum length comes from
``sentence_bert_config.json`` when present (384 for all-mpnet-base-v2), else the tokenizer's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from foilbench.errors import ModelError

PAPER_TEXT_MODEL = "all-mpnet-base-v2"


class SentenceEncoder:
    """Unit-norm sentence embeddings from a local model directory (see the module doc)."""

    def __init__(self, path: str | Path, backend: str = "auto", batch_size: int = 64) -> None:
        path = Path(path)
        if not path.is_dir():
            raise ModelError(f"text model {path}: not a local directory (a copy of "
                             f"{PAPER_TEXT_MODEL} saved by sentence-transformers or "
                             "transformers; nothing is downloaded)")
        if not (path / "config.json").is_file():
            raise ModelError(f"text model {path}: no config.json (expected a transformers or "
                             f"sentence-transformers copy of {PAPER_TEXT_MODEL})")
        if backend not in ("auto", "sentence-transformers", "transformers"):
            raise ModelError(f"text model backend must be auto, sentence-transformers or "
                             f"transformers, got {backend!r}")
        self.path = path
        self.name = path.name
        self.batch_size = batch_size
        self.is_paper_model = path.name == PAPER_TEXT_MODEL
        use_st = backend == "sentence-transformers" or (
            backend == "auto" and (path / "modules.json").is_file() and _has_st())
        if use_st:
            from sentence_transformers import SentenceTransformer

            self._st = SentenceTransformer(str(path), device="cpu", local_files_only=True)
            self.backend = "sentence-transformers"
        else:
            from transformers import AutoModel, AutoTokenizer

            self._st = None
            self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.model = AutoModel.from_pretrained(path, local_files_only=True).eval()
            self.max_length = _max_length(path, self.tokenizer)
            self.backend = "transformers-mean-pooling"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(n, d) float64 unit-norm embeddings."""
        if self._st is not None:
            emb = self._st.encode(list(texts), batch_size=self.batch_size,
                                  normalize_embeddings=True, convert_to_numpy=True,
                                  show_progress_bar=False)
            return np.asarray(emb, np.float64)
        return _normalise(np.concatenate([self._mean_pooled(list(texts[i:i + self.batch_size]))
                                          for i in range(0, len(texts), self.batch_size)])
                          if len(texts) else np.zeros((0, 0)))

    def _mean_pooled(self, texts: list[str]) -> np.ndarray:
        import torch

        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length,
                               return_tensors="pt")
        with torch.no_grad():
            hidden = self.model(**batch).last_hidden_state.float()
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return ((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)).numpy().astype(np.float64)

    def describe(self) -> dict:
        return {"name": self.name, "path": str(self.path), "backend": self.backend,
                "paper_model": self.is_paper_model}


def _has_st() -> bool:
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def _max_length(path: Path, tokenizer) -> int:
    cfg = path / "sentence_bert_config.json"
    if cfg.is_file():
        value = json.loads(cfg.read_text()).get("max_seq_length")
        if value:
            return int(value)
    limit = getattr(tokenizer, "model_max_length", 512) or 512
    return int(min(limit, 512))


def _normalise(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def pair_cosines(encoder, texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
    """Row-wise cosine of the encoder's embeddings; each unique text is encoded once."""
    unique = list(dict.fromkeys([*texts_a, *texts_b]))
    emb = _normalise(np.asarray(encoder.encode(unique), np.float64))
    pos = {t: k for k, t in enumerate(unique)}
    return np.einsum("nd,nd->n", emb[[pos[t] for t in texts_a]], emb[[pos[t] for t in texts_b]])
