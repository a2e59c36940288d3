"""True "negatives" of Auto-Comp concepts, by meaning (hand-computed cases).

Auto-Comp §3 builds the Confusion set from "all possible combinations of objects and attributes
from the original concept, with replacement": for "a red cube and a blue sphere" that includes
"a blue sphere and a red cube", which is the positive in another order.
"""

from __future__ import annotations

import itertools

import pytest

from foilbench.negatives import (
    Concept,
    caption,
    confusion_negatives,
    equivalent_indices,
    negative_arrangements,
    negatives_with_report,
    same_meaning,
    swap_negatives,
    true_negatives,
)

RED_CUBE_BLUE_SPHERE = Concept("color", ("cube", "sphere"), ("red", "blue"))
THREE = Concept("shape_color", ("cube", "sphere", "cone"), ("red", "blue", "green"))


def test_n2_colour_15_confusion_negatives_exactly_one_true():
    negatives = confusion_negatives(RED_CUBE_BLUE_SPHERE)
    assert len(negatives) == 15
    assert true_negatives(RED_CUBE_BLUE_SPHERE, "confusion") == ["a blue sphere and a red cube"]
    k, = equivalent_indices(RED_CUBE_BLUE_SPHERE, "confusion")
    assert negatives[k - 1] == "a blue sphere and a red cube"  # caption index k, 1-based
    assert true_negatives(RED_CUBE_BLUE_SPHERE, "swap") == []  # Swap keeps the objects put


def test_n3_attribute_728_confusion_negatives_exactly_five_true():
    assert len(confusion_negatives(THREE)) == 728
    got = true_negatives(THREE, "confusion")
    # the 3! - 1 other orders of the three bindings, hand-listed
    assert sorted(got) == sorted([
        "a red cube, a green cone and a blue sphere",
        "a blue sphere, a red cube and a green cone",
        "a blue sphere, a green cone and a red cube",
        "a green cone, a red cube and a blue sphere",
        "a green cone, a blue sphere and a red cube",
    ])
    assert true_negatives(THREE) == got  # None: Swap (none here) then Confusion


def test_equivalent_relational_chain_in_swap_and_confusion():
    """The issue's example: {pyramid > cube, sphere > cube} said two ways."""
    c = Concept("relative_size", ("pyramid", "cube", "sphere"), ("bigger than", "smaller than"))
    same = "a sphere bigger than a cube, and the cube smaller than a pyramid"
    assert same in swap_negatives(c) and same in confusion_negatives(c)
    assert true_negatives(c, "swap") == [same]
    assert true_negatives(c, "confusion") == [same]
    assert true_negatives(c) == [same]  # once, not per set


@pytest.mark.parametrize(("a", "b", "same"), [
    # converses: right of = left of reversed, below = above reversed
    ((("cube", "mug", "cone"), ("left of", "right of")),
     (("cone", "mug", "cube"), ("left of", "right of")), True),
    ((("cube", "mug", "cone"), ("above", "below")),
     (("cone", "mug", "cube"), ("above", "below")), True),
    # same words, other facts
    ((("cube", "mug", "cone"), ("left of", "left of")),
     (("cone", "mug", "cube"), ("left of", "left of")), False),
    # an object named twice is two objects: never the concept's three distinct ones
    ((("cube", "mug", "cone"), ("left of", "right of")),
     (("cube", "mug", "cube"), ("left of", "right of")), False),
    # no transitivity is assumed: cube < mug < cone does not equal cube < cone, mug < cone
    ((("cube", "mug", "cone"), ("left of", "left of")),
     (("cube", "cone", "mug"), ("left of", "right of")), False),
])
def test_same_meaning_relations(a, b, same):
    assert same_meaning("position", a, b) is same
    assert same_meaning("position", b, a) is same


def test_same_meaning_attributes_is_the_multiset_of_bindings():
    assert same_meaning("color", (("cube", "cube"), ("red", "blue")),
                        (("cube", "cube"), ("blue", "red")))
    assert not same_meaning("color", (("cube", "sphere"), ("red", "blue")),
                            (("cube", "sphere"), ("blue", "red")))


def test_arrangements_align_with_the_negative_texts():
    concepts = [RED_CUBE_BLUE_SPHERE, THREE,
                Concept("position", ("cube", "mug", "cone"), ("left of", "left of")),
                Concept("relative_size", ("box", "mug"), ("bigger than",))]
    for c in concepts:
        report = negatives_with_report(c)
        for name in ("swap", "confusion"):
            texts = [caption(Concept(c.task, o, v)) for o, v in negative_arrangements(c, name)]
            assert texts == getattr(report, name)


def test_no_true_negative_without_an_equivalent_order():
    """Relational chains at N = 2 cannot be restated with the concept's own relation; N = 3
    chains whose two relations are not converses have no equivalent either."""
    for rel in ("left of", "above", "bigger than"):
        task = "relative_size" if rel == "bigger than" else "position"
        assert true_negatives(Concept(task, ("cube", "mug"), (rel,))) == []
    for r1, r2 in itertools.product(("left of", "above"), repeat=2):
        assert true_negatives(Concept("position", ("cube", "mug", "cone"), (r1, r2))) == []


def test_bad_negative_set_names_the_possible_ones():
    with pytest.raises(ValueError, match="possible: swap, confusion"):
        negative_arrangements(RED_CUBE_BLUE_SPHERE, "paraphrase")
