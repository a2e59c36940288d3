"""What is left and said while a run works or when it is stopped (issue 42, item 8).

- ``show`` while a first run loads its benchmarks (the suite build) says a run is in progress
  (it said "no results database" and exited 2 until the first cell was stored);
- a run interrupted before its first cell leaves no empty batch folder and no marker;
- an interrupted ``review export`` leaves nothing at ``--out`` (it is written whole or not at
  all: tests/test_faults_full_disk.py).
"""

from __future__ import annotations

import pytest

from _faults_cli import foilbench, no_traceback
from foilbench.runner import run


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))


def test_show_during_the_benchmark_load_says_a_run_is_in_progress(tmp_path, capsys,
                                                                  monkeypatch):
    import foilbench.runner.runs as runs

    seen = {}
    real = runs.load_benchmarks

    def loading(*args, **kwargs):  # what `show` says while the suite is being built
        seen["show"] = foilbench(capsys, "show", "--db", str(tmp_path / "out/foilbench.duckdb"))
        return real(*args, **kwargs)

    monkeypatch.setattr(runs, "load_benchmarks", loading)
    run(["tiny-random"], ["tiny-builtin"], tmp_path / "out", report=False, n_boot=100,
        progress=False)
    code, out, err = seen["show"]
    no_traceback(err)
    assert code == 0 and "a run is in progress on" in out and "nothing has finished" in out
    assert [p.name for p in (tmp_path / "out").glob(".foilbench-in-progress-*")] == []


def test_an_interrupted_run_leaves_no_empty_batch_folder(tmp_path, monkeypatch):
    import foilbench.runner.runs as runs

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runs, "evaluate_cell", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(["tiny-random"], ["tiny-builtin"], tmp_path / "out", report=False, n_boot=100,
            progress=False)
    assert list((tmp_path / "out").iterdir()) == []
