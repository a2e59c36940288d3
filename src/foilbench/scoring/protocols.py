"""Per-item outcomes under the strict ``>`` tie policy (a tie is a failure).

Pair items (CompoSET Eq. 1-3, after Winoground). ``sims[n, c, i]`` is the score of caption
``c`` with image ``i``; index 0 is the base, 1 the foil.

    I2T(n)   = [s(c0,i0) > s(c1,i0)] and [s(c1,i1) > s(c0,i1)]        (Eq. 1)
    T2I(n)   = [s(c0,i0) > s(c0,i1)] and [s(c1,i1) > s(c1,i0)]        (Eq. 2)
    Group(n) = I2T(n) and T2I(n)                                       (Eq. 3)

Chance for a random score: 1/4, 1/4 and 1/6 (the correct matching must rank first among
the 4! orderings of the four scores: 4 of 24 orderings satisfy both directions).

Choice items: ``scores[n, 0]`` is the positive, ``scores[n, 1:]`` the K negatives.

    R@1(n) = [scores[n, 0] > max_k scores[n, k]]   ; chance 1 / (K + 1)

Ragged K is handled by padding negatives with ``-inf``, which never beats the positive.
"""

from __future__ import annotations

import numpy as np

PAIR_CHANCE = {"i2t": 1 / 4, "t2i": 1 / 4, "group": 1 / 6}
TIE_POLICY = "strict>"


def _as_pair_sims(sims: np.ndarray) -> np.ndarray:
    sims = np.asarray(sims, dtype=np.float64)
    if sims.ndim != 3 or sims.shape[1:] != (2, 2):
        raise ValueError(f"pair sims must have shape (n, 2, 2) [caption, image], got {sims.shape}")
    return sims


def pair_outcomes(sims: np.ndarray) -> dict[str, np.ndarray]:
    """Boolean I2T, T2I and Group outcomes (Eq. 1-3) for ``sims`` of shape (n, 2, 2).

    >>> import numpy as np
    >>> out = pair_outcomes(np.array([[[0.9, 0.2], [0.1, 0.8]]]))
    >>> bool(out["i2t"][0]), bool(out["t2i"][0]), bool(out["group"][0])
    (True, True, True)
    """
    s = _as_pair_sims(sims)
    c0i0, c0i1, c1i0, c1i1 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 0], s[:, 1, 1]
    i2t = (c0i0 > c1i0) & (c1i1 > c0i1)
    t2i = (c0i0 > c0i1) & (c1i1 > c1i0)
    return {"i2t": i2t, "t2i": t2i, "group": i2t & t2i}


def pair_ties(sims: np.ndarray) -> dict[str, np.ndarray]:
    """Per item: whether an exact tie in a comparison the metric uses was scored a failure."""
    s = _as_pair_sims(sims)
    c0i0, c0i1, c1i0, c1i1 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 0], s[:, 1, 1]
    i2t = (c0i0 == c1i0) | (c1i1 == c0i1)
    t2i = (c0i0 == c0i1) | (c1i1 == c1i0)
    return {"i2t": i2t, "t2i": t2i, "group": i2t | t2i}


def pair_chance(n: int) -> dict[str, np.ndarray]:
    return {m: np.full(n, p) for m, p in PAIR_CHANCE.items()}


def _as_choice_scores(scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError(f"choice scores must have shape (n, K+1) with K >= 1, got {scores.shape}")
    if np.isnan(scores).any():
        raise ValueError("choice scores contain NaN")
    return scores


def choice_outcomes(scores: np.ndarray) -> np.ndarray:
    """R@1: the positive (column 0) strictly above every negative.

    >>> import numpy as np
    >>> choice_outcomes(np.array([[0.5, 0.4, 0.1], [0.5, 0.5, 0.1]])).tolist()
    [True, False]
    """
    s = _as_choice_scores(scores)
    return s[:, 0] > s[:, 1:].max(axis=1)


def choice_ties(scores: np.ndarray) -> np.ndarray:
    """Per item: the positive equals the best negative (scored a failure)."""
    s = _as_choice_scores(scores)
    return s[:, 0] == s[:, 1:].max(axis=1)


def choice_chance(n_candidates: np.ndarray) -> np.ndarray:
    """Per-item chance 1 / (K + 1) from the number of candidates K + 1."""
    return 1.0 / np.asarray(n_candidates, dtype=np.float64)


def pad_ragged(rows: list[np.ndarray]) -> np.ndarray:
    """Stack variable-length score rows, padding with -inf (a pad never beats the positive)."""
    width = max(len(r) for r in rows)
    out = np.full((len(rows), width), -np.inf)
    for k, r in enumerate(rows):
        out[k, : len(r)] = r
    return out
