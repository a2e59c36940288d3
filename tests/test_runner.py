"""The runner as a Python API (no click): run, cells computed without writing, the blind
audit stored once per benchmark and reused, and the CLI's shared options."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from _core_helpers import solid, write_folder
from foilbench import runner
from foilbench.data.format import load_benchmark
from foilbench.errors import FoilbenchError
from foilbench.models.tiny import build_tiny_random
from foilbench.runner.settings import RunnerError, RunSettings
from foilbench.store.db import ResultsStore, to_json

COLOURS = ("red", "green", "blue")


def choice_folder(root, n=12):
    """``n`` choice items over ``n`` scenes: the positive names the image's colour; the
    negative is one word longer (a planted text-only cue the length scorer finds)."""
    rows = []
    for i in range(n):
        c, other = COLOURS[i % 3], COLOURS[(i + 1) % 3]
        solid(root / f"{c}.png", c)
        rows.append({"item_id": f"i{i}", "image": f"{c}.png", "scene_id": f"s{i}",
                     "edit_type": "replace_att",
                     "captions": [f"a {c} square", f"a big {other} square"]})
    return write_folder(root, "choice", pd.DataFrame(rows))


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    return tmp_path


def quiet(**extra):
    return {"n_boot": 200, "progress": False, **extra}


def test_run_through_the_python_api(env):
    messages = []
    outcome = runner.run(["tiny-random"], ["tiny-builtin"], env / "out", report=False,
                         log=lambda level, msg: messages.append((level, msg)), **quiet())
    assert ("info", "evaluating tiny-random on tiny-builtin (12 items)") in messages
    [rec] = outcome.records
    assert outcome.summary_path == env / "out" / outcome.batch_id / "summary.json"
    assert json.loads(outcome.summary_path.read_text()) == json.loads(to_json(outcome.summary))
    [entry] = outcome.summary["runs"]
    assert entry["run_id"] == rec.run_id and entry["metrics"]["group"]["n"] == 12
    assert set(outcome.summary) == {"format_version", "batch_id", "db_path", "provenance", "results", "runs",
                                    "reference", "compass", "autocomp"}
    assert outcome.summary["autocomp"] == {}  # no item lists true negatives
    assert outcome.reference["tiny-builtin"]["chance"]["group"] == pytest.approx(1 / 6)
    assert "blind" not in outcome.reference["tiny-builtin"]  # pair kind: no text-only row
    assert outcome.report_path is None and not (outcome.summary_path.parent / "report.html").exists()
    with ResultsStore(outcome.db_path, read_only=True) as store:
        assert store.list_runs()["run_id"].tolist() == [rec.run_id]


def test_a_lone_string_is_one_spec_and_settings_are_checked(env):
    outcome = runner.run("tiny-random", "tiny-builtin", env / "o", report=False, log=None,
                         **quiet())
    assert [r.result.model.spec for r in outcome.records] == ["tiny-random"]
    with pytest.raises(RunnerError, match="n_boot"):
        RunSettings(n_boot=5)
    with pytest.raises(RunnerError, match="bogus"):
        runner.run(["tiny-random"], ["tiny-builtin"], env / "o", bogus=1)
    with pytest.raises(RunnerError, match="at least one model"):
        runner.sweep([], ["tiny-builtin"], env / "o")


def test_evaluate_cell_writes_nothing_and_write_cell_stores_it(env):
    from foilbench.data.tiny import tiny_benchmark

    bench = tiny_benchmark(root=env / "tiny")
    adapter = build_tiny_random()
    settings = RunSettings(n_boot=200, progress=False)
    with ResultsStore(env / "db.duckdb") as store:
        cell = runner.evaluate_cell(adapter, bench, settings)
        assert store.list_runs().empty
        assert runner.finished_run(store, adapter, bench, settings) is None
        rec = runner.write_cell(store, cell, batch_id="b1")
        assert runner.finished_run(store, adapter, bench, settings) == rec.run_id
        pd.testing.assert_frame_equal(
            store.load_metrics(rec.run_id).reset_index(drop=True),
            cell.metrics.sort_values(["metric", "group_by", "group_value"])
            .reset_index(drop=True)[store.load_metrics(rec.run_id).columns],
            check_dtype=False)
        # other scoring settings are another cell
        assert runner.finished_run(store, adapter, bench, RunSettings(n_boot=300)) is None


def test_blind_reference_is_computed_once_per_benchmark_and_reused(env, monkeypatch):
    bench = load_benchmark(choice_folder(env / "choice"))
    with ResultsStore(env / "db.duckdb") as store:
        first = runner.blind_reference(bench, store)
        assert first["r1"]["scorer"] == "length" and first["r1"]["accuracy"] == 1.0
        stored = store.load_blind_reference(bench.manifest.checksum)
        assert stored["reference"] == first and stored["n_items"] == 12
        assert set(stored["audit"]["scorers"]) == {"length", "ngram"}

        def boom(*args, **kwargs):
            raise AssertionError("recomputed")

        import foilbench.audit.blind as audit_blind

        monkeypatch.setattr(audit_blind, "blind_audit_captions", boom)
        assert runner.blind_reference(bench, store) == first
        # the same checksum with items dropped is another audit, not the stored one
        bench.items = bench.items.iloc[:10].reset_index(drop=True)
        with pytest.raises(AssertionError, match="recomputed"):
            runner.blind_reference(bench, store)


def test_too_small_for_cross_fitting_is_stored_with_its_reason(env):
    bench = load_benchmark(choice_folder(env / "small", n=3))
    with ResultsStore(env / "db.duckdb") as store:
        assert runner.blind_reference(bench, store) == {}
        stored = store.load_blind_reference(bench.manifest.checksum)
    assert stored["audit"] is None and "clusters" in stored["note"]


def test_second_run_reads_the_blind_row_and_the_report_does_not_recompute(env, monkeypatch):
    folder = str(choice_folder(env / "choice"))
    first = runner.run(["tiny-random"], [folder], env / "out", report=False, **quiet())
    blind = first.reference["choice"]["blind"]
    assert blind["r1"]["scorer"] == "length"

    def boom(*args, **kwargs):
        raise AssertionError("recomputed")

    import foilbench.audit.blind as audit_blind

    monkeypatch.setattr(audit_blind, "blind_audit_captions", boom)
    second = runner.run(["tiny-random"], [folder], env / "out", report=True, **quiet())
    assert second.reference["choice"]["blind"] == blind
    html = second.report_path.read_text()
    blind_section = html[html.index('<section id="blind">'):]
    blind_section = blind_section[:blind_section.index("</section>")]
    assert "replace_att" in blind_section and "ngram" in blind_section


def test_a_schema_1_store_stays_readable_and_is_upgraded(env):
    from foilbench.report import write_report

    outcome = runner.run(["tiny-random"], ["tiny-builtin"], env / "out", report=False,
                         **quiet())
    with ResultsStore(outcome.db_path) as store:  # make it look like a schema-1 file
        store.con.execute("DROP TABLE compass_tables")
        store.con.execute("DROP TABLE blind_reference")
        store.con.execute("ALTER TABLE metrics DROP COLUMN unit")
        store.con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with ResultsStore(outcome.db_path, read_only=True) as store:
        assert store.load_compass(outcome.run_ids[0]) is None
        assert store.load_blind_reference("sha256:x") is None
        assert store.load_metrics(outcome.run_ids[0])["unit"].isna().all()
    assert write_report(outcome.db_path, [], env / "r.html").exists()
    with ResultsStore(outcome.db_path) as store:
        assert store.has_table("compass_tables") and store.has_table("blind_reference")
        version = store.con.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        assert store.load_metrics(outcome.run_ids[0])["unit"].isna().all()  # older rows: none
    from foilbench.store.schema import SCHEMA_VERSION

    assert version == str(SCHEMA_VERSION)


def test_run_and_sweep_share_one_definition_of_their_options():
    from foilbench.cli.options import RAY_OPTIONS, SETTING_OPTIONS
    from foilbench.cli.run_cmd import run
    from foilbench.cli.sweep_cmd import sweep

    shared = {"models", "benchmarks", "out_dir", "config_file", "log_level", *SETTING_OPTIONS,
              *RAY_OPTIONS}
    run_opts = {p.name: p for p in run.params}
    sweep_opts = {p.name: p for p in sweep.params}
    assert shared <= set(run_opts) and shared <= set(sweep_opts)
    assert set(run_opts) - shared == {"no_report", "rerun"}
    assert set(sweep_opts) - shared == {"db_path", "matrix_only"}
    for name in (*SETTING_OPTIONS, *RAY_OPTIONS):
        assert run_opts[name].help == sweep_opts[name].help
        assert run_opts[name].default == sweep_opts[name].default
    assert sweep_opts["models"].required and not run_opts["models"].required


def test_runner_errors_are_foilbench_errors():
    assert issubclass(RunnerError, FoilbenchError)
