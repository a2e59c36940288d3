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


def _writes_refused(monkeypatch, folder):
    """Any write under ``folder`` fails as on a read-only file system (root ignores chmod, so
    the refusal is injected: a folder made, a database opened for writing)."""
    import errno
    import os
    import sqlite3
    from pathlib import Path

    import foilbench.review.store as store_mod

    real_mkdir, real_connect = Path.mkdir, sqlite3.connect

    def mkdir(self, *args, **kwargs):
        if str(self).startswith(str(folder)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real_mkdir(self, *args, **kwargs)

    def connect(database, *args, **kwargs):
        name = str(database)
        reading = name == ":memory:" or "mode=ro" in name or "immutable=1" in name
        if str(folder) in name and not reading:
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    monkeypatch.setattr(store_mod.sqlite3, "connect", connect)


def test_review_status_needs_no_write_access(tmp_path, capsys, monkeypatch):
    from _review_fixtures import write_review_bench
    from foilbench.review.app import open_session

    bench = write_review_bench(tmp_path / "bench")
    with monkeypatch.context() as m:  # never reviewed, read-only: nothing decided
        _writes_refused(m, bench)
        code, out, err = foilbench(capsys, "review", "status", str(bench))
        no_traceback(err)
        assert code == 0 and "0/23 decisions" in out
        assert not (bench / "review").exists()
    session = open_session(bench)
    session.decide("base", "s0", "accept")
    session.store.close()
    with monkeypatch.context() as m:  # reviewed, then made read-only: the decisions are read
        _writes_refused(m, bench)
        code, out, err = foilbench(capsys, "review", "status", str(bench))
        no_traceback(err)
        assert code == 0 and "1/23 decisions" in out, err
