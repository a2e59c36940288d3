"""``foilbench analyze`` over a real results store (two runs of a known encoder)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from _core_helpers import ColourEncoder
from foilbench.cli.main import cli
from foilbench.data.kinds import METADATA_COLUMNS
from foilbench.data.tiny import tiny_benchmark
from foilbench.provenance import collect_provenance
from foilbench.scoring.aggregate import long_outcomes
from foilbench.scoring.engine import evaluate
from foilbench.stats.breakdown import metric_table
from foilbench.store.db import ResultsStore


@pytest.fixture
def store_with_runs(tmp_path):
    bench = tiny_benchmark(root=tmp_path / "tiny")
    db = tmp_path / "db.duckdb"
    ids = []
    with ResultsStore(db) as store:
        for fp in ("colour-a", "colour-b"):
            result = evaluate(ColourEncoder(fingerprint=fp), bench, progress=False)
            metrics = metric_table(long_outcomes(result), candidates=METADATA_COLUMNS,
                                   n_boot=100)
            prov = collect_provenance(seed=42, n_boot=100, ci_method="auto", revision="x")
            ids.append(store.write_run(result, metrics, prov))
    return db, ids


@pytest.mark.parametrize("command", ["breakdown", "margins", "asymmetry", "hardness"])
def test_analyze_commands_run_on_stored_runs(store_with_runs, tmp_path, command):
    db, ids = store_with_runs
    out = tmp_path / f"{command}.json"
    args = ["analyze", command, *ids, "--db", str(db), "--json", str(out)]
    if command in ("breakdown", "asymmetry"):
        args += ["--n-boot", "200"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data
    if command == "breakdown":
        rows = data["breakdown"]
        assert {r["model"] for r in rows} == {f"colour#{i[:8]}" for i in ids}
        assert all(r["n"] == 12 for r in rows)
    if command == "hardness":
        assert data["short/raw_scene_model"]["n_models"] == 2
        assert data["short/raw_per_foil_variance"]["n_models"] == 2


def test_analyze_autocomp_wiring(monkeypatch, tmp_path):
    """Swap/Confusion runs told apart by benchmark name; taxonomy on the confusion rows."""
    import numpy as np
    import pandas as pd

    import foilbench.cli.analyze_cmd as analyze_cmd

    pos, swap = "a red cube and a blue sphere", "a blue cube and a red sphere"
    rows = []
    for c in range(30):
        for bench, score in (("autocomp-swap", [0.4, 0.5]), ("autocomp-confusion", [0.6, 0.5])):
            rows.append({"model": "m", "benchmark": bench, "concept_id": c, "task": "color",
                         "objects": ["cube", "sphere"], "values": ["red", "blue"],
                         "captions": [pos, swap], "scores": np.array(score),
                         "r1": float(score[0] > score[1])})
    frame = pd.DataFrame(rows)
    monkeypatch.setattr(analyze_cmd, "load_runs", lambda runs, db: frame.copy())
    out = tmp_path / "ac.json"
    res = CliRunner().invoke(cli, ["analyze", "autocomp", "r1", "r2", "--n-boot", "200",
                                   "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    gap = data["swap_vs_confusion"][0]
    assert gap["swap"] == 0.0 and gap["confusion"] == 1.0 and gap["delta"] == -1.0
    assert data["confusion_taxonomy"][0]["n_wrong"] == 0  # every confusion item was right


@pytest.mark.parametrize("command", ["breakdown", "asymmetry"])
def test_a_by_column_that_names_nothing_is_refused(store_with_runs, command):
    db, ids = store_with_runs
    res = CliRunner().invoke(cli, ["analyze", command, *ids, "--db", str(db), "--by",
                                   "nosuchcolumn", "--n-boot", "200"])
    assert res.exit_code == 2
    assert "--by nosuchcolumn: no such column in these runs; columns:" in res.output
    assert "edit_type" in res.output  # the columns it could have named
