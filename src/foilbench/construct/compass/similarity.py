"""COMPASS's Sentence-Transformer filter of overly similar replacements.

COMPASS §3.2: "After substitution, we adjust the caption for grammatical correctness and filter
out overly similar candidates using Sentence Transformers (Reimers and Gurevych, 2019). This
ensures that negatives are both natural and sufficiently distinct from the ground truth."

The paper names neither the model nor the threshold nor which texts are compared. foilbench's
choices, stated: the model is all-MiniLM-L6-v2 (a Sentence Transformer, loaded by
:func:`foilbench.models.text_models.minilm` from ``$FOILBENCH_MINILM`` or the Hub name
``sentence-transformers/all-MiniLM-L6-v2``; docs/text-models.md); the texts compared are the replaced primitive and its
replacement ("sofa" vs "couch"), because the similarity of two whole captions that differ in
one word grows with caption length (a 12-primitive caption would filter every candidate);
a candidate is kept only when its cosine similarity is strictly below ``MAX_SIMILARITY`` = 0.8
(measured with this model: sofa/couch 0.86, car/automobile 0.87 and translucent/transparent
0.84 are filtered, sofa/chair 0.61, cup/mug 0.71, red/orange 0.66 and small/large 0.79 kept).
Relations are exempt (``KINDS``): predicate antonyms embed closer than synonyms (bigger
than/smaller than 0.88, left of/right of 0.75), so the filter would remove exactly the
minimal relation foils COMPASS wants, and a relation negative's falsity is checked against the
graph anyway.

For the procedural world's small vocabulary the similarities are precomputed with the same
model and shipped (``data/world_similarity.json``), so the embedded suite builds without
loading a model and byte-identically; a test recomputes them with the live model. Whole-caption comparison (the paper's other
possible reading) is not implemented; the threshold is a parameter.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from foilbench.errors import FoilbenchError, ModelError

MAX_SIMILARITY = 0.8
# Caption level, objects whose pair WordNet is silent on (foilbench.construct.compass.lexicon):
# "There is a man in the image." vs "... a person ..." 0.747, guy 0.899, mug/cup 0.787,
# sofa/couch 0.859 are removed; sofa/chair 0.589, cup/glass 0.605, car/bus 0.465,
# plate/bowl 0.457, man/woman 0.224 are kept (measured with all-MiniLM-L6-v2). Attributes
# have no such frame: "The object is small." scores 0.829 against "... large." (an
# antonym) and 0.870 against "... little." (a synonym), and red/crimson (0.666) sits beside
# red/orange (0.662), so a caption threshold would cut antonyms with synonyms; attributes keep
# the word-level filter only.
CAPTION_MAX = 0.7
CAPTION_FRAME = "There is a {} in the image."
KINDS = ("object", "attribute")  # relations exempt (module docstring)
WORLD_TABLE = "world_similarity.json"


class SimilarityError(FoilbenchError):
    """The similarity model is not available; the message says what to install."""


class SimilarityThresholdError(FoilbenchError, ValueError):
    """A similarity threshold outside (0, 1] (a cosine filter at 2 keeps everything; at -1
    nothing): the message names the value."""


def check_threshold(threshold: float | None) -> float | None:
    """``threshold`` if it is a cosine cut in (0, 1], or ``None`` (the filter off).

    >>> check_threshold(0.8), check_threshold(None)
    (0.8, None)
    """
    if threshold is None:
        return None
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        value = math.nan
    if not 0.0 < value <= 1.0:  # NaN fails too
        raise SimilarityThresholdError(
            f"similarity threshold {threshold!r} is not in (0, 1]; give a cosine such as 0.8, "
            "or turn the filter off (None; 0 on the command line)")
    return value


class SimilarityFilter:
    """Keeps a candidate when cos(old, new) < ``threshold``; embeddings cached per text.

    ``encode(texts) -> array (n, d)`` of unit vectors; :meth:`minilm` loads the shipped model."""

    def __init__(self, encode: Callable[[list[str]], np.ndarray], name: str,
                 threshold: float = MAX_SIMILARITY) -> None:
        check_threshold(threshold)
        self.encode, self.name, self.threshold = encode, name, threshold
        self._cache: dict[str, np.ndarray] = {}
        self.filtered = 0  # candidates removed, for the manifest
        self.caption_filtered = 0  # removed at the caption level (objects WordNet is silent on)

    @classmethod
    def minilm(cls, threshold: float = MAX_SIMILARITY, device: str = "cpu") -> SimilarityFilter:
        from foilbench.models.text_models import minilm

        try:
            model = minilm(device)
        except ModelError as err:
            raise SimilarityError(f"the COMPASS similarity filter needs MiniLM ({err}), or "
                                  "turn the filter off") from None

        def encode(texts: list[str]) -> np.ndarray:
            return np.asarray(model.encode(texts, normalize_embeddings=True), dtype=np.float64)

        return cls(encode, "all-MiniLM-L6-v2", threshold)

    @classmethod
    def from_table(cls, data: dict, threshold: float = MAX_SIMILARITY,
                   live: Callable[[], SimilarityFilter] | None = None) -> SimilarityFilter:
        """A filter answering from precomputed ``{"model", "pairs": {"a|b": cos}}``; a pair
        missing from the table goes to ``live()`` (loaded once, on first need), or is an error
        naming it when there is none."""
        pairs = {tuple(k.split("|")): float(v) for k, v in data["pairs"].items()}
        out = cls(lambda texts: None, str(data["model"]), threshold)
        loaded: list[SimilarityFilter] = []

        def similarities(old: str, news: Sequence[str]) -> list[float]:
            got = []
            for n in news:
                key = (old, n) if (old, n) in pairs else (n, old)
                if key in pairs:
                    got.append(pairs[key])
                    continue
                if live is None:
                    raise SimilarityError(f"no precomputed similarity for {old!r} / {n!r} in "
                                          f"the {out.name} table; rebuild it or use the model")
                if not loaded:
                    loaded.append(live())
                got.append(loaded[0].similarities(old, [n])[0])
            return got

        out.similarities = similarities  # type: ignore[method-assign]
        return out

    @classmethod
    def world(cls, live: bool = True) -> SimilarityFilter:
        """The shipped table for the procedural world's same-category pairs (other pairs, e.g.
        an LLM's proposals, go to the live model when ``live``)."""
        import json
        from importlib import resources

        text = resources.files("foilbench.construct.compass").joinpath(
            "data", WORLD_TABLE).read_text("utf-8")
        return cls.from_table(json.loads(text), live=cls.minilm if live else None)

    def similarities(self, old: str, news: Sequence[str]) -> list[float]:
        todo = [t for t in dict.fromkeys([old, *news]) if t not in self._cache]
        if todo:
            for t, v in zip(todo, self.encode(todo), strict=True):
                self._cache[t] = np.asarray(v, dtype=np.float64)
        a = self._cache[old]
        return [float(a @ self._cache[n]) for n in news]

    def keep(self, old: str, news: Sequence[str]) -> list[str]:
        """The candidates strictly below the threshold, in their order."""
        if not news:
            return []
        kept = [n for n, s in zip(news, self.similarities(old, news), strict=True)
                if s < self.threshold]
        self.filtered += len(news) - len(kept)
        return kept

    def caption_keep(self, old: str, news: Sequence[str],
                     threshold: float = CAPTION_MAX) -> list[str]:
        """The object candidates whose caption ``CAPTION_FRAME`` stays strictly below
        ``threshold`` against the original's (used where WordNet is silent)."""
        if not news:
            return []
        sims = self.similarities(CAPTION_FRAME.format(old),
                                 [CAPTION_FRAME.format(n) for n in news])
        kept = [n for n, s in zip(news, sims, strict=True) if s < threshold]
        self.caption_filtered += len(news) - len(kept)
        return kept

    def describe(self) -> dict:
        return {"model": self.name, "threshold": self.threshold, "compare":
                "replaced primitive vs replacement; kept when cosine < threshold",
                "filtered": self.filtered,
                "caption_level": {"frame": CAPTION_FRAME, "threshold": CAPTION_MAX,
                                  "applies_to": "objects whose pair WordNet is silent on "
                                                "(open world)",
                                  "filtered": self.caption_filtered}}
