"""Auto-Comp in the world: concept scenes realise their captions; benchmark counts and pairing."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from foilbench.construct.autocomp.bench import build_autocomp, concept_id, sample_concepts
from foilbench.construct.autocomp.captions import CONTEXT_FRAMES, MINIMAL_FRAME
from foilbench.negatives import (
    Concept,
    apply_frame,
    caption,
    negatives_with_report,
    true_negatives,
)
from foilbench.world.autocomp import (
    SIZE_COMPARABLE,
    SOLIDS,
    chain_holds,
    concept_scene,
    relation_holds,
    sample_concept_words,
    size_levels,
)
from foilbench.world.layout import visibility_ok
from foilbench.world.render import render_layers
from foilbench.world.scene import Obj
from foilbench.world.vocab import RELATIONS, SIZES

# captions per item = 1 positive + negatives (closed forms; duplicates only for repeated words)
CAPTIONS = {
    ("swap", "attribute", 2): 2, ("swap", "attribute", 3): 6,
    ("swap", "relation", 2): 2, ("swap", "relation", 3): 6,
    ("confusion", "attribute", 2): 16, ("confusion", "attribute", 3): 729,
    ("confusion", "relation", 2): 4, ("confusion", "relation", 3): 108,
}


@pytest.fixture(scope="module")
def benches(tmp_path_factory):
    root = tmp_path_factory.mktemp("autocomp")
    return build_autocomp(root, seed=3, n_concepts=2, size=64, ns=(1, 2, 3), progress=False)


def test_candidate_counts_per_item(benches):
    for op, bench in benches.items():
        for row in bench.items.itertuples():
            expected = CAPTIONS[(op, row.category, row.n_objects)]
            # a relation repeated in the chain makes some confusion texts equal: removed, counted
            assert len(row.captions) + row.n_duplicates_removed == expected
            assert len(set(row.captions)) == len(row.captions)
            assert row.n_negatives == len(row.captions) - 1


def test_attribute_confusion_at_n3_keeps_all_728(benches):
    items = benches["confusion"].items
    n3 = items[(items.category == "attribute") & (items.n_objects == 3)]
    assert len(n3) > 0 and (n3.n_negatives == 728).all()


def test_positive_is_first_and_matches_the_concept(benches):
    for bench in benches.values():
        for row in bench.items.itertuples():
            concept = Concept(row.task, tuple(row.objects), tuple(row.values))
            assert row.captions[0] == apply_frame(row.caption_frame, caption(concept))
            assert row.concept_id == concept_id(concept)


def test_conditions_differ_in_wording_and_negatives_follow_the_frame(benches):
    """Auto-Comp §3: Minimal captions add "the suffix 'on a white background'"; Contextual ones
    are rewritten; negatives differ from the positive "only in the swapped conceptual
    elements"."""
    for op, bench in benches.items():
        for row in bench.items.itertuples():
            concept = Concept(row.task, tuple(row.objects), tuple(row.values))
            negatives = getattr(negatives_with_report(concept), op)
            assert list(row.captions) == [apply_frame(row.caption_frame, t)
                                          for t in (caption(concept), *negatives)]
            if row.condition == "minimal":
                assert row.caption_frame == MINIMAL_FRAME
                assert all(c.endswith(" on a white background") for c in row.captions)
            else:
                assert row.caption_frame in CONTEXT_FRAMES
                assert not any("white background" in c for c in row.captions)
        assert bench.manifest.extras["caption_realiser"] == "template"
        assert bench.manifest.primary_metric == "r1_valid"
        assert bench.manifest.extras["loglik_norm"]["norm"] == "sum"


def test_true_negatives_hold_every_equivalent_one(benches):
    """Negatives that mean the positive (true_negatives(concept)) are flagged on every item;
    the drawn-scene check may add more, never fewer."""
    for op, bench in benches.items():
        for row in bench.items.itertuples():
            concept = Concept(row.task, tuple(row.objects), tuple(row.values))
            same = {apply_frame(row.caption_frame, t) for t in true_negatives(concept, op)}
            assert {row.captions[i] for i in row.equivalent_negatives} == same
            assert set(row.equivalent_negatives) <= set(row.true_negatives)
            assert row.n_equivalent_negatives == len(row.equivalent_negatives)
        extras = bench.manifest.extras
        assert extras["items_with_true_negative"] == int((bench.items.n_true_negatives > 0)
                                                         .sum())


def test_n1_gives_no_items_because_no_negatives_exist(benches):
    for bench in benches.values():
        assert (bench.items.n_objects > 1).all()
        cells = bench.manifest.extras["cells"]
        assert all(c["swap_items"] == 0 and c["confusion_items"] == 0 for c in cells
                   if c["n"] == 1)


def test_both_conditions_present_and_paired(benches):
    for bench in benches.values():
        items = bench.items
        per_concept = items.groupby("concept_id")
        for _, group in per_concept:
            assert sorted(group.condition) == ["contextual", "minimal"]
            assert group.scene_id.nunique() == 1  # the same objects in both conditions
            assert group.image.nunique() == 2
        cells = items.groupby(["task", "n_objects", "condition"]).size()
        assert (cells == 2).all()  # two concepts per (task, N) in each condition


