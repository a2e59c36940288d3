"""COMPASS captions: levels and N ranges, absent-primitive negatives, matched perturbations."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from foilbench.construct.compass.captions import captions_for_graph, compass_rows
from foilbench.construct.compass.negatives import (
    PrimitivePools,
    primitive_present,
    replacement_tiers,
)
from foilbench.construct.compass.realise import Realiser, TemplateRealiser
from foilbench.construct.compass.sampling import (
    LEVELS,
    SKILL_OF_KIND,
    CaptionSpec,
    sample_caption_spec,
)
from foilbench.construct.compass.scene_graph import scene_graph_from_dict
from foilbench.construct.compass.world_graph import scene_graph_from_world, world_pools
from foilbench.world.scene import Obj, Scene
from foilbench.world.vocab import CATEGORIES, COLORS, MATERIALS, PATTERNS, SIZES

REALISER = TemplateRealiser()


def random_scene(rng: np.random.Generator, k: int) -> Scene:
    objs = [Obj(str(rng.choice(CATEGORIES)), str(rng.choice(list(COLORS))),
                str(rng.choice(MATERIALS)), str(rng.choice(PATTERNS)),
                size=str(rng.choice(list(SIZES))), x=float(rng.uniform(0.05, 0.95)),
                y=float(rng.uniform(0.05, 0.95))) for _ in range(k)]
    return Scene(tuple(objs), scene_id=f"t{k}-{rng.integers(1 << 30)}")


@pytest.fixture(scope="module")
def world_captions():
    rng = np.random.default_rng(7)
    pools = world_pools()
    out = []
    for _ in range(30):
        g = scene_graph_from_world(random_scene(rng, int(rng.integers(1, 9))))
        out += [(g, c) for c in captions_for_graph(g, pools, rng, REALISER, per_level=2)]
    return out


def test_levels_structure_and_n_ranges(world_captions):
    seen, extra = Counter(), Counter()
    for _, cap in world_captions:
        s = cap.spec
        lo, hi = LEVELS[s.level].n_min, LEVELS[s.level].n_max
        assert lo <= s.n_total <= hi
        assert len(s.primitives) == s.n_total == s.n_o + s.n_a + s.n_r
        if s.level == "L1":
            assert s.n_a == s.n_r == 0
        if s.level == "L2-OA":
            assert s.n_a >= 1 and s.n_r == 0
        if s.level == "L2-OR":
            assert s.n_a == 0 and s.n_r >= s.n_o - 1 >= 1
        if s.level == "L3-OAR":
            assert s.n_a >= 1 and s.n_r >= s.n_o - 1 >= 1
        if s.relations:  # at most one relation per object pair and relation group
            groups = world_pools().relation_groups
            keys = [(frozenset((a, b)), groups[p]) for a, p, b in s.relations]
            assert len(set(keys)) == len(keys)
        seen[(s.level, s.n_total)] += 1
        extra[s.level] += s.n_r - max(s.n_o - 1, 0)
    levels = {lvl for lvl, _ in seen}
    assert levels == set(LEVELS)
    for lvl in LEVELS:  # complexity varies within every level
        assert len({n for lv, n in seen if lv == lvl}) >= 3, seen
    # n_r is not tied to n_o (else b_O and b_R of the skill-load fit are not identifiable).
    assert extra["L2-OR"] > 0 and extra["L3-OAR"] > 0


def test_no_negative_uses_a_primitive_of_its_graph(world_captions):
    n_checked = Counter()
    for g, cap in world_captions:
        names, attrs, triples = g.names(), g.attribute_words(), g.name_triples()
        perts = list(cap.perturbations) + [p for negs in cap.skill_negatives.values()
                                           for p, _ in negs]
        for p in perts:
            assert not primitive_present(g, cap.spec, p)
            prim = cap.spec.primitives[p.index]
            if p.kind == "object":
                assert p.new not in names
            elif p.kind == "attribute":
                assert p.new not in attrs
            else:
                s, o = cap.spec.name_of(prim.object_id), cap.spec.name_of(prim.target_id)
                assert (s, p.new, o) not in triples and (s, p.old, o) in triples
            n_checked[p.kind] += 1
    assert min(n_checked.values()) > 20, n_checked


def test_open_world_relation_replacement_is_absent_predicate():
    g = scene_graph_from_dict({
        "image_id": 1,
        "objects": [{"object_id": 1, "names": ["sofa"], "attributes": ["brown"]},
                    {"object_id": 2, "names": ["room"]}],
        "relationships": [{"subject_id": 1, "predicate": "in", "object_id": 2}]})
    pools = PrimitivePools(("sofa", "room", "dog"), {"brown": "a", "red": "a"},
                           {"in": "in", "on": "on", "under": "under"})
    spec = CaptionSpec("1", "L2-OR", ((1, "sofa"), (2, "room")), (), ((1, "in", 2),))
    assert replacement_tiers(g, spec, 0, pools) == [["dog"]]
    assert sorted(sum(replacement_tiers(g, spec, 2, pools), [])) == ["on", "under"]


def test_closed_world_relation_needs_a_decided_pair():
    # cube/sphere close on both axes: only "next to" and size are listed.
    scene = Scene((Obj("cube", "red", size="small", x=0.50, y=0.50),
                   Obj("sphere", "blue", x=0.52, y=0.53)))
    g = scene_graph_from_world(scene)
    spec = CaptionSpec(g.image_id, "L2-OR", ((0, "cube"), (1, "sphere")), (),
                       ((0, "next to", 1),))
    # "left of"/"behind" would be unsafe (the pair is undecided there): without categories
    # only the size flip is left; with COMPASS §3.2's same-category rule (spatial for "next
    # to") nothing is, and the primitive gets no negative.
    plain = world_pools().with_rules(None)
    assert sum(replacement_tiers(g, spec, 2, plain), []) == ["bigger than"]
    assert sum(replacement_tiers(g, spec, 2, world_pools()), []) == []


def test_composed_and_decomposed_perturbations_correspond(world_captions):
    for _, cap in world_captions:
        spec = cap.spec
        assert len(cap.perturbations) == len(cap.composed_negatives) == len(cap.decomposed)
        assert len(cap.perturbations) == spec.n_total
        for i, (p, c_neg, (d, d_neg)) in enumerate(
                zip(cap.perturbations, cap.composed_negatives, cap.decomposed, strict=True)):
            assert p.index == i and spec.primitives[i].value == p.old
            changed = spec.replaced(i, p.new)
            diff = [k for k, (a, b) in enumerate(
                zip(spec.primitives, changed.primitives, strict=True))
                    if a != b]
            assert diff == [i]
            assert c_neg == REALISER.composed(changed) != cap.text
            assert d == REALISER.decomposed(spec, i)
            assert d_neg == REALISER.decomposed(changed, i) != d
            assert p.new in c_neg and p.new in d_neg


def test_skill_negatives_k4_distinct_and_retargeting(world_captions):
    retargeted = 0
    for _, cap in world_captions:
        kinds = Counter(p.kind for p in cap.spec.primitives)
        for skill, negs in cap.skill_negatives.items():
            texts = [t for _, t in negs]
            assert len(texts) == 4 and len(set(texts)) == len(texts)  # exactly K = 4
            assert cap.text not in texts
            targets = Counter(p.index for p, _ in negs)
            kind = negs[0][0].kind
            assert all(p.kind == kind for p, _ in negs) and skill == SKILL_OF_KIND[kind]
            if kind == "object":
                assert len(texts) == 4  # 12 categories, at most 8 in a scene
            if kinds[kind] >= 4:
                assert max(targets.values()) == 1  # enough primitives: each targeted once
            else:
                retargeted += 1
                for idx in targets:  # a re-targeted primitive got different replacements
                    news = [p.new for p, _ in negs if p.index == idx]
                    assert len(set(news)) == len(news)
    assert retargeted > 0


def test_rows_deterministic_and_complete():
    rng = np.random.default_rng(3)
    scenes = [random_scene(rng, 4) for _ in range(3)]
    graphs = [(scene_graph_from_world(s), f"images/{k}.png") for k, s in enumerate(scenes)]
    a = compass_rows(graphs, world_pools(), seed=11)
    b = compass_rows(graphs, world_pools(), seed=11)
    assert a == b
    assert compass_rows(graphs, world_pools(), seed=12) != a
    by_caption = Counter((r["caption_id"], r["role"]) for r in a)
    for r in a:
        if r["role"] == "composed":
            assert len(r["captions"]) == r["n_primitives"] + 1
            assert by_caption[(r["caption_id"], "decomposed")] == r["n_primitives"]
        if r["role"] == "decomposed":
            assert len(r["captions"]) == 2
    assert {r["role"] for r in a} == {"composed", "decomposed", "skill"}


def test_template_realiser_hand_cases():
    spec = CaptionSpec("g", "L3-OAR", ((1, "cube"), (2, "sphere"), (3, "mug")),
                       ((1, "red"), (3, "orange")), ((1, "left of", 2), (3, "behind", 2)))
    r = TemplateRealiser()
    assert isinstance(r, Realiser)
    assert r.composed(spec) == "a red cube left of a sphere, and an orange mug behind the sphere"
    assert [r.decomposed(spec, i) for i in range(7)] == [
        "There is a cube in the image.", "There is a sphere in the image.",
        "There is a mug in the image.", "There is a red cube.", "There is an orange mug.",
        "The cube is left of the sphere.", "The mug is behind the sphere."]
    flat = CaptionSpec("g", "L2-OA", ((1, "cube"), (2, "sphere"), (3, "mug")), ((2, "big"),))
    assert r.composed(flat) == "a cube, a big sphere and a mug"
    assert r.composed(spec.replaced(1, "lamp")) == (
        "a red cube left of a lamp, and an orange mug behind the lamp")


def test_unknown_level_is_a_clear_error():
    g = scene_graph_from_world(Scene((Obj("cube", "red"),)))
    with pytest.raises(ValueError, match="possible: L1, L2-OA, L2-OR, L3-OAR"):
        sample_caption_spec(g, "L4", np.random.default_rng(0))
    # One object cannot carry a relation: the level is skipped, not faked.
    assert sample_caption_spec(g, "L2-OR", np.random.default_rng(0)) is None


def _true_words(obj: Obj) -> set[str]:
    """Every attribute word true of ``obj``, defaults included (independent of the graph)."""
    from foilbench.world.phrases import MATERIAL_WORDS, effective_state

    return {obj.color, MATERIAL_WORDS[obj.material], obj.pattern, obj.transparency, obj.size,
            effective_state(obj) or ""}


def _relation_holds(a: Obj, p: str, b: Obj) -> bool:
    """Loose truth (no margin): anything not clearly false counts as possibly true."""
    return {
        "left of": a.x <= b.x, "right of": a.x >= b.x, "in front of": a.y >= b.y,
        "behind": a.y <= b.y, "bigger than": SIZES[a.size] >= SIZES[b.size],
        "smaller than": SIZES[a.size] <= SIZES[b.size], "next to": True,
    }[p]


def test_world_negatives_are_false_of_the_scene_itself():
    """Check against the Scene's raw fields, not the graph: every object, attribute and
    relation negative is false for every object that its names could refer to."""
    rng = np.random.default_rng(21)
    pools = world_pools()
    checked = Counter()
    for _ in range(25):
        scene = random_scene(rng, int(rng.integers(2, 9)))
        g = scene_graph_from_world(scene)
        for cap in captions_for_graph(g, pools, rng, REALISER, per_level=2):
            perts = list(cap.perturbations) + [p for negs in cap.skill_negatives.values()
                                               for p, _ in negs]
            for p in perts:
                prim = cap.spec.primitives[p.index]
                if p.kind == "object":
                    assert all(o.category != p.new for o in scene.objects)
                elif p.kind == "attribute":
                    assert all(p.new not in _true_words(o) for o in scene.objects), p
                else:
                    sname = cap.spec.name_of(prim.object_id)
                    oname = cap.spec.name_of(prim.target_id)
                    for a in scene.objects:
                        for b in scene.objects:
                            if a is not b and (a.category, b.category) == (sname, oname):
                                assert not _relation_holds(a, p.new, b), (p, a, b)
                checked[p.kind] += 1
    assert min(checked.values()) > 20, checked


def test_unmarked_defaults_never_replace():
    attrs = world_pools().attribute_groups
    assert not {"medium", "opaque", "plain"} & set(attrs)
    assert attrs["open"] == attrs["closed"] != attrs["lit"]


def test_duplicate_names_block_an_undecided_relation():
    # Two boxes on either side of the bottle: "box right of bottle" is true of one of them.
    scene = Scene((Obj("box", "red", x=0.1, y=0.2), Obj("bottle", "blue", x=0.5, y=0.5),
                   Obj("box", "green", x=0.9, y=0.2)))
    g = scene_graph_from_world(scene)
    spec = CaptionSpec(g.image_id, "L2-OR", ((0, "box"), (1, "bottle")), (), ((0, "left of", 1),))
    options = sum(replacement_tiers(g, spec, 2, world_pools()), [])
    # a spatial relation is replaced on its own axis (categories.json "horizontal"): the one
    # mate, "right of", is true of one box, so nothing is left
    assert "right of" not in options and options == []
    alone = Scene((Obj("box", "red", x=0.1, y=0.2), Obj("bottle", "blue", x=0.5, y=0.5)))
    g1 = scene_graph_from_world(alone)
    assert sum(replacement_tiers(g1, spec, 2, world_pools()), []) == ["right of"]


def test_prompt_realiser_uses_generator_and_falls_back():
    from foilbench.construct.compass.realise import PromptRealiser

    spec = CaptionSpec("g", "L2-OR", ((1, "cube"), (2, "sphere")), (), ((1, "left of", 2),))
    prompts = []

    def fluent(prompt):
        prompts.append(prompt)
        return "  A cube sits left of a sphere. "

    r = PromptRealiser(fluent)
    assert isinstance(r, Realiser)
    assert r.composed(spec) == "A cube sits left of a sphere."
    assert "- relation: the cube is left of the sphere" in prompts[0]
    assert r.fallbacks == 0
    lossy = PromptRealiser(lambda prompt: "A cube and a ball.")
    assert lossy.composed(spec) == TemplateRealiser().composed(spec)
    assert lossy.fallbacks == 1
    assert lossy.decomposed(spec, 2) == "The cube is left of the sphere."
