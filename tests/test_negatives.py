"""Auto-Comp Swap/Confusion negatives: counts from the paper, invariants, errors."""

from __future__ import annotations

import math

import pytest

from foilbench.errors import FoilbenchError
from foilbench.negatives import (
    TASKS,
    Concept,
    ConceptError,
    caption,
    confusion_negatives,
    expected_counts,
    negatives_with_report,
    swap_negatives,
)

OBJECTS = ["cube", "sphere", "cone"]
COLOURS = ["red", "blue", "green"]
POSITIONS = ["left of", "above"]
SIZES = ["bigger than", "smaller than"]


def concept(task: str, n: int) -> Concept:
    if task in ("color", "shape_color"):
        return Concept(task, OBJECTS[:n], COLOURS[:n])
    rels = POSITIONS if task == "position" else SIZES
    return Concept(task, OBJECTS[:n], rels[: n - 1])


@pytest.mark.parametrize(
    ("task", "n", "swap", "confusion"),
    [
        ("color", 1, 0, 0),
        ("color", 2, 1, 15),
        ("color", 3, 5, 728),
        ("shape_color", 2, 1, 15),
        ("shape_color", 3, 5, 728),
        ("position", 1, 0, 0),
        ("position", 2, 1, 3),
        ("position", 3, 5, 107),
        ("relative_size", 2, 1, 3),
        ("relative_size", 3, 5, 107),
    ],
)
def test_counts_match_auto_comp(task, n, swap, confusion):
    c = concept(task, n)
    report = negatives_with_report(c)
    assert len(report.swap) == swap == math.factorial(n) - 1
    assert len(report.confusion) == confusion
    assert report.removed == {"swap": 0, "confusion": 0}
    assert expected_counts(task, n) == {"swap": swap, "confusion": confusion}


def test_captions_hand_written():
    assert caption(concept("color", 1)) == "a red cube"
    assert caption(concept("color", 2)) == "a red cube and a blue sphere"
    assert caption(concept("color", 3)) == "a red cube, a blue sphere and a green cone"
    assert caption(concept("position", 2)) == "a cube left of a sphere"
    assert caption(concept("position", 3)) == "a cube left of a sphere, and the sphere above a cone"
    assert caption(Concept("color", ["apple"], ["orange"])) == "an orange apple"


def test_swap_hand_computed():
    assert swap_negatives(concept("color", 2)) == ["a blue cube and a red sphere"]
    assert swap_negatives(concept("relative_size", 2)) == ["a sphere bigger than a cube"]
    assert swap_negatives(concept("position", 3))[0] == (
        "a cube left of a cone, and the cone above a sphere"
    )


def test_relational_confusion_hand_computed():
    got = confusion_negatives(concept("position", 2))
    assert got == [
        "a cube left of a cube",
        "a sphere left of a cube",
        "a sphere left of a sphere",
    ]


def test_confusion_contains_swap_and_low_entropy_distractors():
    c = concept("color", 2)
    conf = confusion_negatives(c)
    assert set(swap_negatives(c)) <= set(conf)
    assert "a red cube and a red cube" in conf  # repeated object and colour


@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("n", [1, 2, 3])
def test_no_negative_equals_positive_and_no_duplicates(task, n):
    c = concept(task, n)
    positive = caption(c)
    for negs in (swap_negatives(c), confusion_negatives(c)):
        assert positive not in negs
        assert len(set(negs)) == len(negs)


def test_deterministic_order():
    a = negatives_with_report(concept("color", 3))
    b = negatives_with_report(Concept("color", tuple(OBJECTS), tuple(COLOURS)))
    assert a.swap == b.swap and a.confusion == b.confusion


def test_duplicates_are_removed_and_counted():
    # Two equal colours: the one swap equals the positive, and confusion texts coincide.
    report = negatives_with_report(Concept("color", ["cube", "sphere"], ["red", "red"]))
    assert report.swap == []
    assert report.removed["swap"] == 1
    # 15 candidates, but only 4 distinct texts exist (2x2 objects, one colour), 1 is positive.
    assert len(report.confusion) == 3
    assert report.removed["confusion"] == 12

    same_rel = negatives_with_report(Concept("position", OBJECTS, ["left of", "left of"]))
    assert len(same_rel.swap) == 5 and same_rel.removed["swap"] == 0
    # 27 object arrangements x 4 relation arrangements, but only 27 x 1 distinct texts.
    assert len(same_rel.confusion) == 26
    assert same_rel.removed["confusion"] == 107 - 26


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("colour", ["cube"], ["red"]), "possible: color, shape_color"),
        (("color", [], []), "1 to 3 objects, got 0"),
        (("color", ["a", "b", "c", "d"], ["r", "g", "b", "y"]), "1 to 3 objects, got 4"),
        (("color", ["cube", "sphere"], ["red"]), "needs 2 attributes"),
        (("position", ["cube", "sphere"], ["left of", "above"]), "needs 1 relations"),
        (("position", ["cube", "sphere"], ["beside"]), "unknown relation 'beside'"),
        (("relative_size", ["cube", "sphere"], ["left of"]), "possible: bigger than"),
        (("color", "cube", ["red"]), "list of words"),
        (("color", ["cube"], [""]), "non-empty"),
    ],
)
def test_errors_name_what_was_asked_and_what_is_possible(args, needle):
    with pytest.raises(ConceptError, match=needle) as info:
        Concept(*args)
    assert isinstance(info.value, FoilbenchError) and isinstance(info.value, ValueError)
