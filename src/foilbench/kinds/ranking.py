"""R@1 over one positive and K negatives: what ``choice`` and ``image_choice`` share.

``scores[n, 0]`` is the positive, ``scores[n, 1:]`` the K negatives (K may vary per item; the
matrix is padded with ``-inf``, which never beats the positive).

    R@1(n) = [scores[n, 0] > max_k scores[n, k]]   ; chance 1 / (K + 1)

SugarCrepe App. D.4: "Given an image, a model is required to select the positive text that
correctly describes the image, against another hard negative text distractor" (K = 1, chance
1/2). Auto-Comp Table 5 generalises to K negatives: "Random-chance baselines for Swap are 50.0%
/ 16.7% at N=2 / N=3", i.e. 1 / (K + 1) with K = N! - 1. The papers are silent on ties; we
score them as failures (strict >) and count them.

Margin: s(positive) - max_k s(negative_k), > 0 exactly when R@1 is correct.

API protocol: only K = 1 (one two-option question, asked in both orders), the two rules of
:mod:`foilbench.kinds.pair`: averaged, R@1 = a(the question) with chance 1/2; no partial credit
(CompoSET §3), ``r1_no_partial`` = [right in both orders] with chance 1/4.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import ClassVar

import numpy as np

from foilbench.kinds.base import ItemKind


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


def choice_margins(scores: np.ndarray) -> np.ndarray:
    """s(positive) - max_k s(negative_k); pads (-inf or NaN, ragged K) are ignored.

    >>> choice_margins(np.array([[0.5, 0.2, -np.inf]])).round(3).tolist()
    [0.3]
    """
    s = np.asarray(scores, np.float64)
    return s[:, 0] - np.nanmax(s[:, 1:], axis=1)


class RankingKind(ItemKind):
    """One positive among K + 1 candidates, positive first: R@1."""

    metrics: ClassVar[tuple[str, ...]] = ("r1",)
    default_metric = "r1"
    api_ask_count = 1

    def outcomes(self, matrix, n_slots):
        r1 = choice_outcomes(matrix).astype(np.float64)
        return {"r1": r1}, {"r1": choice_ties(matrix)}, {"r1": choice_chance(n_slots)}

    def margins(self, matrix):
        return {"r1": choice_margins(matrix)}

    def frame_fits(self, columns: Collection[str], score_lengths: Sequence[int]) -> bool:
        # any positive-first score vector reads as a ranking (the fallback for other frames)
        return True

    def api_outcomes(self, correct):
        a = np.asarray(correct, np.float64).reshape(-1, self.api_ask_count)
        return ({"r1": a[:, 0], "r1_no_partial": (a[:, 0] == 1.0).astype(np.float64)},
                {"r1": np.full(len(a), 0.5), "r1_no_partial": np.full(len(a), 0.25)})
