"""Lexical exclusions for COMPASS replacements: a candidate that names the same thing as the
replaced word, or a broader or narrower thing, can be true of the image and is no negative.

COMPASS §3.2 asks for a replacement of "the same semantic category (e.g., replacing "sofa"
with "chair")" that "does not already appear in the image's entire scene graph", and filters
"overly similar candidates using Sentence Transformers" so that negatives are "sufficiently
distinct from the ground truth". A word-level Sentence-Transformer threshold does not make a
negative false: it keeps man -> person (cosine 0.41), man -> guy (0.61), red -> crimson (0.51)
and small -> little (0.72), each true of an image the original is true of. The paper names no
lexical rule; ours, applied to objects and attributes before the Sentence-Transformer filter:

1. ``head word``: one word is the other with modifiers ("dark brown" -> "brown", "palm tree"
   -> "tree"): a dark brown thing is brown;
2. the shipped table ``data/lexical_exclusions.json`` (generated from WordNet 3.0 by
   :mod:`foilbench.construct.compass.lexicon_build`): ``synonym`` (red/crimson, small/little),
   ``similar`` (small/tiny), ``hypernym`` (man -> person), ``hyponym`` (person -> man), and
   ``curated`` pairs WordNet keeps apart (mug/cup);
3. where WordNet is silent (either word outside the table's vocabulary, e.g. an LLM's
   proposal), objects are compared at the caption level by the Sentence-Transformer filter
   (:meth:`foilbench.construct.compass.similarity.SimilarityFilter.caption_keep`).

Only open-world graphs (Visual Genome) get these exclusions. A closed-world graph (the
procedural world) lists everything true and its renderer draws the named colour, so crimson
is false of a red object there by construction (and the world's near shades exist to test
exactly that).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from foilbench.construct.compass.spans import lemma

TABLE_FILE = "lexical_exclusions.json"
HEAD_WORD = "head word"


def reason_group(reason: str) -> str:
    """The manifest's counting key: "curated: a mug is ..." -> "curated"."""
    return reason.split(":", 1)[0]


class Lexicon:
    """``reason(kind, old, new)``: why ``new`` cannot replace ``old``, or None."""

    def __init__(self, data: dict, source: str = TABLE_FILE) -> None:
        self.source = source
        self.pairs = {k: dict(v) for k, v in data.get("pairs", {}).items()}
        self.vocabulary = {k: set(v) for k, v in data.get("vocabulary", {}).items()}

    @classmethod
    @lru_cache(maxsize=1)
    def shipped(cls) -> Lexicon:
        text = resources.files("foilbench.construct.compass").joinpath(
            "data", TABLE_FILE).read_text("utf-8")
        return cls(json.loads(text), f"foilbench/construct/compass/data/{TABLE_FILE}")

    def knows(self, kind: str, word: str) -> bool:
        """Whether WordNet (the table's vocabulary) has ``word`` of ``kind``."""
        vocab = self.vocabulary.get(kind, set())
        return _norm(word) in vocab or lemma(word) in vocab

    def reason(self, kind: str, old: str, new: str) -> str | None:
        a, b = _norm(old), _norm(new)
        if head_word(a, b):
            return HEAD_WORD
        table = self.pairs.get(kind, {})
        for x, y in ((a, b), (lemma(a), lemma(b))):
            got = table.get(f"{x}|{y}")
            if got:
                return got
        return None

    def silent(self, kind: str, old: str, new: str) -> bool:
        """Neither a rule nor WordNet can speak for this pair (a word outside the table)."""
        return not (self.knows(kind, old) and self.knows(kind, new))


def _norm(word: str) -> str:
    return " ".join(word.lower().split())


def head_word(a: str, b: str) -> bool:
    """One multi-word name ends in the other ("dark brown" / "brown")."""
    wa, wb = a.split(), b.split()
    if len(wa) == len(wb):
        return False
    short, long = (wa, wb) if len(wa) < len(wb) else (wb, wa)
    return long[-len(short):] == short
