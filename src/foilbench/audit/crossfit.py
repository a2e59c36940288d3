"""Cross-fitting: a blind scorer's decision rule is fitted on K-1 folds and applied to the
held-out fold, so reported accuracy is what an adversary could exploit without peeking.

A scorer maps every caption to one number f(c). The decision rule is a sign s in {+1, -1}
fitted per edit type on the training folds: the item is scored correct when

    s f(positive) > max_k s f(negative_k)        (strict: a tie is a failure, and counted)

s is the sign with the higher training accuracy (+1 when equal); an edit type absent from the
training folds falls back to the sign fitted on all training items. Folds are drawn over
clusters (scenes or images), never splitting one cluster between train and test.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

SIGNS = (1.0, -1.0)


def group_folds(groups: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Fold id in [0, k) per row; all rows of one group share a fold; groups are shuffled with
    ``seed`` and dealt round-robin so fold sizes (in groups) differ by at most one."""
    groups = np.asarray(groups).astype(str)
    uniq, codes = np.unique(groups, return_inverse=True)
    if k < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, got {k}")
    if len(uniq) < k:
        raise ValueError(f"{k} folds asked but only {len(uniq)} clusters to split")
    order = np.random.default_rng(seed).permutation(len(uniq))
    fold_of_group = np.empty(len(uniq), dtype=np.int64)
    fold_of_group[order] = np.arange(len(uniq)) % k
    return fold_of_group[codes]


def decide(features: np.ndarray, sign: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Per item (correct, tie) under ``sign``: positive is column 0; NaN marks a missing
    negative (never beats the positive)."""
    f = np.asarray(features, dtype=np.float64) * np.asarray(sign, dtype=np.float64).reshape(-1, 1)
    neg = np.where(np.isnan(f[:, 1:]), -np.inf, f[:, 1:]).max(axis=1)
    pos = f[:, 0]
    return pos > neg, pos == neg


def fit_signs(features: np.ndarray, strata: np.ndarray) -> dict[str, float]:
    """The best sign per stratum plus ``"*"`` (all rows), by training accuracy."""
    out: dict[str, float] = {}
    labels = np.asarray(strata).astype(str)
    for name, mask in [("*", np.ones(len(labels), bool))] + [
        (s, labels == s) for s in np.unique(labels)
    ]:
        acc = [decide(features[mask], s)[0].mean() for s in SIGNS]
        out[name] = SIGNS[int(np.argmax(acc))]  # argmax keeps +1 on equal accuracy
    return out


FeatureFn = Callable[[np.ndarray], np.ndarray]
"""Given a boolean training mask over items, return the (n, K+1) feature matrix for all items
(a scorer that learns, like the n-gram LM, trains only on the masked items)."""


def direction_given(feature_fn: FeatureFn) -> bool:
    """True for a scorer whose larger value already means "this caption is the positive", so
    no sign is fitted: probabilities of being right (``bounded``) and a model's own choice
    among the options (``own_choice``, Auto-Comp App. A.8's blind LLM)."""
    return bool(getattr(feature_fn, "bounded", False) or getattr(feature_fn, "own_choice",
                                                                 False))


def heldout_features(feature_fn: FeatureFn, strata: np.ndarray, folds: np.ndarray,
                     fit_sign: bool | None = None) -> np.ndarray:
    """The (n, K+1) features of each fold computed and oriented (multiplied by the fitted
    sign) using only the other folds: larger now always means "this scorer says positive".

    A scorer whose values are probabilities of being right (``feature_fn.bounded``: a grammar
    or plausibility classifier) is not sign-fitted: SugarCrepe App. D.3, "If M(p_i) > M(n_i),
    then the model could identify the correct caption for the i-th image without referring to
    it", so its direction is given, not learned. The same holds for a model's own choice
    (``feature_fn.own_choice``, :func:`direction_given`). ``fit_sign`` overrides: True fits a
    sign even then (the cross-fitted reading of a multiple-choice model), False never fits."""
    strata = np.asarray(strata).astype(str)
    bounded = not fit_sign if fit_sign is not None else direction_given(feature_fn)
    oriented = None
    for fold in np.unique(folds):
        test = folds == fold
        feats = feature_fn(~test)
        if oriented is None:
            oriented = np.full(feats.shape, np.nan)
        if bounded:
            oriented[test] = feats[test]
            continue
        signs = fit_signs(feats[~test], strata[~test])
        sign = np.array([signs.get(s, signs["*"]) for s in strata[test]])
        oriented[test] = feats[test] * sign[:, None]
    return oriented


def crossfit(feature_fn: FeatureFn, strata: np.ndarray, folds: np.ndarray,
             fit_sign: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Held-out (correct, tie) per item, each fold scored by rules fitted on the others."""
    return decide(heldout_features(feature_fn, strata, folds, fit_sign), 1.0)


def gather(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Per-text values -> the (n, K+1) feature matrix, NaN where the index is -1."""
    out = np.asarray(values, dtype=np.float64)[np.maximum(index, 0)]
    out[index < 0] = np.nan
    return out
