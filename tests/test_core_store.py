"""The results store: one transaction per run, lookups by prefix, item tables that round-trip."""

from __future__ import annotations

import numpy as np
import pytest

from _core_helpers import ColourEncoder
from foilbench.data.kinds import METADATA_COLUMNS
from foilbench.data.tiny import tiny_benchmark
from foilbench.provenance import collect_provenance, config_hash, git_revision
from foilbench.scoring.aggregate import long_outcomes
from foilbench.scoring.engine import evaluate
from foilbench.stats.breakdown import metric_table
from foilbench.store.db import ResultsStore, RunNotFoundError

TABLES = ("runs", "item_results", "item_outcomes", "metrics")


@pytest.fixture
def run_parts(tmp_path):
    bench = tiny_benchmark(root=tmp_path / "tiny")
    result = evaluate(ColourEncoder(), bench, progress=False)
    metrics = metric_table(long_outcomes(result), candidates=METADATA_COLUMNS, n_boot=200)
    prov = collect_provenance(seed=42, n_boot=200, ci_method="auto", revision="abc123")
    return result, metrics, prov


def _counts(store: ResultsStore) -> dict[str, int]:
    return {t: store.con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def test_write_and_read_back(tmp_path, run_parts):
    result, metrics, prov = run_parts
    with ResultsStore(tmp_path / "db.duckdb") as store:
        run_id = store.write_run(result, metrics, prov, batch_id="b1")
        assert _counts(store) == {"runs": 1, "item_results": 12, "item_outcomes": 36,
                                  "metrics": len(metrics)}
        info = store.get_run(run_id[:6])
        assert info["run_id"] == run_id and info["git_revision"] == "abc123"
        assert info["model_fingerprint"] == "colour-v1" and info["tie_policy"] == "strict>"
        assert info["eval_stats"]["images_unique"] == 12
        items = store.load_item_results(run_id)
        assert items["item_id"].tolist() == result.benchmark.items["item_id"].tolist()
        assert {"scene_id", "edit_type", "group", "tie_group", "chance_group"} <= set(items)
        np.testing.assert_array_equal(items["group"].to_numpy(), result.outcomes["group"])
        np.testing.assert_allclose(np.stack(items["scores"]), np.stack(result.scores))
        stored = store.load_metrics(run_id)
        overall = stored[(stored["metric"] == "group") & (stored["group_by"] == "")].iloc[0]
        assert overall["value"] == pytest.approx(result.outcomes["group"].mean())
        assert store.find_run("colour-v1", result.benchmark.manifest.checksum,
                              prov["config_hash"]) == run_id
        assert store.find_run("colour-v1", result.benchmark.manifest.checksum, "other") is None


@pytest.mark.parametrize("failing", ["_insert_metrics", "item_outcomes"])
def test_failure_mid_write_leaves_no_rows(tmp_path, run_parts, monkeypatch, failing):
    result, metrics, prov = run_parts
    store = ResultsStore(tmp_path / "db.duckdb")
    if failing == "_insert_metrics":  # after runs, item_results and item_outcomes went in
        def boom(self, frame):
            raise RuntimeError("disk full (injected)")
        monkeypatch.setattr(ResultsStore, "_insert_metrics", boom)
    else:  # after runs and item_results went in
        original = ResultsStore._insert_frame

        def boom(self, table, frame):
            if table == "item_outcomes":
                raise RuntimeError("disk full (injected)")
            return original(self, table, frame)
        monkeypatch.setattr(ResultsStore, "_insert_frame", boom)
    with pytest.raises(RuntimeError, match="injected"):
        store.write_run(result, metrics, prov)
    assert _counts(store) == dict.fromkeys(TABLES, 0)
    store.close()
    monkeypatch.undo()
    with ResultsStore(tmp_path / "db.duckdb") as reopened:  # the file is intact and usable
        assert _counts(reopened) == dict.fromkeys(TABLES, 0)
        reopened.write_run(result, metrics, prov)
        assert _counts(reopened)["runs"] == 1


def test_run_lookup_errors(tmp_path, run_parts):
    result, metrics, prov = run_parts
    with ResultsStore(tmp_path / "db.duckdb") as store:
        ids = [store.write_run(result, metrics, prov) for _ in range(2)]
        with pytest.raises(RunNotFoundError, match="no stored run matches 'zzz'"):
            store.get_run("zzz")
        with pytest.raises(RunNotFoundError, match="ambiguous"):
            store.get_run("")
        assert store.get_run(ids[1])["run_id"] == ids[1]
        assert store.list_runs()["run_id"].tolist().count(ids[0]) == 1
    with pytest.raises(RunNotFoundError, match="no results database"):
        ResultsStore(tmp_path / "absent.duckdb", read_only=True)


def test_provenance_never_fails_and_hashes_config():
    assert isinstance(git_revision(), str) and git_revision()
    prov = collect_provenance(seed=1, n_boot=100, ci_method="wilson")
    assert prov["config_hash"] == config_hash(prov["config"])
    assert prov["config_hash"] != collect_provenance(seed=2, n_boot=100,
                                                     ci_method="wilson")["config_hash"]
    assert prov["tie_policy"] == "strict>" and prov["package_version"]


def test_each_run_stores_its_environment(run_parts, tmp_path):
    result, metrics, prov = run_parts
    with ResultsStore(tmp_path / "env.duckdb") as store:
        env = store.get_run(store.write_run(result, metrics, prov))["environment"]
    assert env["libraries"] == prov["libraries"] and env["libraries"]["duckdb"]
    assert env["python"] == prov["python"] and env["device"] == prov["device"]
