"""group_labels labels each distinct value once and gives what ``map(group_label)`` gives,
row for row; a metric table made with it is the one made with the map."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foilbench.stats import breakdown
from foilbench.stats.breakdown import group_label, group_labels, metric_table

COLUMNS = {
    "strings": pd.Series(["b", "a", "b", "c"], dtype="string"),
    "str_default": pd.Series(["short", "long", "short", "long"]),
    "floats": pd.Series([1.0, -0.0, 0.0, 2.5]),  # -0.0 and 0.0: one label "0"
    "ints": pd.Series([3, 1, 3, 2], dtype=np.int64),
    "unsigned": pd.Series([3, 1, 3, 2], dtype=np.uint8),
    "bools": pd.Series([True, False, True, True]),
    "with_nan": pd.Series([1.0, np.nan, 2.0, np.nan]),  # labelled value by value
    "with_na": pd.Series(["a", None, "b", "a"], dtype="string"),
    "objects": pd.Series([True, 1, 1.0, "1"], dtype=object),  # equal but labelled apart
    "category": pd.Series(["x", "y", "x", "x"], dtype="category"),
}


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_group_labels_are_the_map_row_for_row(name):
    values = COLUMNS[name].set_axis([10, 11, 12, 13])
    got, want = group_labels(values), values.map(group_label)
    assert got.index.tolist() == want.index.tolist()
    assert [(type(v), v) for v in got.tolist()] == [(type(v), v) for v in want.tolist()]


def test_distinct_values_are_labelled_once(monkeypatch):
    calls = []
    monkeypatch.setattr(breakdown, "group_label",
                        lambda v: calls.append(v) or group_label(v))
    labels = group_labels(pd.Series(["short", "long", "medium"] * 500))
    assert sorted(calls) == ["long", "medium", "short"] and len(labels) == 1500


def test_metric_table_with_group_labels_is_the_one_with_the_map(monkeypatch):
    rng = np.random.default_rng(2)
    n = 600
    table = pd.DataFrame({"metric": np.repeat(["text", "group"], n // 2),
                          "outcome": (rng.random(n) < 0.4).astype(float),
                          "tie": rng.random(n) < 0.1, "chance": 0.25,
                          "scene_id": [f"s{i % 40}" for i in range(n)],
                          "tier": pd.Series(rng.choice(["short", "long"], n), dtype="string"),
                          "size": rng.choice([1.0, 2.0, -0.0], n),
                          "odd": pd.Series(rng.choice([True, 1, "x"], n), dtype=object)})
    by = ["tier", "size", "odd"]
    fast = metric_table(table, by=by, n_boot=300)
    monkeypatch.setattr(breakdown, "group_labels", lambda v: v.map(group_label))
    pd.testing.assert_frame_equal(fast, metric_table(table, by=by, n_boot=300),
                                  check_exact=True)
