"""autocomp-n1: Auto-Comp's N = 1 baselines (App. A.3, Table 14: "Vary Color | Vary Object"),
negatives hand-listed, and the benchmark's items."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from PIL import Image

from foilbench.construct.autocomp.n1 import (
    NAME,
    build_autocomp_n1,
    recognition_negatives,
)
from foilbench.data.format import load_benchmark, write_benchmark
from foilbench.negatives import Concept, apply_frame, caption
from foilbench.world.autocomp import TASK_VALUES


def test_vary_color_is_every_other_colour_in_vocabulary_order():
    """Table 14, "Vary Color": the same object in another colour."""
    got = recognition_negatives(Concept("color", ["mug"], ["red"]), "vary_color")
    others = [c for c in TASK_VALUES["color"] if c != "red"]
    assert got[0] == "a crimson mug" and got[1] == "an orange mug"
    assert got == [caption(Concept("color", ["mug"], [c])) for c in others]
    assert "a red mug" not in got


def test_vary_object_is_every_other_object_in_the_same_colour():
    """Table 14, "Vary Object": another object in the same colour."""
    got = recognition_negatives(Concept("color", ["mug"], ["red"]), "vary_object")
    assert got == ["a red bottle", "a red box", "a red ball", "a red book", "a red lamp",
                   "a red chair"]
    shapes = recognition_negatives(Concept("shape_color", ["cone"], ["navy"]), "vary_object")
    assert shapes == ["a navy cube", "a navy sphere", "a navy cylinder", "a navy pyramid"]


def test_bad_input_names_what_is_possible():
    with pytest.raises(ValueError, match="possible: color, shape_color"):
        recognition_negatives(Concept("position", ["mug"], []), "vary_color")
    with pytest.raises(ValueError, match="exactly 1 object"):
        recognition_negatives(Concept("color", ["mug", "box"], ["red", "blue"]), "vary_color")
    with pytest.raises(ValueError, match="possible: vary_color, vary_object"):
        recognition_negatives(Concept("color", ["mug"], ["red"]), "vary_shape")
    with pytest.raises(ValueError, match="possible: color, shape_color"):
        build_autocomp_n1("/nonexistent", tasks=("relative_size",), progress=False)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("n1")
    return build_autocomp_n1(root, seed=3, n_concepts=2, size=48, progress=False)


def test_items_pair_both_conditions_with_one_object(bench):
    df = bench.items
    assert bench.name == NAME and bench.kind == "choice"
    assert len(df) == 2 * 2 * 2 * 2  # tasks x concepts x conditions x (vary color, object)
    assert set(df["condition"]) == {"minimal", "contextual"}
    per_concept = df.groupby("concept_id")
    assert (per_concept["condition"].nunique() == 2).all()
    assert (per_concept["scene_id"].nunique() == 1).all()
    assert (df["n_objects"] == 1).all() and (df["operation"] == "recognition").all()
    assert set(df["negative_set"]) == {"vary_color", "vary_object"}
    assert set(df["task"]) == {"color", "shape_color"} and (df["edit_type"] == df["task"]).all()
    # the paper's split is Color; shape_color is foilbench's analogue, labelled as such
    assert set(df.loc[df.task == "color", "origin"]) == {"Auto-Comp Table 14"}
    assert set(df.loc[df.task == "shape_color", "origin"]) == {"foilbench"}
    for _, row in df.iterrows():
        concept = Concept(row["task"], list(row["objects"]), list(row["values"]))
        texts = [caption(concept), *recognition_negatives(concept, row["negative_set"])]
        assert list(row["captions"]) == [apply_frame(row["caption_frame"], t) for t in texts]
        if row["condition"] == "minimal":
            assert row["captions"][0] == caption(concept) + " on a white background"
        assert row["n_negatives"] == len(row["captions"]) - 1
        assert len(row["true_negatives"]) == row["n_true_negatives"] == 0
    assert bench.manifest.primary_metric == "r1_valid"
    # the two conditions of a concept are different pictures of the same concept
    for _, group in per_concept:
        a, b = (np.asarray(Image.open(bench.image_path(p))) for p in group["image"].unique())
        assert a.shape == b.shape and not np.array_equal(a, b)


def test_same_seed_same_bytes(tmp_path):
    def digest(path):
        bench = build_autocomp_n1(path, seed=1, n_concepts=1, size=32, progress=False)
        write_benchmark(bench, path, copy_images=False)
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(path.rglob("*")) if p.is_file()}

    a, b = digest(tmp_path / "a"), digest(tmp_path / "b")
    assert a == b and "items.parquet" in a
    assert len(load_benchmark(tmp_path / "a")) == 2 * 1 * 2 * 2
