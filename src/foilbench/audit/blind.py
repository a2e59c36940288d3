"""Blind text-only baselines (SugarCrepe section 3): can a scorer that never sees the image
pick the positive caption? Accuracy above chance means the benchmark is hackable from text.

A scorer's decision rule is cross-fitted (see :mod:`foilbench.audit.crossfit`): fitted on K-1
folds of clusters, applied to the held-out fold -- except where the direction is given. A
probability of being right (``hf:`` classifiers, SugarCrepe App. D.3) is read as it is. A
multiple-choice LLM (``mc:``, Auto-Comp App. A.8) is scored by the paper's rule, its own
choice: "We tasked Gemma-3-12b-it with selecting the correct caption", reported "at
near-random chance (51.2% on Swap)" (Auto-Comp §5). An LLM that never picks the positive
scores 0 there; a fitted sign would turn it round to 100%. The cross-fitted reading of an
``mc:`` scorer stays available (``mc_reading="crossfit"``) and is labelled in ``rule``.
Intervals are Wilson 95%; chance is the mean of 1/(K_i+1) over items. Ties are failures and
are counted under ``flags``.

Output shape (``foilbench audit blind --json``)::

    {"scorers": {NAME: {"overall": STAT, "by_type": {EDIT_TYPE: STAT}, "rule": RULE}},
     "flags": {"same_bag_of_words": {EDIT_TYPE: count}, "ties:NAME": {EDIT_TYPE: count}}}

with STAT = {"accuracy", "n", "ci_low", "ci_high", "chance"} and RULE one of
:data:`RULES`' values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from foilbench.audit.crossfit import crossfit, decide, group_folds, heldout_features
from foilbench.audit.scorers import CHEAP_SCORERS, DEFAULT_SCORERS, resolve_scorer
from foilbench.audit.text import (
    choice_captions,
    cluster_labels,
    edit_types,
    is_blind_auditable,
    pad_captions,
    same_bag_of_words,
)
from foilbench.data.format import Benchmark
from foilbench.stats import wilson_ci

#: a scorer rule (not an item kind): the multiple-choice LLM's own choice decides
OWN_CHOICE = "choice"
MC_READINGS = (OWN_CHOICE, "crossfit")
RULES = {"choice": "own choice (Auto-Comp App. A.8)",
         "crossfit": "cross-fitted sign",
         "given": "probability, no sign fitted (SugarCrepe App. D.3)"}


def scorer_rule(feature_fn, mc_reading: str = "choice") -> str:
    """Which rule scores this feature function: a key of :data:`RULES`."""
    if mc_reading not in MC_READINGS:
        raise ValueError(f"mc_reading must be one of {', '.join(MC_READINGS)}, "
                         f"got {mc_reading!r}")
    if getattr(feature_fn, "own_choice", False):
        return mc_reading
    return "given" if getattr(feature_fn, "bounded", False) else "crossfit"


def accuracy_stat(correct: np.ndarray, chance: np.ndarray) -> dict[str, float]:
    """STAT for a boolean outcome vector: accuracy with its Wilson interval and chance."""
    correct = np.asarray(correct, bool)
    n = len(correct)
    k = int(correct.sum())
    lo, hi = wilson_ci(k, n)
    return {"accuracy": k / n, "n": n, "ci_low": lo, "ci_high": hi,
            "chance": float(np.mean(chance))}


def by_type(types: np.ndarray, fn) -> dict[str, Any]:
    """``fn(mask)`` for each edit type's boolean mask, keyed by edit type (sorted)."""
    return {t: fn(np.asarray(types) == t) for t in sorted(set(types.tolist()))}


def same_bag_flags(captions: list[list[str]], types: np.ndarray) -> dict[str, int]:
    """Per edit type, the items where some negative is the positive's words re-ordered."""
    flagged = np.array([any(same_bag_of_words(c[0], n) for n in c[1:]) for c in captions])
    return by_type(types, lambda m: int(flagged[m].sum()))


def blind_audit_captions(captions: list[list[str]], types: np.ndarray, clusters: np.ndarray,
                         scorers: Sequence[str] = DEFAULT_SCORERS, folds: int = 5,
                         seed: int = 0, factories: dict | None = None,
                         mc_reading: str = "choice") -> dict[str, Any]:
    """The blind audit on plain caption lists (positive first); see the module docstring.

    ``factories`` may map a scorer name to a ready factory (tests, cached embeddings).
    ``mc_reading``: ``"choice"`` (the paper's: a multiple-choice LLM is right when its own
    top option is the positive, no folds) or ``"crossfit"`` (its sign fitted like any
    scorer's, foilbench's reading).
    """
    if len(captions) == 0:
        raise ValueError("blind audit: no items")
    scorer_rule(None, mc_reading)  # a bad reading fails before any model loads
    types = np.asarray(types).astype(str)
    texts, index = pad_captions(captions)
    chance = 1.0 / (index >= 0).sum(axis=1)
    fold_ids = None
    result: dict[str, Any] = {"scorers": {}, "flags": {}}
    result["flags"]["same_bag_of_words"] = same_bag_flags(captions, types)
    for name in scorers:
        factory = (factories or {}).get(name) or resolve_scorer(name)
        feature_fn = factory(texts, index)
        rule = scorer_rule(feature_fn, mc_reading)
        if rule == OWN_CHOICE:
            correct, tie = decide(feature_fn(np.ones(len(index), bool)), 1.0)
        else:
            if fold_ids is None:  # only rules that are fitted (or given per fold) need folds
                fold_ids = group_folds(clusters, folds, seed)
            correct, tie = crossfit(feature_fn, types, fold_ids, fit_sign=rule == "crossfit")
        result["scorers"][name] = {
            "overall": accuracy_stat(correct, chance),
            "by_type": by_type(types, lambda m, c=correct: accuracy_stat(c[m], chance[m])),
            "rule": RULES[rule],
        }
        result["flags"][f"ties:{name}"] = by_type(types, lambda m, t=tie: int(t[m].sum()))
    return result


