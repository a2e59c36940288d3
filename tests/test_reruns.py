"""Reruns: an identical (model fingerprint, benchmark checksum, settings) run is reused by
``run``, not stored twice; ``--rerun`` stores a repeat, marked so; ``show``, the report and
``serve`` show one run per key and never compare a run with its own repeat."""

from __future__ import annotations

import json

from click.testing import CliRunner

from foilbench import runner
from foilbench.cli.main import cli
from foilbench.report.build import load_runs, render_report
from foilbench.report.server import leaderboard_frame
from foilbench.store.db import ResultsStore
from foilbench.store.repeats import split_repeats

OPTS = {"report": False, "n_boot": 100, "progress": False, "use_cache": False}


def _stored(db) -> list[str]:
    with ResultsStore(db, read_only=True) as store:
        return store.list_runs()["run_id"].tolist()


def test_run_reuses_an_identical_run_and_rerun_stores_a_marked_repeat(tmp_path):
    out = tmp_path / "out"
    logged: list[tuple[str, str]] = []

    def log(level, message):
        logged.append((level, message))

    first = runner.run(["tiny-random"], ["tiny-builtin"], out, log=log, **OPTS)
    again = runner.run(["tiny-random"], ["tiny-builtin"], out, log=log, **OPTS)
    assert again.run_ids == first.run_ids  # the same stored run, not a second one
    assert _stored(out / "foilbench.duckdb") == first.run_ids
    assert any(level == "info" and f"reused identical stored run {first.run_ids[0][:8]}" in msg
               for level, msg in logged)
    # the reused record carries the stored numbers
    a, b = first.records[0], again.records[0]
    assert a.metrics.set_index(["metric", "group_by", "group_value"])["value"].sort_index() \
        .equals(b.metrics.set_index(["metric", "group_by", "group_value"])["value"]
                .sort_index())
    assert b.provenance["reused"] and b.result.stats["reused"] == first.run_ids[0]
    for m in a.result.outcomes:
        assert (a.result.outcomes[m] == b.result.outcomes[m]).all()
    # a different setting is a different run
    other = runner.run(["tiny-random"], ["tiny-builtin"], out, **{**OPTS, "seed": 7})
    assert other.run_ids != first.run_ids
    # --rerun: computed again, stored, marked a repeat of the stored one
    repeat = runner.run(["tiny-random"], ["tiny-builtin"], out, rerun=True, **OPTS)
    assert repeat.run_ids[0] not in (*first.run_ids, *other.run_ids)
    assert repeat.records[0].result.stats["repeat_of"] == first.run_ids[0]
    assert len(_stored(out / "foilbench.duckdb")) == 3


def test_views_show_one_run_per_model_benchmark_and_settings(tmp_path):
    out = tmp_path / "out"
    db = out / "foilbench.duckdb"
    first = runner.run(["tiny-random"], ["tiny-builtin"], out, **OPTS)
    repeat = runner.run(["tiny-random"], ["tiny-builtin"], out, rerun=True, **OPTS)
    cli_runner = CliRunner()
    listed = cli_runner.invoke(cli, ["show", "--db", str(db), "--json"])
    assert listed.exit_code == 0, listed.output
    shown = json.loads(listed.stdout)
    assert [r["run_id"] for r in shown] == repeat.run_ids  # the latest of the key
    assert "1 repeat(s) of a shown run" in listed.stderr
    every = cli_runner.invoke(cli, ["show", "--db", str(db), "--json", "--all"])
    assert len(json.loads(every.stdout)) == 2
    one = cli_runner.invoke(cli, ["show", repeat.run_ids[0][:12], "--db", str(db)])
    assert f"repeat of run {first.run_ids[0][:8]}" in one.output
    # the report over all runs, and over a run and its repeat named together: one run
    assert [r.run["run_id"] for r in load_runs(db, [])] == repeat.run_ids
    html = render_report(load_runs(db, [*first.run_ids, *repeat.run_ids]))
    assert "1 run(s): 1 model(s)" in html and "1 repeat(s) of a shown run" in html
    assert f"({first.run_ids[0][:8]})" not in html  # never labelled against its repeat
    board = leaderboard_frame(db)
    assert set(board["run_id"]) == set(repeat.run_ids)
    assert not board.duplicated(["model_spec", "benchmark_name", "metric"]).any()


def test_split_repeats_by_hand():
    base = {"model_fingerprint": "m", "benchmark_checksum": "b", "config_hash": "c"}
    runs = [{**base, "run_id": "r1", "created": "2026-01-01"},
            {**base, "run_id": "r2", "created": "2026-01-02"},
            {**base, "run_id": "r3", "created": "2026-01-03", "config_hash": "other"},
            {**base, "run_id": "r4", "created": "2026-01-04", "model_fingerprint": "m2"},
            # stored without a settings hash: keyed on the settings columns themselves
            {**base, "run_id": "r5", "created": "1", "config_hash": None, "seed": 1},
            {**base, "run_id": "r6", "created": "2", "config_hash": None, "seed": 1},
            {**base, "run_id": "r7", "created": "3", "config_hash": None, "seed": 2}]
    shown, hidden = split_repeats(runs)
    assert shown == ["r2", "r3", "r4", "r6", "r7"]
    assert hidden == {"r2": ["r1"], "r6": ["r5"]}


def test_cli_run_says_it_reused_and_rerun_stores_again(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_CACHE", str(tmp_path / "cache"))
    args = ["run", "--model", "tiny-random", "--benchmark", "tiny-builtin", "--out",
            str(tmp_path), "--n-boot", "100", "--no-report", "--quiet"]
    cli_runner = CliRunner()
    first = cli_runner.invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert "stored 1 run(s) in" in first.stderr
    again = cli_runner.invoke(cli, args)
    assert again.exit_code == 0, again.output
    assert "stored 0 run(s) (reused 1 identical" in again.stderr
    assert "--rerun computes them again" in again.stderr
    rerun = cli_runner.invoke(cli, [*args, "--rerun"])
    assert rerun.exit_code == 0, rerun.output
    assert "stored 1 run(s) in" in rerun.stderr
    assert len(_stored(tmp_path / "foilbench.duckdb")) == 2
