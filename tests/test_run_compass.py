"""`foilbench run` on a COMPASS-style benchmark reports the integration gap and skill load."""

from __future__ import annotations

import json

from click.testing import CliRunner

from foilbench.cli.main import cli
from foilbench.construct.compass_build import build_compass_benchmark
from foilbench.data.format import write_benchmark


def test_run_prints_and_stores_compass_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_CACHE", str(tmp_path / "cache"))
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
