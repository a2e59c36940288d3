"""Single edits: each changes exactly what it says, phrases contrast, impossible edits explain."""

from __future__ import annotations

import numpy as np
import pytest

from foilbench.errors import UnknownNameError
from foilbench.world.edit_core import EditImpossible, check_contrast
from foilbench.world.edits import ALIASES, EDIT_TYPES, apply_edit
from foilbench.world.phrases import holds
from foilbench.world.scene import Obj, Scene

FIELDS = ("category", "color", "material", "pattern", "transparency", "size", "x", "y", "state")


def scene5() -> Scene:
    """Four small objects: a back row of three and one front-left, room in the front."""
    return Scene((
        Obj("cube", "red", size="small", x=0.1, y=0.2),
        Obj("sphere", "blue", material="metal", size="small", x=0.5, y=0.2),
        Obj("box", "green", state="closed", size="small", x=0.88, y=0.2),
        Obj("bottle", "gold", state="upright", size="small", x=0.1, y=0.9),
    ))


def agent_scene() -> Scene:
    """scene5 with, in the front row, a red robot pointing at a sitting blue robot."""
    return scene5().with_objects((
        *scene5().objects,
        Obj("robot", "red", state="pointing right", size="small", x=0.6, y=0.9),
        Obj("robot", "blue", state="sitting", size="small", x=0.9, y=0.9),
    ))


AGENT_EDITS = ("modify_action", "swap_role")


def changed_fields(a: Obj, b: Obj) -> set[str]:
    return {f for f in FIELDS if getattr(a, f) != getattr(b, f)}


SINGLE_ATTRIBUTE = {
    "modify_color": {"color"},
    "modify_pattern": {"pattern"},
    "modify_material": {"material"},
    "modify_transparency": {"transparency"},
    "modify_shape": {"category"},
    "modify_object": {"category", "state"},  # a new category starts in its default state
    "modify_state": {"state"},
    "modify_pose": {"state"},
    "modify_action": {"state"},
    "modify_spatial": {"x", "y"},
}


