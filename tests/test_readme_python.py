"""The README's "Using it from Python" snippets run as written (offline, in a temp folder),
and `foilbench export` writes the per-item table they describe."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from foilbench.cli.main import cli

README = Path(__file__).resolve().parents[1] / "README.md"


def python_snippets() -> list[str]:
    text = README.read_text(encoding="utf-8")
    part = text[text.index("## Using it from Python"):]
    part = part[:part.index("\n## ", 5)]
    return re.findall(r"```python\n(.*?)```", part, flags=re.S)


@pytest.fixture
def ran(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    scope: dict = {}
    # the first three: evaluate and store, the item table, SQL (the runner and building-block
    # snippets after them run in tests/test_console_readme.py)
    snippets = python_snippets()[:3]
    assert "evaluate_run" in snippets[0] and "item_table" in snippets[1] \
        and "duckdb" in snippets[2]
    for code in snippets:
        exec(compile(code, str(README), "exec"), scope)  # noqa: S102  (our own README)
    return tmp_path, scope, capsys.readouterr().out


def test_snippets_evaluate_load_and_query(ran):
    tmp, scope, out = ran
    metrics = scope["evaluation"].metrics.query("group_by == ''").set_index("metric")
    assert set(metrics.index) == {"i2t", "t2i", "group"}
    items = scope["items"]
    assert len(items) == 12 and {"item_id", "scores", "group", "tie_group",
                                 "chance_group"} <= set(items.columns)
    # the item table agrees with the stored metric: mean outcome = stored value
    assert items["group"].mean() == pytest.approx(metrics.loc["group", "value"])
    assert "my-model-step-1000" in out and "tiny-builtin" in out
    assert (tmp / "my-runs" / "foilbench.duckdb").is_file()


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_writes_scores_and_outcomes(ran, fmt):
    tmp, scope, _ = ran
    db = tmp / "my-runs" / "foilbench.duckdb"
    run_id = scope["run_id"]
    result = CliRunner().invoke(cli, ["export", run_id[:8], "--format", fmt, "--db", str(db)])
    assert result.exit_code == 0, result.output
    path = db.parent / f"{run_id}.items.{fmt}"
    assert str(path.resolve()) in result.output
    frame = pd.read_parquet(path) if fmt == "parquet" else pd.read_csv(path)
    assert len(frame) == 12 and (frame["run_id"] == run_id).all()
    assert frame["group"].tolist() == scope["items"]["group"].tolist()
    first = scope["items"]["scores"].iloc[0]
    got = frame["scores"].iloc[0]
    got = list(got) if fmt == "parquet" else [float(v) for v in got.strip("[]").split(",")]
    assert got == pytest.approx(list(first))


def test_export_names_what_is_wrong(tmp_path, capsys):
    from _reliability import fb

    code, out, err = fb(["export", "abc", "--db", str(tmp_path / "none.duckdb")], capsys)
    assert code == 2 and "no results database" in out + err
    assert "Traceback" not in out + err
