"""Agents: robots whose action is visible (modify_action) and who act on one another
(swap_role); the casting that gives the rare edit types their quota; gold metal stays gold."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from foilbench.construct.composet.pair_plan import TYPE_QUOTA, plan_benchmark
from foilbench.construct.composet.pairs import check_outside_mask, edit_mask
from foilbench.world.captions import TIERS, edit_captions
from foilbench.world.cast import CASTS, sample_cast_scene
from foilbench.world.edit_agent import role_pairs
from foilbench.world.edit_core import EditImpossible
from foilbench.world.edits import apply_edit
from foilbench.world.layout import body_box
from foilbench.world.phrases import Action, NounPhrase, acted_on, holds
from foilbench.world.render import render_layers
from foilbench.world.scene import Obj, Scene
from foilbench.world.vocab import ACTIONS, STATES


def pair_scene(partner_state: str = "sitting") -> Scene:
    return Scene((
        Obj("robot", "red", state="pointing right", x=0.2, y=0.5),
        Obj("robot", "blue", state=partner_state, x=0.6, y=0.5),
        Obj("cube", "green", x=0.95, y=0.5),
        Obj("mug", "gold", x=0.4, y=0.95),  # between in x, but far in front: out of line
    ))


def test_pointing_targets_the_nearest_object_in_line():
    scene = pair_scene()
    assert acted_on(scene, 0) == 1  # the mug at x = 0.4 is in front, not in line
    assert acted_on(scene, 1) is None  # sitting points at nothing
    # an object in line between them becomes the target
    closer = scene.with_objects((*scene.objects, Obj("ball", "pink", x=0.4, y=0.45)))
    assert acted_on(closer, 0) == 4
    # a robot pointing left at the scene edge has no target
    lone = Scene((Obj("robot", "red", state="pointing left", x=0.1, y=0.5),))
    assert acted_on(lone, 0) is None


def test_action_phrase_semantics_and_text():
    red, blue = NounPhrase("robot", color="red"), NounPhrase("robot", color="blue")
    scene = pair_scene()
    assert holds(Action(red, blue), scene) and not holds(Action(blue, red), scene)
    assert Action(red, blue).text() == "a red robot pointing at a blue robot"
    sitting = NounPhrase("robot", color="blue", state="sitting")
    assert sitting.text() == "a blue robot sitting"
    pointing = NounPhrase("robot", color="red", state="pointing right", location="left")
    assert pointing.text() == "a red robot pointing to the right on the left"


@pytest.mark.parametrize("name", ["modify_action", "swap_role"])
@pytest.mark.parametrize("condition", ["minimal", "contextual"])
def test_agent_edits_change_pixels_only_inside_the_mask(name, condition):
    scene = pair_scene().with_objects(pair_scene().objects)
    scene = Scene(scene.objects, condition, background_seed=3)
    edit = apply_edit(scene, name, 0)
    base, foil = render_layers(edit.base, 160), render_layers(edit.foil, 160)
    mask = edit_mask(edit, base, foil)
    changed = (np.asarray(base.image) != np.asarray(foil.image)).any(axis=2)
    assert changed.sum() > 30  # the action is visible, not a few pixels
    assert check_outside_mask(base.image, foil.image, mask) == 0
    assert mask[changed].all()


@pytest.mark.parametrize("name", ["modify_action", "swap_role"])
def test_agent_captions_differ_by_the_edit_phrase_at_every_tier(name):
    edit = apply_edit(pair_scene(), name, 1)
    caps = edit_captions(edit)
    pb, pf = edit.base_phrase.text(), edit.foil_phrase.text()
    assert pb != pf
    for tier in TIERS:
        base, foil = caps[tier]
        assert base.replace(pb, "<EDIT>", 1) == foil.replace(pf, "<EDIT>", 1)
    if name == "swap_role":
        assert (pb, pf) == ("a red robot pointing at a blue robot",
                            "a blue robot pointing at a red robot")
        assert caps["medium"][0] == pb + ", next to a gold mug"  # the nearest other object
    else:
        assert pb.startswith("a blue robot ") and pf.startswith("a blue robot ")


def test_swap_role_exchanges_the_actions():
    edit = apply_edit(pair_scene("waving"), "swap_role", 0)
    a, b = edit.foil.objects[:2]
    assert (a.state, b.state) == ("waving", "pointing left")
    assert role_pairs(edit.foil) == [(1, 0)]


def test_swap_role_needs_two_distinguishable_agents():
    # identical robots, both near a third of the frame (so location cannot tell them apart)
    twins = Scene((Obj("robot", "red", state="pointing right", x=0.3, y=0.5),
                   Obj("robot", "red", state="standing", x=0.65, y=0.5)))
    with pytest.raises(EditImpossible, match="swap_role.*acting pair"):
        apply_edit(twins, "swap_role", 0)
    with pytest.raises(EditImpossible, match="modify_action"):
        apply_edit(Scene((Obj("cube", "red"),)), "modify_action", 0)


@pytest.mark.parametrize("state", STATES["robot"])
def test_every_action_renders_distinctly_from_standing(state):
    def pixels(s):
        return np.asarray(render_layers(Scene((Obj("robot", "teal", state=s),)), 96).image)

    if state != "standing":
        assert (pixels(state) != pixels("standing")).any(axis=2).sum() > 20


def test_cast_scenes_hold_their_cast_and_are_seeded():
    for seed in range(6):
        a = sample_cast_scene(np.random.default_rng(seed), 5, "minimal", CASTS)
        b = sample_cast_scene(np.random.default_rng(seed), 5, "minimal", CASTS)
        assert a == b
        if a is not None:
            cats = Counter(o.category for o in a.objects)
            # the cast (six objects) outgrows the five asked for
            assert cats["robot"] >= 3 and cats["bottle"] >= 1 and len(a.objects) == 6
    with pytest.raises(ValueError, match="cast"):
        sample_cast_scene(np.random.default_rng(0), 3, "minimal", ("dragon",))


def test_acting_pairs_mostly_give_a_role_swap():
    ok = 0
    for seed in range(40):
        scene = sample_cast_scene(np.random.default_rng(seed), 4, "minimal", ("acting pair",))
        ok += scene is not None and bool(role_pairs(scene))
    assert ok >= 20


def test_plan_gives_every_edit_type_its_quota():
    plan = plan_benchmark(0, 80, 16)
    kept = Counter(e.edit_type for p in plan for e in p.edits[:16])
    assert len(kept) == 16
    assert min(kept.values()) >= TYPE_QUOTA > 60
    agents = [o for p in plan for o in p.scene.objects if o.category == "robot"]
    assert {o.state for o in agents} >= set(ACTIONS)


def _saturation(rgb):
    mx, mn = rgb.max(axis=-1), rgb.min(axis=-1)
    return (mx - mn) / np.maximum(mx, 1e-6)


@pytest.mark.parametrize("category", ["cube", "box"])
def test_gold_metal_keeps_gold_saturation_at_160px(category):
    """Flat metal faces used to take a broad white highlight that turned gold almost white
    (median saturation 0.45 against matte gold's 0.81 on a cube)."""
    def body_pixels(material):
        obj = Obj(category, "gold", material=material)
        layers = render_layers(Scene((obj,)), 160)
        img = np.asarray(layers.image).astype(float) / 255
        x0, y0, x1, y1 = (int(round(v * 160)) for v in body_box(obj))
        return img[y0:y1, x0:x1][layers.masks[0][y0:y1, x0:x1]]

    metal, matte = body_pixels("metal"), body_pixels("matte")
    assert (metal.min(axis=-1) > 0.75).mean() <= (matte.min(axis=-1) > 0.75).mean() + 0.01
    assert np.median(_saturation(metal)) > 0.75 * np.median(_saturation(matte))
