"""autocomp-n1: the N = 1 recognition negatives (hand-listed) and the benchmark's items."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from PIL import Image

from foilbench.construct.autocomp_n1 import (
    NAME,
    build_autocomp_n1,
    recognition_negatives,
)
from foilbench.data.format import load_benchmark, write_benchmark
from foilbench.negatives import Concept, caption
from foilbench.world.autocomp import TASK_VALUES


def test_color_negatives_are_every_other_colour_in_vocabulary_order():
    got = recognition_negatives(Concept("color", ["mug"], ["red"]))
    others = [c for c in TASK_VALUES["color"] if c != "red"]
    assert [k for k, _ in got] == ["color"] * len(others)
    assert got[0][1] == "a crimson mug" and got[1][1] == "an orange mug"
    assert [t for _, t in got] == [caption(Concept("color", ["mug"], [c])) for c in others]
    assert "a red mug" not in [t for _, t in got]


def test_shape_color_replaces_colour_then_shape_one_at_a_time():
    got = recognition_negatives(Concept("shape_color", ["cone"], ["navy"]))
    n_colours = len(TASK_VALUES["shape_color"]) - 1
    assert [k for k, _ in got] == ["color"] * n_colours + ["shape"] * 4
    assert [t for _, t in got[n_colours:]] == [
        "a navy cube", "a navy sphere", "a navy cylinder", "a navy pyramid"]
    assert "a red cone" in [t for _, t in got[:n_colours]]
    # never both words at once: every negative keeps the colour or the shape
    assert all("navy" in t or t.endswith(" cone") for _, t in got)


def test_bad_input_names_what_is_possible():
    with pytest.raises(ValueError, match="possible: color, shape_color"):
        recognition_negatives(Concept("position", ["mug"], []))
    with pytest.raises(ValueError, match="exactly 1 object"):
        recognition_negatives(Concept("color", ["mug", "box"], ["red", "blue"]))
    with pytest.raises(ValueError, match="possible: color, shape_color"):
        build_autocomp_n1("/nonexistent", tasks=("relative_size",), progress=False)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("n1")
    return build_autocomp_n1(root, seed=3, n_concepts=2, size=48, progress=False)


def test_items_pair_both_conditions_with_one_object(bench):
    df = bench.items
    assert bench.name == NAME and bench.kind == "choice"
    assert len(df) == 2 * 2 * 2  # tasks x concepts x conditions
    assert set(df["condition"]) == {"minimal", "contextual"}
    per_concept = df.groupby("concept_id")
    assert (per_concept["condition"].nunique() == 2).all()
    assert (per_concept["scene_id"].nunique() == 1).all()
    assert (df["n_objects"] == 1).all()
    assert (df["operation"] == "recognition").all() and (df["negative_set"] == "n1").all()
    assert set(df["task"]) == {"color", "shape_color"} and (df["edit_type"] == df["task"]).all()
    for _, row in df.iterrows():
        concept = Concept(row["task"], list(row["objects"]), list(row["values"]))
        assert list(row["captions"]) == [caption(concept),
                                         *(t for _, t in recognition_negatives(concept))]
        assert row["n_negatives"] == len(row["captions"]) - 1 == len(row["negative_kinds"])
    # the two conditions of a concept are different pictures of the same concept
    for _, group in per_concept:
        a, b = (np.asarray(Image.open(bench.image_path(p))) for p in group["image"])
        assert a.shape == b.shape and not np.array_equal(a, b)


def test_same_seed_same_bytes(tmp_path):
    def digest(path):
        bench = build_autocomp_n1(path, seed=1, n_concepts=1, size=32, progress=False)
        write_benchmark(bench, path, copy_images=False)
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(path.rglob("*")) if p.is_file()}

    a, b = digest(tmp_path / "a"), digest(tmp_path / "b")
    assert a == b and "items.parquet" in a
    assert len(load_benchmark(tmp_path / "a")) == 2 * 1 * 2
