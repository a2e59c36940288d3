"""The words an Auto-Comp run draws its concepts from (objects, shapes, colours, relations).

Auto-Comp §4: "Spatial Relation Vocabulary. 4 fundamental binary spatial relations ...: above,
under, to the left of, to the right of." and "Size-Relation Vocabulary. A set of comparative
size descriptors (larger than, smaller than, bigger than)". foilbench's world speaks "left
of", "right of", "above", "below", "bigger than", "smaller than"; the paper's words (and a few
common synonyms) are accepted everywhere and mapped to those by :func:`canonical_relation`, so
a concept keeps the words it was given (its captions say "to the left of") while its truth
(converses, true negatives, VQA answers, world images) is decided on the canonical word.
"""

from __future__ import annotations

VOCAB_KEYS = ("objects", "shapes", "colors", "relations", "size_relations")
PAPER_RELATIONS = ("above", "under", "to the left of", "to the right of")  # Auto-Comp §4
PAPER_SIZE_RELATIONS = ("larger than", "smaller than", "bigger than")  # Auto-Comp §4
# synonym -> the world's word (same meaning, same direction)
RELATION_SYNONYMS: dict[str, str] = {
    "to the left of": "left of", "on the left of": "left of",
    "to the right of": "right of", "on the right of": "right of",
    "under": "below", "underneath": "below", "beneath": "below",
    "larger than": "bigger than",
}


def canonical_relation(word: str) -> str:
    """The world's word for a relation: "to the left of" -> "left of", "under" -> "below",
    "larger than" -> "bigger than"; a word that is no synonym comes back (spaces normalised,
    lower case)."""
    w = " ".join(str(word).lower().split())
    return RELATION_SYNONYMS.get(w, w)


def accepted_relations(canonical: tuple[str, ...]) -> tuple[str, ...]:
    """``canonical`` words plus every synonym of one of them."""
    return tuple(canonical) + tuple(s for s, c in RELATION_SYNONYMS.items() if c in canonical)


def paper_vocab() -> dict[str, tuple[str, ...]]:
    """The world vocabulary with Auto-Comp §4's relation and size words (``--vocab paper``)."""
    return {**default_vocab(), "relations": PAPER_RELATIONS,
            "size_relations": PAPER_SIZE_RELATIONS}


def default_vocab() -> dict[str, tuple[str, ...]]:
    """The procedural world's words (what ``--image world`` can draw)."""
    from foilbench.world.autocomp import TASK_OBJECTS, TASK_VALUES

    return {"objects": TASK_OBJECTS["color"], "shapes": TASK_OBJECTS["shape_color"],
            "colors": TASK_VALUES["color"], "relations": TASK_VALUES["position"],
            "size_relations": TASK_VALUES["relative_size"],
            "position_objects": TASK_OBJECTS["position"],
            "size_objects": TASK_OBJECTS["relative_size"]}


def task_words(vocab: dict, task: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    objects = {"color": vocab["objects"], "shape_color": vocab["shapes"],
               "position": vocab.get("position_objects", vocab["objects"]),
               "relative_size": vocab.get("size_objects", vocab["objects"])}[task]
    values = {"color": vocab["colors"], "shape_color": vocab["colors"],
              "position": vocab["relations"], "relative_size": vocab["size_relations"]}[task]
    return tuple(objects), tuple(values)