def test_metadata_columns(benches):
    items = benches["swap"].items
    assert (items.edit_type == items.task).all()
    assert set(items.operation) == {"swap"} and set(benches["confusion"].items.operation) == {
        "confusion"}
    assert set(items.task) == {"color", "shape_color", "position", "relative_size"}


# --- concept scenes -------------------------------------------------------------------------


@pytest.mark.parametrize("task", ["color", "shape_color", "position", "relative_size"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_concept_scene_shows_exactly_n_objects_that_realise_it(task, n):
    rng = np.random.default_rng([n, len(task)])
    for _ in range(3):
        objects, values = sample_concept_words(rng, task, n)
        scene = concept_scene(rng, task, objects, values)
        assert [o.category for o in scene.objects] == list(objects)
        for condition in ("minimal", "contextual"):
            masks = render_layers(replace(scene, condition=condition), 96).masks
            assert len(masks) == n and all(m.sum() > 10 for m in masks)
            # apart where they fit; a size chain may overlap, each object mostly in view
            assert (masks.sum(axis=0) <= 1).all() or (
                task == "relative_size" and visibility_ok(scene.objects))
        if task in ("color", "shape_color"):
            assert [o.color for o in scene.objects] == list(values)
        else:
            assert chain_holds(scene.objects, values)
        if task == "shape_color":
            assert set(objects) <= set(SOLIDS)
        if task == "relative_size":
            assert set(objects) <= set(SIZE_COMPARABLE)


def test_every_pair_of_position_relations_is_realisable():
    rng = np.random.default_rng(0)
    for rels in itertools.product(RELATIONS, repeat=2):
        scene = concept_scene(rng, "position", ("cube", "mug", "lamp"), rels)
        assert chain_holds(scene.objects, rels)


def test_relation_truth_by_hand():
    left = Obj("cube", "red", x=0.1, y=0.5)
    right = Obj("cube", "blue", x=0.9, y=0.5)
    back = Obj("cube", "red", x=0.5, y=0.0, size="small")
    front = Obj("cube", "blue", x=0.5, y=1.0, size="small")
    assert relation_holds(left, right, "left of") and relation_holds(right, left, "right of")
    assert not relation_holds(left, right, "above") and not relation_holds(right, left, "left of")
    assert relation_holds(back, front, "above") and relation_holds(front, back, "below")
    assert not relation_holds(back, front, "left of")
    big, small = left.with_(size="large"), right.with_(size="small")
    assert relation_holds(big, small, "bigger than") and relation_holds(small, big, "smaller than")
    assert not relation_holds(left, right, "bigger than")  # equal sizes: neither


def test_size_levels_prefer_the_clearest_gap():
    rng = np.random.default_rng(0)
    assert size_levels(rng, ["bigger than"]) == ("large", "small")
    assert size_levels(rng, ["smaller than", "smaller than"]) == ("small", "medium", "large")
    a, b, c = size_levels(rng, ["bigger than", "smaller than"])
    assert SIZES[a] > SIZES[b] < SIZES[c]


def test_sampled_concepts_are_distinct_and_seeded():
    first = [c for c, _ in sample_concepts(0, "color", 2, 10)]
    again = [c for c, _ in sample_concepts(0, "color", 2, 10)]
    assert first == again and len({concept_id(c) for c in first}) == 10
    other = [c for c, _ in sample_concepts(1, "color", 2, 10)]
    assert first != other


def test_bad_input_names_what_is_possible(tmp_path):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="unknown Auto-Comp task 'texture'.*color"):
        sample_concept_words(rng, "texture", 2)
    with pytest.raises(ValueError, match="n=0 out of range"):
        sample_concept_words(rng, "color", 0)
    with pytest.raises(ValueError, match="object for task 'shape_color'.*cube"):
        concept_scene(rng, "shape_color", ("mug", "cube"), ("red", "blue"))
    with pytest.raises(ValueError, match="N=4 out of range; possible: 1 to 3"):
        build_autocomp(tmp_path, ns=(4,), progress=False)


def test_true_negatives_are_flagged(benches):
    """Attribute Confusion holds exactly the N! - 1 paraphrases (same bindings, other order);
    attribute Swap negatives are never true."""
    for op, bench in benches.items():
        attr = bench.items[bench.items.category == "attribute"]
        for row in attr.itertuples():
            expected = {("swap", 2): 0, ("swap", 3): 0, ("confusion", 2): 1,
                        ("confusion", 3): 5}[(op, row.n_objects)]
            assert row.n_true_negatives == expected == len(row.true_negatives)
            for i in row.true_negatives:  # a paraphrase uses the positive's words
                words = sorted(row.captions[i].replace(",", "").split())
                assert words == sorted(row.captions[0].replace(",", "").split())


def test_relational_truth_checks_every_clause():
    from foilbench.construct.autocomp.bench import negative_truths

    cube = Obj("cube", "red", x=0.1, y=0.5)
    mug = Obj("mug", "blue", x=0.5, y=0.5)
    cone = Obj("cone", "green", x=0.9, y=0.5)
    concept = Concept("position", ("cube", "mug", "cone"), ("left of", "left of"))
    truths = negative_truths(concept, (cube, mug, cone))
    assert truths["a cube left of a mug, and the mug left of a cone"]
    assert truths["a cube left of a cone, and the cone left of a mug"] is False
    assert truths["a cube left of a mug, and the mug left of a mug"] is False  # repeated object
