"""The report of a run written from the per-item tables the run holds
(:mod:`foilbench.store.held_items`) is the report ``foilbench report`` writes by reading the
store, byte for byte; the held table is the store's, value for value and type for type, and
items that are not all plain fall back to reading the store."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _core_helpers import colour_pair_folder, solid, write_folder
from _reliability import fb
from foilbench import runner
from foilbench.store.db import ResultsStore
from foilbench.store.held_items import held_item_results

COLOURS = ("red", "green", "blue")


def _pair_with_metadata(root):
    """Pair items whose metadata holds ints, floats, booleans and a unicode string."""
    for c in COLOURS:
        solid(root / f"{c}.png", c)
    rows = []
    for k in range(9):
        b, f = COLOURS[k % 3], COLOURS[(k + 1) % 3]
        rows.append({"item_id": f"p{k}", "image_base": f"{b}.png", "image_foil": f"{f}.png",
                     "caption_base": f"a {b} square", "caption_foil": f"a {f} square",
                     "scene_id": f"s{k % 4}", "edit_type": "modify_color",
                     "n_objects": k % 3 + 1, "area": 0.25 * k, "hard": k % 2 == 0,
                     "note": "café ✓"})
    return write_folder(root, "pair", pd.DataFrame(rows))


def _choice(root):
    """Choice items (a list column: not plain, so the report reads the store)."""
    rows = []
    for k in range(6):
        c, other = COLOURS[k % 3], COLOURS[(k + 1) % 3]
        solid(root / f"{c}.png", c)
        rows.append({"item_id": f"c{k}", "image": f"{c}.png", "scene_id": f"s{k}",
                     "edit_type": "replace_att",
                     "captions": [f"a {c} square", f"a {other} square"]})
    return write_folder(root, "choice", pd.DataFrame(rows))


BENCHES = {"builtin": lambda root: "tiny-builtin", "colour_pairs": colour_pair_folder,
           "pair_metadata": _pair_with_metadata, "choice": _choice}


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    return tmp_path


def _run(env, name, report=True):
    bench = BENCHES[name](env / name)
    return runner.run(["tiny-random"], [str(bench)], env / "out", report=report,
                      n_boot=200, progress=False)


@pytest.mark.parametrize("name", sorted(BENCHES))
def test_run_report_is_the_report_foilbench_report_writes(env, name, capsys, monkeypatch):
    reads = []
    read = ResultsStore.load_item_results
    monkeypatch.setattr(ResultsStore, "load_item_results",
                        lambda self, run: reads.append(run) or read(self, run))
    outcome = _run(env, name)
    assert len(reads) == (1 if name == "choice" else 0)  # held, but for the list column
    monkeypatch.undo()
    [rec] = outcome.records
    again = env / "again.html"
    code, _, err = fb(["report", rec.run_id, "--db", env / "out" / "foilbench.duckdb",
                       "--out", again], capsys)
    assert code == 0, err
    assert outcome.report_path.read_bytes() == again.read_bytes()  # nothing masked


@pytest.mark.parametrize("name", ["builtin", "colour_pairs", "pair_metadata"])
def test_held_table_is_the_stored_one(env, name):
    outcome = _run(env, name, report=False)
    [rec] = outcome.records
    held = held_item_results(rec.result)
    assert held is not None  # plain items: held
    with ResultsStore(env / "out" / "foilbench.duckdb", read_only=True) as store:
        stored = store.load_item_results(rec.run_id)
    assert held.columns.tolist() == stored.columns.tolist()
    assert held.dtypes.tolist() == stored.dtypes.tolist()
    pd.testing.assert_frame_equal(held.drop(columns="scores"), stored.drop(columns="scores"),
                                  check_exact=True)
    for mine, theirs in zip(held["scores"], stored["scores"], strict=True):
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs, equal_nan=True)
    for col in held.columns.drop("scores"):  # the cells' own Python types, not only values
        assert [type(v) for v in held[col].tolist()] == [type(v) for v in stored[col].tolist()]


def test_items_not_all_plain_are_read_from_the_store(env):
    outcome = _run(env, "choice", report=False)
    assert held_item_results(outcome.records[0].result) is None  # a list column
    outcome = _run(env, "colour_pairs", report=False)
    result = outcome.records[-1].result
    items = result.benchmark.items
    assert held_item_results(result) is not None
    try:
        for odd in (np.int64(3), float("nan"), float("inf"), pd.Timestamp(0), (1, 2)):
            result.benchmark.items = items.assign(extra=pd.Series([odd] * len(items),
                                                                  dtype=object))
            assert held_item_results(result) is None, odd
        result.benchmark.items = items.assign(extra=[None] * len(items))  # plain: held
        assert held_item_results(result) is not None
    finally:
        result.benchmark.items = items


# columns whose cells are plain but of mixed types: pandas must infer the same dtype from
# the held table's columns as from the store's parsed dicts
MIXED = {"ints_none": (1, None), "floats_none": (0.5, None), "bools_none": (True, None),
         "int_float": (1, 2.5), "bool_int": (True, 1), "bool_float": (False, 1.5),
         "strs_none": ("a", None), "nones": (None, None), "str_bool": ("x", True),
         "big_int": (2 ** 63, 1), "below_int64": (-2 ** 63 - 1, 1)}


def test_held_table_built_by_column_types_mixed_columns_as_the_store_does(env):
    import json

    from foilbench.store.db import to_json
    from foilbench.table_records import table_records

    outcome = _run(env, "colour_pairs", report=False)
    result = outcome.records[-1].result
    items = result.benchmark.items
    n = len(items)
    try:
        result.benchmark.items = items.assign(**{
            name: pd.Series([pair[k % 2] for k in range(n)], dtype=object)
            for name, pair in MIXED.items()})
        held = held_item_results(result)
        assert held is not None  # every cell plain
        # what ResultsStore.load_item_results parses from the JSON _item_frame stores
        stored = pd.DataFrame(json.loads(
            "[" + ",".join(to_json(r) for r in table_records(result.benchmark.items)) + "]"))
    finally:
        result.benchmark.items = items
    names = [c for c in stored.columns if c != "item_id"]
    assert held.columns.tolist()[:len(stored.columns)] == stored.columns.tolist()
    for col in names:
        assert held[col].dtype == stored[col].dtype, col
        assert ([(type(v), repr(v)) for v in held[col].tolist()]
                == [(type(v), repr(v)) for v in stored[col].tolist()]), col
