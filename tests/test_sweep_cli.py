"""End-to-end ``foilbench sweep``: a second identical sweep reuses the stored run."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner

from foilbench.cli.sweep_cmd import sweep
from foilbench.store.db import ResultsStore
from foilbench.store.sweeps import load_sweep


def test_sweep_twice_second_run_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    args = ["--model", "tiny-random", "--benchmark", "tiny-builtin", "--out", str(tmp_path),
            "--n-boot", "200", "--quiet"]
    runner = CliRunner()
    first = runner.invoke(sweep, args)
    assert first.exit_code == 0, first.output
    assert "1 run(s) computed, 0 reused" in first.output
    second = runner.invoke(sweep, args)
    assert second.exit_code == 0, second.output
    assert "0 run(s) computed, 1 reused" in second.output
    assert "skip tiny-random x tiny-builtin" in second.output

    sweeps = sorted(tmp_path.glob("sweep-*"))
    assert len(sweeps) == 2
    for folder in sweeps:
        assert {p.name for p in folder.iterdir()} == {"matrix.csv", "matrix.md", "matrix.tex",
                                                   "run_config.json"}
    a, b = (pd.read_csv(folder / "matrix.csv") for folder in sweeps)
    assert a.loc[0, "run_id"] == b.loc[0, "run_id"]  # the same stored run fills the cell
    assert a.loc[0, "metric"] == "group" and a.loc[0, "n"] == 12
    assert a.loc[0, "ci_low"] <= a.loc[0, "value"] <= a.loc[0, "ci_high"]
    with ResultsStore(tmp_path / "foilbench.duckdb") as store:
        assert len(store.list_runs()) == 1
        sweep_ids = [p.name.removeprefix("sweep-") for p in sweeps]
        stored = [load_sweep(store.con, s) for s in sweep_ids]
    assert [bool(s.loc[0, "reused"]) for s in stored] == [False, True]
    assert stored[1].loc[0, "value"] == a.loc[0, "value"]


def test_sweep_needs_models_and_benchmarks():
    result = CliRunner().invoke(sweep, ["--model", "tiny-random"])
    assert result.exit_code != 0
    assert "--benchmark" in result.output


def test_sweep_matrix_over_a_loader_benchmark_and_a_builtin(tmp_path, monkeypatch):
    """Two columns with their own primary metrics (Group, R@1); the cache is shared."""
    import warnings

    from _loader_fixtures import png, write_json
    from foilbench.data.loaders.sugarcrepe import EXPECTED_COUNTS

    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    for t in EXPECTED_COUNTS:
        write_json(tmp_path / "sc" / f"{t}.json", {
            "0": {"filename": "a.png", "caption": f"a red {t}", "negative_caption": f"a blue {t}"}})
    png(tmp_path / "coco" / "a.png")
    args = ["--model", "tiny-random", "--benchmark", "tiny-builtin",
            "--benchmark", f"sugarcrepe:{tmp_path / 'sc'}?images={tmp_path / 'coco'}",
            "--out", str(tmp_path / "out"), "--n-boot", "200", "--quiet"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fixture's counts differ from the release
        result = CliRunner().invoke(sweep, args)
    assert result.exit_code == 0, result.output
    cells = pd.read_csv(next((tmp_path / "out").glob("sweep-*")) / "matrix.csv")
    assert cells[["benchmark", "metric", "n"]].values.tolist() == [
        ["tiny-builtin", "group", 12], ["sugarcrepe", "r1", 7]]
    assert "| tiny-random |" in result.output and "sugarcrepe (r1)" in result.output
    assert any((tmp_path / "cache").rglob("*.safetensors"))


def test_sweep_prints_the_interval_run_prints(tmp_path):
    """The console matrix carries the stored interval (the run's method), matrix.md Table 8's
    Wald interval, each labelled."""
    args = ["--model", "tiny-random", "--benchmark", "tiny-builtin", "--out", str(tmp_path),
            "--n-boot", "200", "--quiet"]
    res = CliRunner().invoke(sweep, args)
    assert res.exit_code == 0, res.output
    assert "95% interval as stored with the run" in res.output
    [md] = tmp_path.glob("sweep-*/matrix.md")
    assert "Wald interval (CompoSET Table 8)" in md.read_text()
