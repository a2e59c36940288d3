"""`foilbench run` on Auto-Comp: r1 (the paper's) beside r1_valid (primary) in the printed
tables, summary.json and the report, with the count of items that hold a true negative."""

from __future__ import annotations

import json

from click.testing import CliRunner

from foilbench.cli.main import cli
from foilbench.construct.autocomp.bench import build_autocomp
from foilbench.data.format import write_benchmark


def test_run_reports_r1_and_r1_valid_side_by_side(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    root = tmp_path / "ac"
    benches = build_autocomp(root, seed=0, n_concepts=1, size=32, ns=(2,),
                             tasks=("color",), progress=False)
    write_benchmark(benches["confusion"], root / "autocomp-confusion")
    result = CliRunner().invoke(cli, ["run", "--model", "tiny-random", "--benchmark",
                                      str(root / "autocomp-confusion"), "--out",
                                      str(tmp_path / "o"), "--n-boot", "200", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "r1_valid" in result.output
    # N = 2 colour: each of the 2 items (one concept, two conditions) holds 1 paraphrase
    assert "autocomp-confusion: 2 of 2 items hold a true negative" in result.output
    summary = json.loads(next((tmp_path / "o").glob("*/summary.json")).read_text())
    (run,) = summary["runs"]
    assert run["primary_metric"] == "r1_valid"
    assert {"r1", "r1_valid"} <= set(run["metrics"])
    assert run["metrics"]["r1"]["chance"] == 1 / 16
    assert run["metrics"]["r1_valid"]["chance"] == 1 / 15
    (block,) = summary["autocomp"].values()
    assert block["items_with_true_negative"] == 2 and block["n_items"] == 2
    (cell,) = [c for c in block["table"] if c["condition"] == "minimal"]
    assert cell["paper_chance"] == 1 / 16 and cell["chance_r1_valid"] == 1 / 15
    html = next((tmp_path / "o").glob("*/report.html")).read_text()
    assert 'id="autocomp-valid"' in html and "r1_valid % *" in html
    assert "r1_valid *" in html  # the headline stars the primary metric


def test_analyze_autocomp_adds_r1_valid_deltas_and_the_table(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    root = tmp_path / "ac"
    benches = build_autocomp(root, seed=1, n_concepts=2, size=32, ns=(2,),
                             tasks=("color",), progress=False)
    for op, bench in benches.items():
        write_benchmark(bench, root / f"autocomp-{op}")
    args = ["run", "--model", "tiny-random", "--out", str(tmp_path / "o"), "--n-boot", "200",
            "--quiet", "--no-report"]
    for op in benches:
        args += ["--benchmark", str(root / f"autocomp-{op}")]
    assert CliRunner().invoke(cli, args).exit_code == 0
    summary = json.loads(next((tmp_path / "o").glob("*/summary.json")).read_text())
    ids = [r["run_id"] for r in summary["runs"]]
    out = tmp_path / "ac.json"
    res = CliRunner().invoke(cli, ["analyze", "autocomp", *ids, "--db",
                                   str(tmp_path / "o" / "foilbench.duckdb"), "--n-boot", "200",
                                   "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    (gap,) = data["swap_vs_confusion_r1_valid"]
    assert gap["n_concepts"] == 2
    table = data["r1_vs_r1_valid"]
    confusion = [r for r in table if r["negative_set"] == "confusion"]
    assert {r["with_true_negative"] for r in confusion} == {2}  # 2 concepts per condition
    assert {r["with_true_negative"] for r in table if r["negative_set"] == "swap"} == {0}
