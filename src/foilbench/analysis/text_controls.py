"""Caption-level dataset controls: how far a foil caption deviates from its base caption
(CompoSET section 4 and App. F), reported per verbosity tier.

For token sequences a (base) and b (foil) of CLIP BPE tokens (open_clip's tokenizer, without the
start and end tokens):
- Levenshtein distance lev(a, b): the fewest single-token insertions, deletions and
  substitutions (each cost 1) turning a into b (Levenshtein 1966).
- fraction of tokens changed = lev(a, b) / max(|a|, |b|) (0 for two empty captions); in [0, 1].
- sentence cosine: CompoSET App. F.2 uses "sentence-embedding cosine using all-mpnet-base-v2";
  with a local copy named (``text_model``, :mod:`foilbench.analysis.text_encoders`) the column
  is ``sentence_cosine``. Without one, the labelled fallback ``minilm_cosine``: cosine of the
  all-MiniLM-L6-v2 sentence embeddings (sentence-transformers, from ``$FOILBENCH_MINILM`` or
  the Hub name ``sentence-transformers/all-MiniLM-L6-v2``, loaded on first use:
  :func:`foilbench.models.text_models.minilm`); not the paper's encoder, so not the paper's
  numbers.
Longer captions around the same edit phrase should show a smaller fraction changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from foilbench.models.text_models import clip_bpe, minilm


def levenshtein(a: Sequence, b: Sequence) -> int:
    """Edit distance between two token sequences (unit costs), one numpy row per token of a.

    Row recurrence: D[i, j] = min(D[i-1, j] + 1, D[i-1, j-1] + [a_i != b_j], D[i, j-1] + 1).
    The last (within-row) term is resolved without a Python loop: with
    c_j = min(D[i-1, j] + 1, D[i-1, j-1] + [a_i != b_j]), D[i, j] = min_{k <= j}(c_k + j - k)
    = j + cumulative-min(c_k - k).

    >>> levenshtein("kitten", "sitting")
    3
    """
    a, b = list(a), list(b)
    if not a or not b:
        return max(len(a), len(b))
    b_arr = np.asarray(b, dtype=object)
    idx = np.arange(len(b) + 1)
    prev = idx.copy()
    for i, tok in enumerate(a, start=1):
        cost = (b_arr != tok).astype(np.int64)
        c = np.empty(len(b) + 1, dtype=np.int64)
        c[0] = i
        c[1:] = np.minimum(prev[1:] + 1, prev[:-1] + cost)
        prev = np.minimum.accumulate(c - idx) + idx
    return int(prev[-1])


def fraction_changed(a: Sequence, b: Sequence) -> float:
    """lev(a, b) / max(|a|, |b|); 0.0 when both are empty."""
    n = max(len(a), len(b))
    return levenshtein(a, b) / n if n else 0.0




def bpe_tokens(text: str) -> list[int]:
    """CLIP BPE token ids of ``text`` (open_clip's ViT-B-32 vocabulary; no start/end tokens)."""
    return clip_bpe().encode(text)




def minilm_cosines(texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
    """Row-wise cosine of MiniLM sentence embeddings; each unique text is encoded once."""
    unique = list(dict.fromkeys([*texts_a, *texts_b]))
    emb = np.asarray(minilm().encode(unique, normalize_embeddings=True), dtype=np.float64)
    pos = {t: k for k, t in enumerate(unique)}
    ea = emb[[pos[t] for t in texts_a]]
    eb = emb[[pos[t] for t in texts_b]]
    return np.einsum("nd,nd->n", ea, eb)


def text_deviation(base: Sequence[str], foil: Sequence[str], minilm: bool = True,
                   text_model=None) -> dict:
    """Per-pair columns: BPE token counts, Levenshtein, fraction changed, and the sentence
    cosine: ``sentence_cosine`` under ``text_model`` (a local directory or an encoder with
    ``encode``) when given, else ``minilm_cosine`` (the fallback) when ``minilm``."""
    tok_a = [bpe_tokens(t) for t in base]
    tok_b = [bpe_tokens(t) for t in foil]
    out = {
        "tokens_base": np.array([len(t) for t in tok_a]),
        "tokens_foil": np.array([len(t) for t in tok_b]),
        "token_levenshtein": np.array([levenshtein(x, y) for x, y in zip(tok_a, tok_b,
                                                                         strict=True)]),
        "token_change_fraction": np.array([fraction_changed(x, y) for x, y in zip(tok_a, tok_b,
                                                                                  strict=True)]),
    }
    if text_model is not None:
        from foilbench.analysis.text_encoders import SentenceEncoder, pair_cosines

        encoder = (SentenceEncoder(text_model) if isinstance(text_model, (str, Path))
                   else text_model)
        out["sentence_cosine"] = pair_cosines(encoder, list(base), list(foil))
    elif minilm:
        out["minilm_cosine"] = minilm_cosines(list(base), list(foil))
    return out
