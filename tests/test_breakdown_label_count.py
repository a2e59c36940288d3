"""The breakdown columns found by labelling each column's distinct values
(stats/breakdown._label_count) are those found by labelling every row, dtype by dtype."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foilbench.stats.breakdown import _label_count, default_breakdown_columns, group_label

COLUMNS = {
    "str_default": pd.Series(["a", "b", None, "a"]),
    "str_python": pd.Series(["a", "b", None, "a"], dtype="string[python]"),
    "str_arrow": pd.Series(["a", "b", None, "a"], dtype="string[pyarrow]"),
    "only_missing": pd.Series([None, None], dtype="string[pyarrow]"),
    "NA_text_and_missing": pd.Series(["NA", None]),
    "NA_text_and_missing_arrow": pd.Series(["NA", None], dtype="string[pyarrow]"),
    "one_value": pd.Series(["x"] * 5),
    "floats": pd.Series([1.0, -0.0, 0.0, np.nan, 2.5]),
    "whole_floats": pd.Series([1.0, 1.0, np.nan]),
    "ints": pd.Series([1, 2, 2]),
    "bools": pd.Series([True, False]),
    "one_bool": pd.Series([True, True]),
    "object_mixed": pd.Series([True, 1, 1.0, None, np.nan], dtype=object),
    "object_bool_int": pd.Series([True, 1], dtype=object),
    "categorical": pd.Series(["a", None, "a"], dtype="category"),
}


def _every_row(values: pd.Series) -> int:
    return values.map(group_label).nunique()  # the code before: a label per row


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_label_count_is_the_count_of_every_rows_label(name):
    values = COLUMNS[name]
    assert _label_count(values) == _every_row(values)


def test_random_long_tables_pick_the_same_breakdown_columns():
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(1, 200))
        pool = np.array(["short", "medium", "long", "NA", None], dtype=object)
        table = pd.DataFrame({
            "tier": pd.Series(rng.choice(pool[: int(rng.integers(1, 6))], n)),
            "tier_arrow": pd.Series(rng.choice(pool[:3], n), dtype="string[pyarrow]"),
            "n_objects": rng.integers(1, int(rng.integers(2, 4)), n),
            "score": np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 2, n) * 1.0),
            "scene_id": rng.choice(["s1", "s2"], n),
        })
        candidates = ["tier", "tier_arrow", "n_objects", "score", "scene_id", "absent"]
        want = [c for c in candidates if c in table.columns and c != "scene_id"
                and _every_row(table[c]) > 1]
        assert default_breakdown_columns(table, candidates) == want
