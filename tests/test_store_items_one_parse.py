"""The stored item records read back with one JSON parse (store/db.load_item_results) give
the table a parse per record gave: the same columns, dtypes and values."""

from __future__ import annotations

import json

import pandas as pd

from _core_helpers import ColourEncoder
from foilbench.data.kinds import METADATA_COLUMNS
from foilbench.data.tiny import tiny_benchmark
from foilbench.provenance import collect_provenance
from foilbench.scoring.aggregate import long_outcomes
from foilbench.scoring.engine import evaluate
from foilbench.stats.breakdown import metric_table
from foilbench.store.db import ResultsStore


def test_one_parse_gives_the_table_of_a_parse_per_record(tmp_path):
    bench = tiny_benchmark(root=tmp_path / "tiny")
    items = bench.items.copy()  # odd strings and missing values in the records
    items.loc[0, "edit_type"] = 'quo"te, comma] {brace} ünï \u2028 \\ back'
    items.loc[1, "edit_type"] = None
    bench.items = items
    result = evaluate(ColourEncoder(), bench, progress=False)
    metrics = metric_table(long_outcomes(result), candidates=METADATA_COLUMNS, n_boot=50)
    prov = collect_provenance(seed=42, n_boot=50, ci_method="auto", revision="abc")
    with ResultsStore(tmp_path / "db.duckdb") as store:
        run_id = store.write_run(result, metrics, prov)
        got = store.load_item_results(run_id)
        rows = store.con.execute("SELECT item FROM item_results WHERE run_id = ? "
                                 "ORDER BY item_index", [run_id]).fetchall()
    want = pd.DataFrame([json.loads(r[0]) for r in rows])  # the code before: one per record
    assert len(want) == 12
    part = got[list(want.columns)]
    pd.testing.assert_frame_equal(part, want, check_exact=True)
    assert got.loc[0, "edit_type"] == items.loc[0, "edit_type"]
