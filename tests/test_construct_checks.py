"""The programmatic checks the pipelines apply to any backend's output: CompoSET counts and
verbosity tiers, Auto-Comp semantic preservation, COMPASS structural constraints, and the
SugarCrepe template rules."""

from __future__ import annotations

import json

from foilbench.construct.autocomp.checks import preserved_spans, substitute
from foilbench.construct.compass.checks import caption_problems, text_problems
from foilbench.construct.compass.negatives import PrimitivePools
from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.construct.composet.taxonomy import TAXONOMY, Foil, check_counts
from foilbench.construct.composet.verify import check_tiers
from foilbench.construct.sugarcrepe.template import article_fix, swap
from foilbench.negatives import Concept


def foil(edit_type, target="mug", base="red", new="blue"):
    return Foil(edit_type, target, base, new, f"a {base} {target}", f"a {new} {target}")


def test_taxonomy_has_sixteen_types_in_four_categories():
    assert len(TAXONOMY) == 16
    assert {c for c, _, _ in TAXONOMY.values()} == {
        "identity_appearance", "quantity", "spatial_relations", "activity_state"}


def test_count_check_follows_the_edit():
    same = {"mug": 1, "cube": 2}
    assert check_counts(foil("modify_color"), same, same) is None
    assert "cube: 2 in base, 1 in foil" in check_counts(foil("modify_color"), same,
                                                        {"mug": 1, "cube": 1})
    assert "count unchanged" in check_counts(foil("modify_count", "cube", "2", "3"), same, same)
    assert check_counts(foil("modify_count", "cube", "2", "3"), same, {"mug": 1, "cube": 3}) \
        is None
    swap_kind = foil("modify_object", "mug", "mug", "lamp")
    assert check_counts(swap_kind, same, {"lamp": 1, "cube": 2}) is None
    assert "no new instance" in check_counts(swap_kind, same, {"cube": 2})


def test_verbosity_tiers_keep_the_edit_phrase_and_the_context():
    short = ("a red mug", "a blue mug")
    good = {"medium": ("A red mug next to a lamp.", "A blue mug next to a lamp."),
            "long": ("In a kitchen, a red mug next to a lamp", "In a kitchen, a blue mug next "
                                                                "to a lamp")}
    assert check_tiers(short, good) is None
    reworded = {**good, "medium": ("A crimson mug next to a lamp.", "A blue mug next to a lamp.")}
    assert check_tiers(short, reworded) == "verbosity: edit phrase reworded"
    drift = {**good, "long": ("In a kitchen, a red mug next to a lamp",
                              "In a garden, a blue mug next to a lamp")}
    assert check_tiers(short, drift) == "verbosity: context differs between base and foil"
    long = " ".join(["word"] * 80)
    too_long = {**good, "long": (f"a red mug {long}", f"a blue mug {long}")}
    assert check_tiers(short, too_long) == "verbosity: long tier over 77 tokens"


def test_semantic_preservation_accepts_bindings_and_rejects_swaps():
    c = Concept("color", ["mug", "bottle"], ["red", "blue"])
    assert preserved_spans("A red ceramic mug beside a bottle that is blue.", c) is not None
    assert preserved_spans("A blue mug beside a red bottle.", c) is None  # bindings swapped
    assert preserved_spans("A red mug on a table.", c) is None  # an object missing
    r = Concept("position", ["chair", "table"], ["left of"])
    assert preserved_spans("A chair sits just left of a table.", r) is not None
    assert preserved_spans("A table sits left of a chair.", r) is None  # order reversed


def test_substitution_fixes_articles():
    c = Concept("color", ["mug", "apple"], ["red", "orange"])
    text = "A red mug and an orange apple."
    spans = preserved_spans(text, c)
    assert substitute(text, spans, ("mug", "apple"), ("orange", "red")) == \
        "An orange mug and a red apple."
    assert article_fix("a apple and An cube") == "an apple and A cube"


def test_compass_structural_constraints():
    spec = CaptionSpec("g", "L3-OAR", ((0, "sofa"), (1, "room")), ((0, "brown"),),
                       ((0, "in", 1),))
    assert text_problems(spec, "A brown sofa in the room.", ["sofa", "room", "lamp"]) == []
    assert "object 'room' missing" in text_problems(spec, "A brown sofa.", ["sofa"])
    assert "relation 'sofa in room' not in order" in text_problems(
        spec, "The room in a brown sofa.", ["sofa", "room"])
    assert any("not bound" in p for p in text_problems(
        spec, "A brown room with a sofa in the room.", ["sofa", "room"]))
    assert any("not in the spec: lamp" in p for p in text_problems(
        spec, "A brown sofa in the room with a lamp.", ["sofa", "room", "lamp"]))
    pools = PrimitivePools(("sofa", "room"))
    same = ["A brown sofa in the room."] * 2
    assert caption_problems([spec, spec], same, pools, 1) == [
        (1, "negative repeats the positive or another negative")]


def test_sugarcrepe_swap_rule_says_when_no_swap_exists():
    ask = {"caption": "A white plate next to a black mug.", "concept": "attribute"}
    got = json.loads(swap(ask, None))
    assert got["possible"] and got["caption"] == "A black plate next to a white mug."
    none = json.loads(swap({"caption": "A surfer riding a wave.", "concept": "object"}, None))
    assert none == {"possible": False, "concepts": [], "caption": ""}
