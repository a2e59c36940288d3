"""`foilbench run` on a COMPASS-style benchmark reports the integration gap and skill load."""

from __future__ import annotations

import json

from click.testing import CliRunner

from foilbench.cli.main import cli
from foilbench.construct.compass.build import build_compass_benchmark
from foilbench.data.format import write_benchmark


def test_run_prints_and_stores_compass_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    write_benchmark(build_compass_benchmark(tmp_path / "compass", seed=0, n_scenes=6, size=48),
                    tmp_path / "compass")
    result = CliRunner().invoke(cli, ["run", "--model", "tiny-random", "--benchmark",
                                      str(tmp_path / "compass"), "--out", str(tmp_path / "o"),
                                      "--n-boot", "200", "--quiet", "--no-report"])
    assert result.exit_code == 0, result.output
    assert "COMPASS integration gap by level (tiny-random" in result.output
    assert "COMPASS skill load (tiny-random)" in result.output
    summary = json.loads(next((tmp_path / "o").glob("*/summary.json")).read_text())
    (tables,) = summary["compass"].values()
    assert tables["gap"] and {"level", "composed", "decomposed"} <= set(tables["gap"][0])
    assert tables["skill_load"]


def test_compass_tables_are_stored_with_the_run_and_the_report_reads_them(tmp_path, monkeypatch):
    import foilbench.analysis.compass as compass_mod
    from foilbench import runner
    from foilbench.report import write_report
    from foilbench.store.db import ResultsStore, to_json

    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    write_benchmark(build_compass_benchmark(tmp_path / "compass", seed=0, n_scenes=6, size=48),
                    tmp_path / "compass")
    outcome = runner.run(["tiny-random"], [str(tmp_path / "compass")], tmp_path / "o",
                         n_boot=200, progress=False, report=False)
    [rec] = outcome.records
    with ResultsStore(outcome.db_path, read_only=True) as store:
        stored = store.load_compass(rec.run_id)
    assert stored == json.loads(to_json(outcome.summary["compass"][rec.run_id]))
    assert list(stored["gap"][0])[:2] == ["level", "N"]  # column order kept for the report

    def boom(*args, **kwargs):
        raise AssertionError("recomputed")

    monkeypatch.setattr(compass_mod, "compass_tables", boom)
    html = write_report(outcome.db_path, [rec.run_id], tmp_path / "r.html").read_text()
    section = html[html.index('<section id="compass">'):]
    section = section[:section.index("</section>")]
    assert 'id="compass-table2"' in section and 'id="compass-table3"' in section
    assert "Object negatives" in section and "composed" in section
