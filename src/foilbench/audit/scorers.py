"""Blind text-only scorers: each turns the benchmark's captions into one number per caption.

A scorer factory takes ``(texts, index)`` -- the unique caption texts and the (n, K+1) matrix
of indices into them (-1 = missing negative) -- and returns a feature function: given a
boolean training mask over items it returns the (n, K+1) feature matrix (NaN where missing).
Scorers that learn (``ngram``, ``minilm``) fit only on the masked (training-fold) items.

Names: ``length``, ``ngram``, ``minilm``, ``lm:PATH`` (a local causal LM directory) and
``hf:PATH`` (any local Hugging Face sequence classifier or causal LM,
:mod:`foilbench.audit.hf_scorer`; the paper's grammar model and Vera when the user has them),
``mc:PATH`` (a local causal LM choosing among the shuffled numbered captions, Auto-Comp
App. A.8, :mod:`foilbench.audit.blind_mc`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

from foilbench.audit.crossfit import FeatureFn, gather
from foilbench.audit.ngram import Queries
from foilbench.audit.text import words
from foilbench.errors import UnknownNameError
from foilbench.registry import Registry, unknown_message

ScorerFactory = Callable[[list[str], np.ndarray], FeatureFn]
CHEAP_SCORERS = ("length", "ngram")
DEFAULT_SCORERS = ("length", "ngram", "minilm")


@lru_cache(maxsize=1)
def blind_scorers() -> Registry:
    reg = Registry("blind scorer")
    reg.register("length", "foilbench.audit.scorers:length_scorer",
                 "caption length in words; sign fitted (longer or shorter = positive)")
    reg.register("ngram", "foilbench.audit.scorers:ngram_scorer",
                 "Witten-Bell trigram LM trained on the training folds' positive captions")
    reg.register("minilm", "foilbench.audit.neural:minilm_scorer",
                 "MiniLM embeddings projected on the training folds' positive-minus-negative "
                 "mean direction")
    return reg


def resolve_scorer(name: str) -> ScorerFactory:
    """A scorer factory by name; ``lm:PATH`` loads a local causal LM (mean token log-prob)."""
    scheme, sep, path = name.partition(":")
    if sep and scheme == "lm":
        from foilbench.audit.neural import causal_lm_scorer

        return lambda texts, index: causal_lm_scorer(texts, index, path)
    if sep and scheme == "mc":
        from foilbench.audit.blind_mc import mc_scorer

        return lambda texts, index: mc_scorer(texts, index, path)
    if sep and scheme == "hf":
        from foilbench.audit.hf_scorer import hf_scorer

        return lambda texts, index: hf_scorer(texts, index, path)
    reg = blind_scorers()
    if name not in reg:
        raise UnknownNameError(unknown_message("blind scorer", name,
                                               reg.names() + ["lm:PATH", "hf:PATH", "mc:PATH"]))
    return reg.get(name)


def _fixed(values: np.ndarray, index: np.ndarray) -> FeatureFn:
    feats = gather(values, index)
    return lambda train_mask: feats


def length_scorer(texts: list[str], index: np.ndarray) -> FeatureFn:
    """Feature = number of words; nothing is learned except the sign (cross-fitted)."""
    return _fixed(np.array([len(words(t)) for t in texts], dtype=np.float64), index)


def ngram_scorer(texts: list[str], index: np.ndarray, order: int = 3) -> FeatureFn:
    """Feature = mean per-token log-probability under an n-gram LM trained on the positive
    captions of the training items only (SugarCrepe section 3 measures plausibility/fluency
    gaps; this is the benchmark-internal version of that attack)."""
    used = np.unique(index[index >= 0])
    queries = Queries([words(texts[i]) for i in used], order)  # prepared once for all folds

    def features(train_mask: np.ndarray) -> np.ndarray:
        positives = np.unique(index[train_mask, 0])
        values = np.full(len(texts), np.nan)
        values[used] = queries.fit_mean_logprobs(np.searchsorted(used, positives))
        return gather(values, index)

    return features
