"""Issue 13, many processes on one results store: two ``foilbench run`` on the same ``--out``
at once both succeed, and ``show``, ``report`` and ``serve`` work (and see the finished runs)
while those runs are evaluating.

The runs are real subprocesses. To have both *inside* their evaluation at the same moment
without sleeps or timing, they use the ``gated`` test model (tests/_gated.py): each writes a
``started`` file when it reaches its first image batch and then waits for an ``open`` file.
"""

from __future__ import annotations

import json
import time

import pytest

from _core_helpers import colour_pair_folder
from _reliability import fb, serving, start_gated, subprocess_env
from foilbench import runner

GIVE_UP_S = 600  # only a hung subprocess reaches this; no assertion depends on timing


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    return tmp_path


def _wait_for(predicate, procs) -> None:
    deadline = time.monotonic() + GIVE_UP_S
    while not predicate():
        if any(p.poll() is not None for p in procs):
            return  # a run ended early: the assertions below show its log
        assert time.monotonic() < deadline, "the gated runs never started"
        time.sleep(0.1)


def test_two_runs_on_one_store_and_readers_during_them(env, capsys):
    bench = colour_pair_folder(env / "bench")
    out = env / "out"
    db = out / "foilbench.duckdb"
    first = runner.run(["tiny-random"], [str(bench)], out, report=False, n_boot=100,
                       progress=False, use_cache=False)  # a finished run readers should see
    gate = env / "gate"
    gate.mkdir()
    sub_env = subprocess_env(env, FOILBENCH_GATE=str(gate))
    args = ["run", "--model", "gated", "--benchmark", bench, "--out", out, "--n-boot", "100",
            "--no-report", "--quiet", "--no-cache"]
    logs = [env / "a.log", env / "b.log"]
    procs = [start_gated(args, sub_env, log) for log in logs]
    try:
        _wait_for(lambda: len(list(gate.glob("started-*"))) == 2, procs)
        assert [p.poll() for p in procs] == [None, None], [log.read_text() for log in logs]
        # both runs are evaluating now; readers work and see the finished run
        code, out_text, err = fb(["show", "--db", db, "--json"], capsys)
        assert code == 0, err
        assert [r["run_id"] for r in json.loads(out_text)] == first.run_ids
        code, _, err = fb(["report", "--db", db, "--out", env / "during.html"], capsys)
        assert code == 0, err
        assert "tiny-random" in (env / "during.html").read_text()
        with serving(db) as (get, run_id):
            assert run_id == first.run_ids[0]
            assert b"tiny-random" in get("/api/leaderboard.json").read()
    finally:
        (gate / "open").write_text("")
        codes = [p.wait(GIVE_UP_S) for p in procs]
    assert codes == [0, 0], [log.read_text() for log in logs]
    for log in logs:
        assert "stored 1 run(s)" in log.read_text()
    # both gated runs started before either was stored, so both are stored (repeats of one
    # another: plain `show` lists the latest, --all lists both)
    code, out_text, err = fb(["show", "--db", db, "--json", "--all"], capsys)
    runs = json.loads(out_text)
    assert code == 0 and len(runs) == 3
    assert sorted(r["model_spec"] for r in runs) == ["colour", "colour", "tiny-random"]
