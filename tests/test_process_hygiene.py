"""The Python API leaves its caller's process as it found it: torch threads, environment
(in a fresh interpreter: tests/test_run_deferred_imports.py), logging configuration;
progress draws no carriage-return frames into a pipe; the command's ``--log-level`` is
honoured."""

from __future__ import annotations

import logging

import pytest
import torch
from click.testing import CliRunner

from foilbench import runner
from foilbench.cli.main import cli


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))


def _run(tmp_path, **options):
    said = []
    kw = {"n_boot": 200, "report": False, "log": lambda level, msg: said.append((level, msg)),
          **options}
    runner.run(["tiny-random"], ["tiny-builtin"], tmp_path / "out", **kw)
    return said


def test_torch_thread_count_before_and_after_a_run_are_equal(tmp_path):
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        _run(tmp_path, threads=1, progress=False)
        assert torch.get_num_threads() == 3
        torch.set_num_threads(2)  # the count chosen from the load, too
        _run(tmp_path, threads=0, progress=False)
        assert torch.get_num_threads() == 2
        torch.set_num_threads(3)
        runner.sweep(["tiny-random"], ["tiny-builtin"], tmp_path / "sweep", n_boot=200,
                     threads=1, progress=False, log=lambda level, msg: None)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)


def test_no_carriage_return_in_a_pipe_and_one_line_per_stage(tmp_path, capfd):
    said = _run(tmp_path)  # the default: bars only on a terminal; pytest's stderr is a pipe
    err = capfd.readouterr().err
    assert "\r" not in err
    lines = [msg for level, msg in said if level == "info"]
    assert "evaluating tiny-random on tiny-builtin (12 items)" in lines
    assert any(m.startswith("tiny-random") and "images: " in m and m.endswith(" to encode")
               for m in lines)
    assert any(m.startswith("tiny-random") and "texts: " in m and m.endswith(" to encode")
               for m in lines)
    _run(tmp_path, progress=True)  # asked for: bars even in a pipe
    assert "\r" in capfd.readouterr().err


def test_the_library_configures_no_logger(tmp_path):
    root, ours = logging.getLogger(), logging.getLogger("foilbench")
    before = (list(root.handlers), root.level, list(ours.handlers), ours.level)
    runner.run(["tiny-random"], ["tiny-builtin"], tmp_path / "o", n_boot=200, report=False,
               progress=False)  # the default log: the foilbench.runner logger
    assert (list(root.handlers), root.level, list(ours.handlers), ours.level) == before


@pytest.mark.parametrize(("level", "shown", "hidden"), [
    ("debug", ["debug: torch threads: 1", "evaluating tiny-random"], []),
    ("info", ["evaluating tiny-random"], ["torch threads"]),
    ("warning", ["warning: "], ["evaluating tiny-random", "torch threads"]),
    ("error", [], ["evaluating tiny-random", "warning: "]),
])
def test_log_level_is_honoured(tmp_path, level, shown, hidden):
    logger = logging.getLogger("foilbench")
    saved = (list(logger.handlers), logger.level)
    try:
        result = CliRunner().invoke(cli, [
            "run", "--model", "tiny-random", "--benchmark", "tiny-builtin", "--out",
            str(tmp_path / "o"), "--n-boot", "200", "--no-report", "--threads", "1",
            "--log-level", level])
        assert result.exit_code == 0, result.output
        text = " ".join(result.output.split())  # the console wraps long lines
        assert "\r" not in result.output
        for part in shown:
            assert part in text
        for part in hidden:
            assert part not in text
        assert logger.level == logging.getLevelName(level.upper())  # the CLI configures it
    finally:
        logger.handlers[:] = saved[0]
        logger.setLevel(saved[1])


def test_log_level_choice_is_checked(tmp_path):
    result = CliRunner().invoke(cli, ["run", "--log-level", "loud"])
    assert result.exit_code == 2 and "loud" in result.output
