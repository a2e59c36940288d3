"""Regenerate ``data/lexical_exclusions.json`` from WordNet 3.0 and the shipped category table.

    python -m foilbench.construct.compass.lexicon_build [WORDNET_DIR]

``WORDNET_DIR`` holds ``index.noun``, ``data.noun``, ``index.adj`` and ``data.adj`` (Debian:
``apt-get install -y wordnet-base`` puts them in ``/usr/share/wordnet``, the default). The
category vocabulary is closed (every candidate the table offers is one of its words), so the
pairs it can ever produce are known in advance: for every ordered pair of words of one kind
(object, attribute) the table holds, :func:`foilbench.construct.compass.wordnet.relation`
over each word's first :data:`SENSES` senses (nouns for objects; adjectives, then nouns, for
attributes) gives the reason, if any. :data:`CURATED` adds the pairs WordNet keeps apart
that everyday captions do not (a mug is "a cup"); each is stated with its reason.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from foilbench.construct.compass import wordnet

SENSES = 3  # WordNet orders senses by frequency; rarer ones (bus.n.04 "jalopy") over-reach
OUT = Path(__file__).parent / "data" / "lexical_exclusions.json"
# Broad names an LLM proposer offers (man -> person) that the table does not categorise: kept
# in the vocabulary so their pairs with the table's words are known too.
EXTRA_WORDS = {
    "object": ["person", "people", "human", "adult", "animal", "vehicle", "furniture", "food",
               "plant", "clothing", "garment", "container", "vessel", "object", "thing",
               "device", "appliance", "equipment", "structure", "building", "dish", "seat",
               "light", "toy", "utensil", "tableware", "crockery", "footwear", "headdress"],
    "attribute": ["dark", "light", "bright", "colorful", "shiny", "reddish", "pale"],
}
CURATED = {
    "object": [("mug", "cup", "a mug is called a cup in everyday captions"),
               ("monitor", "screen", "a monitor is its screen"),
               ("television", "screen", "a television is seen as its screen"),
               ("tv", "screen", "a television is seen as its screen"),
               ("oven", "stove", "a kitchen range is both"),
               ("street light", "traffic light", "either name is used for a lit pole")],
    "attribute": [("wood", "wooden", "noun and adjective of one material"),
                  ("metal", "steel", "steel is a metal"),
                  ("metallic", "steel", "steel is metallic"),
                  ("dotted", "spotted", "both name a pattern of dots"),
                  ("checkered", "plaid", "plaid is a checkered pattern")],
}


class Limited(wordnet.WordNet):
    """A WordNet whose lemmas keep only their first ``SENSES`` senses."""

    def __init__(self, base: wordnet.WordNet, senses: int = SENSES) -> None:
        super().__init__({k: v[:senses] for k, v in base.index.items()}, base.synsets)


def pairs_for(words: list[str], nets: list[wordnet.WordNet]) -> tuple[dict, list[str]]:
    """``({"old|new": reason}, words WordNet knows)`` over every ordered pair of ``words``."""
    known = [w for w in words if any(net.senses(w) for net in nets)]
    out = {}
    for old in known:
        for new in known:
            if old == new:
                continue
            for net in nets:
                reason = wordnet.relation(net, old, new)
                if reason:
                    out[f"{old}|{new}"] = reason
                    break
    return out, known


def build_table(wordnet_dir: str | Path = wordnet.DEFAULT_DIR) -> dict:
    """The table :mod:`foilbench.construct.compass.lexicon` reads."""
    from foilbench.construct.compass.categories import CategoryTable

    table = CategoryTable.shipped()
    noun = Limited(wordnet.load("noun", wordnet_dir))
    adj = Limited(wordnet.load("adj", wordnet_dir))
    nets = {"object": [noun], "attribute": [adj, noun]}
    data = {"about": "Synonym, similar-to, hypernym and hyponym pairs among the words of "
                     "categories.json (COMPASS negatives must be false of the image: a "
                     "replacement that names the same thing or a broader one is not), "
                     f"derived from WordNet 3.0 (first {SENSES} senses of each word; "
                     "Copyright 2006 Princeton University) by "
                     "foilbench.construct.compass.lexicon_build, plus foilbench's curated "
                     "pairs (reason 'curated: ...').",
            "senses": SENSES, "vocabulary": {}, "pairs": {}}
    for kind in ("object", "attribute"):
        words = sorted({w for ws in table.members[kind].values() for w in ws}
                       | set(EXTRA_WORDS[kind]))
        pairs, known = pairs_for(words, nets[kind])
        for a, b, why in CURATED[kind]:
            for old, new in ((a, b), (b, a)):
                pairs.setdefault(f"{old}|{new}", f"curated: {why}")
        data["vocabulary"][kind] = known
        data["pairs"][kind] = dict(sorted(pairs.items()))
    return data


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = args[0] if args else wordnet.DEFAULT_DIR
    try:
        data = build_table(folder)
    except wordnet.WordNetMissing as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {sum(len(p) for p in data['pairs'].values())} pairs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
