"""Caption tiers: the edit phrase is the only difference, tiers nest, long fits CLIP's context."""

from __future__ import annotations

import numpy as np
import pytest

from foilbench.world.captions import (
    MAX_TOKENS,
    TIERS,
    describe_scene,
    edit_captions,
    token_count,
)
from foilbench.world.cast import sample_cast_scene
from foilbench.world.edit_core import EditImpossible
from foilbench.world.edits import EDIT_TYPES, apply_edit
from foilbench.world.sample import sample_scene
from foilbench.world.scene import Obj, Scene


def random_edits(n_scenes=12, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n_scenes):
        n = int(rng.integers(2, 7))
        scene = None
        if k % 3 == 0:  # a third of the scenes hold an acting pair of agents
            scene = sample_cast_scene(rng, max(n, 3), "minimal", ("acting pair",))
        if scene is None:
            scene = sample_scene(rng, n, "minimal")
        for name in EDIT_TYPES:
            try:
                out.append(apply_edit(scene, name, rng))
            except EditImpossible:
                pass
    return out


EDITS = random_edits()


def test_enough_edit_types_exercised():
    types = {e.edit_type for e in EDITS}
    assert len(types) >= 14 and {"modify_action", "swap_role"} <= types


@pytest.mark.parametrize("k", range(0, len(EDITS), 3))
def test_tier_invariants(k):
    edit = EDITS[k]
    caps = edit_captions(edit)
    assert tuple(caps) == TIERS
    pb, pf = edit.base_phrase.text(), edit.foil_phrase.text()
    assert caps["short"] == (pb, pf)
    for tier in TIERS:
        base, foil = caps[tier]
        assert pb in base and pf in foil
        # base and foil differ only by the edit phrase: the same context around it
        assert base.replace(pb, "<EDIT>", 1) == foil.replace(pf, "<EDIT>", 1)
        assert base != foil
    # the tiers nest: medium extends the phrase, long extends medium
    for side in (0, 1):
        assert caps["long"][side].startswith(caps["medium"][side]) or (
            caps["long"][side] == caps["medium"][side])
        assert token_count(caps["long"][side]) <= MAX_TOKENS
        assert token_count(caps["short"][side]) <= token_count(caps["medium"][side])


def test_long_mentions_every_object_when_it_fits():
    scene = Scene((Obj("cube", "red", x=0.2, y=0.3), Obj("cone", "teal", x=0.5, y=0.3),
                   Obj("mug", "navy", material="wood", x=0.8, y=0.3)))
    edit = apply_edit(scene, "modify_color", 0, target=0, value="blue")
    base, foil = edit_captions(edit)["long"]
    assert base == "a red cube next to a teal cone, with a navy wooden mug, on a white background"
    assert foil == "a blue cube next to a teal cone, with a navy wooden mug, on a white background"


def test_long_drops_far_objects_to_fit_the_budget():
    objs = tuple(Obj(c, "crimson", material="wood", pattern="checkered",
                     transparency="translucent", size="small", x=x, y=y)
                 for c, x, y in (("cube", 0.1, 0.1), ("cone", 0.3, 0.1), ("mug", 0.5, 0.1),
                                 ("cylinder", 0.7, 0.1), ("pyramid", 0.9, 0.1),
                                 ("chair", 0.1, 0.9), ("ball", 0.5, 0.9), ("sphere", 0.9, 0.9)))
    edit = apply_edit(Scene(objs), "modify_color", 0, target=0, value="blue")
    full = edit_captions(edit)["long"][0]
    assert "sphere" in full and token_count(full) > 45  # 8 objects fit 77 tokens ...
    base, foil = edit_captions(edit, max_tokens=45)["long"]  # ... but not 45
    assert token_count(base) <= 45 and token_count(foil) <= 45
    assert "sphere" not in base  # the farthest object went first
    assert "cone" in base and "mug" in base  # the nearest stayed


def test_disambiguation_by_location_when_two_objects_share_a_category():
    scene = Scene((Obj("cube", "red", x=0.1, y=0.5), Obj("cube", "red", x=0.9, y=0.5),
                   Obj("cone", "teal", x=0.5, y=0.5)))
    edit = apply_edit(scene, "modify_material", 0, target=1, value="metal")
    short = edit_captions(edit)["short"]
    assert short == ("a red matte cube on the right", "a red metal cube on the right")


def test_disambiguation_by_appearance():
    scene = Scene((Obj("cube", "red", pattern="striped", x=0.45, y=0.2),
                   Obj("cube", "red", x=0.55, y=0.9), Obj("cone", "teal", x=0.9, y=0.5)))
    edit = apply_edit(scene, "modify_color", 0, target=0, value="blue")
    assert edit_captions(edit)["short"] == ("a red striped cube", "a blue striped cube")


def test_describe_scene_groups_and_fits():
    scene = Scene((Obj("cube", "red", x=0.2), Obj("cube", "red", x=0.6),
                   Obj("lamp", "gold", state="lit", x=0.9)), condition="contextual")
    assert describe_scene(scene) == "two red cubes and a lit gold lamp in a cluttered room"
    rng = np.random.default_rng(3)
    for _ in range(20):
        text = describe_scene(sample_scene(rng, 8, "minimal"))
        assert token_count(text) <= MAX_TOKENS
