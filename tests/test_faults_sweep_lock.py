"""Two identical sweeps on one ``--out`` compute each cell once (issue 42, item 8): the second
waits on the cell's lock, then reuses the run the first stored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from foilbench.runner.cell_lock import cell_lock

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_a_held_cell_lock_makes_the_second_holder_wait(tmp_path):
    pytest.importorskip("fcntl")
    import threading

    order, said = [], []
    db = tmp_path / "foilbench.duckdb"
    first_in = threading.Event()

    def second():
        first_in.wait()
        with cell_lock(db, "cell", "m x b", lambda level, msg: said.append(msg)):
            order.append("second")

    t = threading.Thread(target=second)
    t.start()
    with cell_lock(db, "cell", "m x b", lambda level, msg: None):
        first_in.set()
        threading.Event().wait(0.5)
        order.append("first")
    t.join(30)
    assert order == ["first", "second"] and said == ["waiting for another sweep computing m x b"]
    with cell_lock(db, "another cell", "m x c", lambda level, msg: None):
        pass  # another cell is not held


def test_two_identical_sweeps_compute_each_cell_once(tmp_path):
    pytest.importorskip("fcntl")
    env = {**os.environ, "PYTHONPATH": SRC, "FOILBENCH_HOME": str(tmp_path / "home")}
    # the embedded suite's images drawn once first, so both sweeps start at the cells
    subprocess.run([sys.executable, "-m", "foilbench", "inspect", "tiny-builtin", "--json"],
                   env=env, capture_output=True, check=True)
    args = [sys.executable, "-m", "foilbench", "sweep", "--model", "tiny-random", "--benchmark",
            "tiny-builtin", "--out", str(tmp_path / "out"), "--n-boot", "2000", "--quiet"]
    sweeps = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(2)]
    for p in sweeps:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err.decode()
    con = duckdb.connect(str(tmp_path / "out" / "foilbench.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    finally:
        con.close()