@pytest.mark.parametrize("name", sorted(EDIT_TYPES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_edit_contrasts_and_keeps_the_rest(name, seed):
    base = agent_scene() if name in AGENT_EDITS else scene5()
    e = apply_edit(base, name, seed)
    assert e.edit_type == name and e.category == EDIT_TYPES[name].category
    assert check_contrast(e.base, e.foil, e.base_phrase, e.foil_phrase)
    assert holds(e.base_phrase, base) and not holds(e.base_phrase, e.foil)
    n_b, n_f = len(base.objects), len(e.foil.objects)
    if name in ("modify_count", "modify_presence"):
        assert abs(n_b - n_f) == 1
        kept_b = [o for i, o in enumerate(base.objects) if i not in e.base_indices]
        kept_f = [o for i, o in enumerate(e.foil.objects) if i not in e.foil_indices]
        assert kept_b == kept_f  # nothing else moved or changed
        assert e.operation in ("add", "remove", "modify")
        return
    assert n_b == n_f and e.base_indices == e.foil_indices
    for i, (a, b) in enumerate(zip(base.objects, e.foil.objects, strict=True)):
        if i not in e.base_indices:
            assert a == b
    if name in SINGLE_ATTRIBUTE:
        (i,) = e.base_indices
        assert changed_fields(base.objects[i], e.foil.objects[i]) <= SINGLE_ATTRIBUTE[name]
        assert changed_fields(base.objects[i], e.foil.objects[i])
    else:  # swaps exchange one attribute (or the place) between two objects
        i, j = e.base_indices
        a, b, fa, fb = base.objects[i], base.objects[j], e.foil.objects[i], e.foil.objects[j]
        if name == "swap_role":  # actions exchange; the new actor points back at the other
            assert fa.state == b.state and fb.state == "pointing left"
            assert changed_fields(a, fa) == changed_fields(b, fb) == {"state"}
            return
        attr = {"swap_color": ("color",), "swap_material": ("material",),
                "swap_spatial": ("x", "y")}[name]
        for f in attr:
            assert (getattr(fa, f), getattr(fb, f)) == (getattr(b, f), getattr(a, f))
        assert changed_fields(a, fa) <= set(attr) and changed_fields(b, fb) <= set(attr)


def test_same_seed_same_edit():
    a = apply_edit(scene5(), "modify_color", 7)
    b = apply_edit(scene5(), "modify_color", 7)
    assert a.foil == b.foil and a.base_phrase == b.base_phrase


def test_pinned_choices():
    e = apply_edit(scene5(), "modify_color", 0, target=1, value="navy")
    assert e.foil.objects[1].color == "navy"
    assert (e.base_phrase.text(), e.foil_phrase.text()) == ("a blue sphere", "a navy sphere")
    e = apply_edit(scene5(), "modify_state", 0)
    assert e.foil.objects[2].state == "open"
    e = apply_edit(scene5(), "modify_pose", 0)
    assert e.foil.objects[3].state == "tipped over"
    assert e.foil_phrase.text() == "a tipped over gold bottle"


def test_count_phrases_and_alias():
    scene = Scene((Obj("cube", "red", x=0.15, y=0.2), Obj("cube", "red", x=0.5, y=0.2),
                   Obj("cone", "teal", x=0.8, y=0.2)))
    e = apply_edit(scene, "modify_cardinality", 0, target=0, direction="add")
    assert ALIASES["modify_cardinality"] == "modify_count" and e.edit_type == "modify_count"
    assert (e.base_phrase.text(), e.foil_phrase.text()) == ("two red cubes", "three red cubes")
    e = apply_edit(scene, "modify_count", 0, target=1, direction="remove")
    assert (e.base_phrase.text(), e.foil_phrase.text()) == ("two red cubes", "one red cube")
    assert len(e.foil.objects) == 2


def test_presence_phrases():
    scene = Scene((Obj("cube", "red", x=0.15, y=0.2), Obj("cone", "teal", x=0.8, y=0.2)))
    e = apply_edit(scene, "modify_presence", 0, target=0, direction="remove")
    assert (e.base_phrase.text(), e.foil_phrase.text()) == ("a red cube", "no red cube")
    assert e.operation == "remove" and e.foil.objects == (scene.objects[1],)
    e = apply_edit(scene, "modify_presence", 0, direction="add")
    assert e.operation == "add" and e.base_phrase.text().startswith("no ")


def test_spatial_flips_the_relation():
    scene = Scene((Obj("cube", "red", x=0.2, y=0.5), Obj("sphere", "blue", x=0.5, y=0.5)))
    e = apply_edit(scene, "modify_spatial", 0, targets=(0, 1))
    assert e.base_phrase.text() == "a red cube to the left of a blue sphere"
    assert e.foil_phrase.text() == "a red cube to the right of a blue sphere"
    assert e.foil.objects[0].x > e.foil.objects[1].x
    e = apply_edit(scene, "swap_spatial", 0)
    assert e.foil_phrase.text() == "a blue sphere to the left of a red cube"


def test_disambiguates_look_alikes():
    scene = Scene((Obj("cube", "red", x=0.05, y=0.5), Obj("cube", "red", x=0.95, y=0.5)))
    e = apply_edit(scene, "modify_color", 0, target=0, value="blue")
    assert e.base_phrase.text() == "a red cube on the left"
    assert e.foil_phrase.text() == "a blue cube on the left"


@pytest.mark.parametrize("name,scene,choice,needle", [
    ("swap_color", Scene((Obj("cube", "red"),)), {}, "1 object"),
    ("swap_color", Scene((Obj("cube", "red", x=0.1), Obj("cone", "red", x=0.9))), {},
     "different colors"),
    ("swap_material", Scene((Obj("cube", "red", x=0.1), Obj("cone", "blue", x=0.9))), {},
     "different materials"),
    ("modify_presence", Scene((Obj("cube", "red"),)), {"direction": "remove"},
     "removal of the only object"),
    ("modify_state", Scene((Obj("cube", "red"),)), {}, "box: closed/open"),
    ("modify_shape", Scene((Obj("mug", "red"),)), {}, "geometric solid"),
    ("modify_count", Scene((Obj("cube", "red"),)), {"direction": "remove"}, "at least two"),
    ("modify_spatial", Scene((Obj("cube", "red"),)), {}, "two objects"),
])
def test_impossible_edits_say_why(name, scene, choice, needle):
    with pytest.raises(EditImpossible, match=name) as info:
        apply_edit(scene, name, 0, **choice)
    assert needle in str(info.value)
    assert isinstance(info.value, ValueError)


def test_unknown_edit_and_value():
    with pytest.raises(UnknownNameError, match="modify_colour.*modify_color"):
        apply_edit(scene5(), "modify_colour", 0)
    with pytest.raises(ValueError, match="unknown colour 'mauve'; possible: red"):
        apply_edit(scene5(), "modify_color", 0, value="mauve")
    with pytest.raises(EditImpossible, match="target 9 is not an object index"):
        apply_edit(scene5(), "modify_color", 0, target=9)
    with pytest.raises(EditImpossible, match="direction 'sideways'"):
        apply_edit(scene5(), "modify_presence", 0, direction="sideways")


def test_added_objects_do_not_overlap():
    from foilbench.world.sample import fits

    for seed in range(5):
        e = apply_edit(scene5(), "modify_presence", np.random.default_rng(seed), direction="add")
        new = e.foil.objects[e.foil_indices[0]]
        assert fits(new, e.base.objects)


def test_no_location_word_near_a_bin_edge():
    # the look-alike stands at x = 0.35, too near the left/middle edge to call either side
    scene = Scene((Obj("cube", "red", x=0.1, y=0.5), Obj("cube", "red", x=0.35, y=0.9)))
    with pytest.raises(EditImpossible):
        apply_edit(scene, "modify_color", 0, target=0, value="blue")
    far = Scene((Obj("cube", "red", x=0.1, y=0.5), Obj("cube", "red", x=0.45, y=0.9)))
    e = apply_edit(far, "modify_color", 0, target=0, value="blue")
    assert e.base_phrase.text() == "a red cube on the left"


@pytest.mark.parametrize("name,noun", [
    ("modify_color", "colour"), ("modify_pattern", "pattern"), ("modify_material", "material"),
    ("modify_transparency", "transparency"), ("modify_shape", "shape"),
    ("modify_object", "object"),
])
def test_an_unknown_asked_value_is_named_before_any_object_is_tried(name, noun):
    """The check ``modify_with(asks=...)`` makes for all six: the value and what it is, with
    the possible ones, even for a target that is no object (the value is checked first)."""
    with pytest.raises(ValueError, match=f"^unknown {noun} 'mauve'; possible: ") as info:
        apply_edit(scene5(), name, 0, target=9, value="mauve")
    assert not isinstance(info.value, EditImpossible)
