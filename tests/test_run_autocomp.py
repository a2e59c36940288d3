"""`foilbench run` on Auto-Comp: r1 (the paper's) beside r1_valid (primary) in the printed
tables, summary.json and the report, with the count of items that hold a true negative."""

from __future__ import annotations

import json

from click.testing import CliRunner

from foilbench.cli.main import cli
from foilbench.construct.autocomp_bench import build_autocomp
from foilbench.data.format import write_benchmark


def test_run_reports_r1_and_r1_valid_side_by_side(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_CACHE", str(tmp_path / "cache"))
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