def blind_audit(bench: Benchmark, scorers: Sequence[str] = DEFAULT_SCORERS, folds: int = 5,
                seed: int = 0, max_options: int | None = None,
                mc_reading: str = "choice") -> dict[str, Any]:
    """Blind audit of a ``choice`` benchmark, folds grouped by scene or image; with
    ``max_options`` each item keeps the positive and at most ``max_options - 1`` seeded
    negatives (Auto-Comp App. A.8, :mod:`foilbench.audit.blind_options`); ``mc_reading`` as
    in :func:`blind_audit_captions`."""
    from foilbench.audit.blind_options import subsample_options

    captions = subsample_options(choice_captions(bench), max_options, seed)
    return blind_audit_captions(captions, edit_types(bench), cluster_labels(bench), scorers,
                                folds, seed, mc_reading=mc_reading)


def reference_rows(bench: Benchmark, folds: int = 5, seed: int = 0) -> dict[str, dict]:
    """Blind reference row for ``foilbench run``: ``{"r1": STAT + {"scorer": NAME}}`` with the
    higher overall accuracy of the cheap cross-fitted scorers (length, ngram).

    Taking the better of two held-out scores is mildly optimistic; it is a reference line, not
    a test. Benchmarks that are not ``choice`` get ``{}`` (no text-only baseline exists: both
    pair captions are correct for one image each).
    """
    if not is_blind_auditable(bench):
        return {}
    try:
        audit = blind_audit(bench, CHEAP_SCORERS, folds, seed)
    except ValueError:  # fewer clusters than folds: too small for a cross-fitted reference
        return {}
    return reference_from_audit(audit)


def reference_from_audit(audit: dict[str, Any]) -> dict[str, dict]:
    """The reference row of an audit: the scorer with the higher overall accuracy (the first
    one on a tie), as ``{"r1": STAT + {"scorer": NAME}}``."""
    name, entry = max(audit["scorers"].items(), key=lambda kv: kv[1]["overall"]["accuracy"])
    return {"r1": {**entry["overall"], "scorer": name}}


def oriented_gaps(captions: list[list[str]], types: np.ndarray, clusters: np.ndarray,
                  scorer: str, folds: int = 5, seed: int = 0) -> np.ndarray:
    """Per item the held-out gap f(positive) - max_k f(negative_k) of the cross-fitted,
    sign-oriented feature (> 0: the scorer picks the positive), in [-1, 1]. Input for
    :func:`foilbench.audit.refinement.refine`. Held-out matters: an n-gram LM scored on its
    own training captions would favour every positive.

    A scorer whose values are probabilities (``bounded``, e.g. ``hf:`` classifiers such as the
    paper's grammar model, or a plausibility model like Vera exported as one) gives SugarCrepe
    App. D.3's raw gap "g_i = M(p_i) - M(n_i)", whose range "is [-1, 1]": no sign is fitted and
    nothing is rescaled, so a negative the model prefers keeps its negative gap (with K > 1
    negatives, the best-scored one). Any other scorer (foilbench's offline stand-ins
    ``length`` and ``ngram``, or ``lm:``) is oriented by its cross-fitted sign (foilbench's:
    these have no fixed direction) and divided by the largest |gap|. A multiple-choice LLM
    (``mc:``, its own choice) keeps its direction and is divided by the largest |gap|."""
    texts, index = pad_captions(captions)
    factory = resolve_scorer(scorer)
    feature_fn = factory(texts, index)
    if getattr(feature_fn, "bounded", False):
        raw = np.asarray(feature_fn(np.ones(len(index), bool)), np.float64)
        neg = np.where(np.isnan(raw[:, 1:]), -np.inf, raw[:, 1:]).max(axis=1)
        return np.clip(raw[:, 0] - neg, -1.0, 1.0)
    if getattr(feature_fn, "own_choice", False):
        oriented = np.asarray(feature_fn(np.ones(len(index), bool)), np.float64)
    else:
        oriented = heldout_features(feature_fn, np.asarray(types).astype(str),
                                    group_folds(clusters, folds, seed))
    neg = np.where(np.isnan(oriented[:, 1:]), -np.inf, oriented[:, 1:]).max(axis=1)
    gaps = oriented[:, 0] - neg
    scale = np.abs(gaps).max()
    return gaps / scale if scale > 0 else gaps
