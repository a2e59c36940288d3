"""``foilbench review`` through click: help that teaches, status, export, clear errors."""

from __future__ import annotations

import json

from click.testing import CliRunner

from _review_fixtures import write_review_bench
from foilbench.cli.main import cli
from foilbench.review.app import open_session


def _run(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_help_teaches_phases_keys_and_storage():
    res = _run(["review", "--help"])
    assert res.exit_code == 0
    for text in ("base review", "instance review", "verbosity review", "count preserved",
                 "undo", "decisions.sqlite", "review export DIR --out OUT"):
        assert text in res.output, text
    assert "review" in _run(["--help"]).output


def test_status_and_export(tmp_path):
    bench = write_review_bench(tmp_path / "bench")
    res = _run(["review", "status", str(bench)])
    assert res.exit_code == 0 and "0/23 decisions" in res.output
    assert "resumes at: base 's0'" in res.output
    session = open_session(bench)
    session.decide("base", "s0", "accept")
    session.decide("instance", "s0-f00", "reject", ["count_preserved"])
    session.store.close()
    res = _run(["review", "status", str(bench), "--json"])
    summary = json.loads(res.output)
    assert summary["phases"]["instance"]["discard"]["rate"] == 1.0
    res = CliRunner().invoke(cli, ["review", "export", str(bench), "--out",
                                   str(tmp_path / "o")])
    assert res.exit_code != 0 and "review unfinished" in str(res.exception)


def test_a_suite_folder_points_to_its_pair_benchmark(tmp_path):
    write_review_bench(tmp_path / "suite" / "world-pairs")
    res = CliRunner().invoke(cli, ["review", "status", str(tmp_path / "suite")])
    assert res.exit_code != 0
    assert "world-pairs" in str(res.exception) and "not a benchmark folder" in str(
        res.exception)
