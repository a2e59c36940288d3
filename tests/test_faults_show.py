"""``foilbench show`` while a run is still on its first cell (issue 27): nothing is stored
yet, and ``show`` says a run is in progress (exit 0) instead of "no results database"; once
the cell is stored it lists the run, and a marker left by a killed run is ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from _core_helpers import colour_pair_folder
from _reliability import fb, start_gated, subprocess_env

GIVE_UP_S = 600  # only a hung subprocess reaches this


def test_show_during_the_first_cell_says_a_run_is_in_progress(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    bench, out, gate = colour_pair_folder(tmp_path / "bench"), tmp_path / "out", tmp_path / "g"
    gate.mkdir()
    db = out / "foilbench.duckdb"
    log = tmp_path / "run.log"
    proc = start_gated(["run", "--model", "gated", "--benchmark", str(bench), "--out", str(out),
                        "--n-boot", "100", "--quiet", "--no-report"],
                       subprocess_env(tmp_path, FOILBENCH_GATE=str(gate)), log)
    try:
        deadline = time.monotonic() + GIVE_UP_S
        while not list(gate.glob("started-*")) and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert proc.poll() is None, log.read_text()
        assert not db.exists()  # on its first cell: nothing stored
        code, text, err = fb(["show", "--db", db], capsys)
        assert code == 0, err
        assert "a run is in progress" in text and "nothing has finished yet" in text
        assert f"process {proc.pid}" in text
    finally:
        (gate / "open").write_text("")
        assert proc.wait(GIVE_UP_S) == 0, log.read_text()
    code, text, err = fb(["show", "--db", db, "--json"], capsys)
    assert code == 0 and len(json.loads(text)) == 1
    assert not list(out.glob(".foilbench-in-progress-*"))  # the marker went with the run


def test_a_killed_run_s_marker_is_ignored(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    marker = out / f".foilbench-in-progress-{dead.pid}.json"
    marker.write_text(json.dumps({"pid": dead.pid, "what": "run", "started": time.time(),
                                  "db": str(out / "foilbench.duckdb")}))
    assert not os.path.exists(out / "foilbench.duckdb")
    code, _, err = fb(["show", "--db", out / "foilbench.duckdb"], capsys)
    assert code == 2 and "no results database" in err
    assert not marker.exists()
