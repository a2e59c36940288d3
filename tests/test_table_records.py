"""table_records gives what DataFrame.to_dict(orient="records") gives: values and types."""

import math

import numpy as np
import pandas as pd
import pytest

from foilbench.table_records import table_columns, table_records


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    if a is pd.NaT or b is pd.NaT or a is pd.NA or b is pd.NA:
        return a is b
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


def _check(frame: pd.DataFrame) -> None:
    want = frame.to_dict(orient="records")
    got = table_records(frame)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert list(g) == list(w)
        for key in w:
            assert _same(g[key], w[key]), (key, g[key], w[key])
    names = list(dict.fromkeys(frame.columns))  # table_columns: the same cells, by column
    for name, cells in zip(names, table_columns(frame, names), strict=True):
        assert len(cells) == len(want)
        assert all(_same(c, w[name]) for c, w in zip(cells, want, strict=True)), name


def test_every_kind_of_column_matches_pandas():
    frame = pd.DataFrame({
        "i": np.array([1, 2, 3], dtype=np.int64),
        "i32": np.array([1, 2, 3], dtype=np.int32),
        "f": [0.5, np.nan, 2.0],
        "f32": np.array([0.25, 1.5, np.nan], dtype=np.float32),
        "b": [True, False, True],
        "s": pd.array(["a", None, "c"], dtype="string"),
        "obj": pd.Series([np.int64(4), None, pd.NA], dtype=object),
        "objf": pd.Series([np.float32(0.5), np.bool_(True), "x"], dtype=object),
        "lists": pd.Series([["p", "q"], np.array(["r"]), ()], dtype=object),
        "nullable": pd.array([1, None, 3], dtype="Int64"),
        "boolean": pd.array([True, None, False], dtype="boolean"),
        "t": pd.to_datetime(["2026-01-01", None, "2026-12-05"]),
        "dt": pd.to_timedelta([1, 2, None], unit="s"),
        "cat": pd.Categorical(["x", "y", "x"]),
        "objdt": pd.Series([np.datetime64("2026-01-02"), np.timedelta64(3, "s"), 1],
                           dtype=object),
    })
    _check(frame)


@pytest.mark.filterwarnings("ignore:DataFrame columns are not unique")
def test_duplicate_empty_and_columnless_tables_match_pandas():
    dup = pd.DataFrame([[1, "a"], [2, "b"]], columns=["x", "x"])
    _check(dup)
    _check(pd.DataFrame({"a": pd.Series([], dtype=object), "b": []}))
    _check(pd.DataFrame(index=range(3)))
    _check(pd.DataFrame({"a": [1, 2]}, index=[5, 7]))


def test_the_checksum_bytes_are_those_of_pandas_records():
    """A stored benchmark's checksum must not move with the faster conversion."""
    import json

    from foilbench.data.benchmark import _json_default, canonical_table_bytes

    frame = pd.DataFrame({
        "item_id": pd.array(["a", "b"], dtype="string"),
        "texts": pd.Series([np.array(["x", "y"]), ["z"]], dtype=object),
        "n": [np.nan, 1.0], "k": pd.Series([np.int64(3), None], dtype=object),
    })
    want = json.dumps(frame[sorted(frame.columns)].to_dict(orient="records"),
                      sort_keys=True, default=_json_default, ensure_ascii=False).encode()
    assert canonical_table_bytes(frame) == want


def _kinds_of_columns() -> pd.DataFrame:
    return pd.DataFrame({
        "arrow_nan": pd.Series(["a", None, "c"],
                               dtype=pd.StringDtype("pyarrow", na_value=np.nan)),
        "default_str": pd.Series(["a", None, "c"], dtype="str"),
        "python_na": pd.Series(["a", None, "c"], dtype=pd.StringDtype("python")),
        "obj": pd.Series([np.int64(4), pd.NA, ["x", np.float32(1)]], dtype=object),
        "f": [0.5, np.nan, 2.0], "i": [1, 2, 3],
        "nullable": pd.array([1, None, 3], dtype="Int64"),
        "t": pd.to_datetime(["2026-01-01", None, "2026-12-05"]),
    })


def test_string_storages_match_pandas():
    _check(_kinds_of_columns())


def test_validation_reads_the_cells_itertuples_gives():
    """validate reads each column at once; its rows must hold what itertuples held
    (unboxed: a NumPy scalar in an object column keeps its type for the messages)."""
    from foilbench.data.validate import _column_rows

    frame = _kinds_of_columns()
    cols = list(frame.columns)
    want = list(frame.itertuples(index=False, name=None))
    got = _column_rows(frame, cols)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        for a, b in zip(g, w, strict=True):
            assert _same(a, b) or (a is b), (a, b)
    dup = pd.DataFrame([[1, "a"], [2, "b"]], columns=["x", "x"])
    assert _column_rows(dup, ["x"]) == [(1,), (2,)]
    assert _column_rows(pd.DataFrame(index=range(2)), []) == [(), ()]


def test_a_flat_record_is_stored_as_the_full_walk_stores_it():
    """store.db._clean's shortcut for flat records gives the walk's value, types and JSON."""
    import json

    from foilbench.store import db

    def walk(value):  # _clean without the shortcut, at every level
        return db._clean_any(value) if not isinstance(value, dict) else {
            str(k): walk(v) for k, v in value.items()}

    records = [
        {"a": "x", "b": 1, "c": True, "d": None, "e": 2.5, "f": -0.0},
        {"a": np.str_("x"), "b": np.int64(3)},  # numpy scalars: converted
        {"a": float("nan"), "b": math.inf},  # not finite: null
        {"a": [1, 2], "b": np.array([1.5, np.nan]), "c": {"d": (1, "e")}},  # nested
        {1: "int key", "b": "x"},  # a key that is not a str
        {"a": pd.Timestamp("2026-01-01"), "b": b"bytes"},  # other types: str()
        {},
    ]
    for rec in records:
        got, want = db._clean(rec), walk(rec)
        assert got == want or json.dumps(got) == json.dumps(want), rec
        assert [type(v) for v in got.values()] == [type(v) for v in want.values()], rec
        assert db.to_json(rec) == json.dumps(want, sort_keys=True, ensure_ascii=False)
        assert got is not rec
    # the store's per-item texts: one encoder for all, each text to_json's, keys sorted or not
    for sort_keys in (True, False):
        assert db.json_texts(records, sort_keys=sort_keys) == [
            db.to_json(rec, sort_keys=sort_keys) for rec in records]
    assert db.json_texts([{"b": 1, "a": "é"}]) == ['{"a": "é", "b": 1}']
