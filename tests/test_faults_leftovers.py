"""What a killed ``review export`` or ``run`` leaves, the next one clears (issue 42).

A SIGKILLed export cannot remove its staging folder ``.OUT.part-*``: the next export to the
same ``--out`` removes those whose owner is dead (or that are a day old), never a live
exporter's. A SIGKILLed run used to leave an empty ``OUT/<batch_id>/``: the batch folder is
now made only when its summary is written, and a run removes old empty ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from _core_helpers import colour_pair_folder
from _faults_cli import foilbench, no_traceback
from _reliability import start_gated, subprocess_env
from _review_fixtures import write_review_bench
from foilbench.runner.batches import EMPTY_BATCH_GRACE_S, clear_empty_batches
from foilbench.staged import STALE_PART_S, host_tag, staged_folder, stale_parts

GIVE_UP_S = 600  # only a hung subprocess reaches this
DAY_AGO = time.time() - STALE_PART_S - 60


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def part(dest, pid, *, folder=True, tag=None):
    """A staging part of ``dest`` as a process ``pid`` of this host would name it."""
    path = dest.with_name(f".{dest.name}.part-{tag or host_tag()}-{pid}-0123abcd")
    if folder:
        path.mkdir()
        (path / "items.parquet").write_bytes(b"half")  # killed midway
    else:
        path.write_bytes(b"half")
    return path


def reviewed_bench(root):
    from foilbench.review.app import open_session

    bench = write_review_bench(root)
    session = open_session(bench)
    for phase in ("base", "instance", "verbosity"):
        for key in session.units.keys(phase):
            session.decide(phase, key, "accept")
    session.store.close()
    return bench


def test_a_rerun_of_a_killed_export_clears_the_dead_parts_and_keeps_live_ones(tmp_path, capsys):
    bench = reviewed_bench(tmp_path / "bench")
    dest = tmp_path / "exported"
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        dead = part(dest, dead_pid())
        dead_file = part(dest, dead_pid() + 0, folder=False, tag="abcdef")  # another host...
        os.utime(dead_file, (DAY_AGO, DAY_AGO))  # ...but a day old
        legacy = dest.with_name(f".{dest.name}.part-89abcdef")  # named before owners were
        legacy.mkdir()
        os.utime(legacy, (DAY_AGO, DAY_AGO))
        alive = part(dest, live.pid)
        elsewhere = part(dest, 4242, tag="fedcba")  # another host's, fresh: trusted
        code, _, err = foilbench(capsys, "review", "export", str(bench), "--out", str(dest))
        no_traceback(err)
        assert code == 0, err
        assert (dest / "manifest.json").is_file()
        assert not dead.exists() and not dead_file.exists() and not legacy.exists()
        assert alive.is_dir() and (alive / "items.parquet").read_bytes() == b"half"
        assert elsewhere.is_dir()
        left = sorted(p.name for p in tmp_path.iterdir() if ".part-" in p.name)
        assert left == sorted([alive.name, elsewhere.name])
    finally:
        live.kill()
        live.wait()
    assert stale_parts(dest) == [alive]  # its owner is gone now


def test_a_staged_folder_is_named_by_its_owner(tmp_path):
    out = tmp_path / "export"
    with staged_folder(out, "the thing") as staging:
        assert staging.name.startswith(f".export.part-{host_tag()}-{os.getpid()}-")
        assert stale_parts(out) == []  # our own, in use
        (staging / "a").write_text("x")
    assert [p.name for p in tmp_path.iterdir()] == ["export"]


def test_a_killed_run_leaves_no_batch_folder_and_the_rerun_clears_old_ones(tmp_path, capsys):
    bench, out, gate = colour_pair_folder(tmp_path / "bench"), tmp_path / "out", tmp_path / "g"
    gate.mkdir()
    out.mkdir()
    old = out / "20250101-000000.000-abcd"  # an earlier version's killed run
    old.mkdir()
    os.utime(old, (time.time() - EMPTY_BATCH_GRACE_S - 60,) * 2)
    fresh = out / "20250101-000001.000-abce"  # as if another run made it just now
    fresh.mkdir()
    keep = out / "20250101-000002.000-abcf"  # a finished batch
    keep.mkdir()
    (keep / "summary.json").write_text("{}")
    os.utime(keep, (time.time() - EMPTY_BATCH_GRACE_S - 60,) * 2)
    args = ["run", "--model", "gated", "--benchmark", str(bench), "--out", str(out),
            "--n-boot", "100", "--quiet", "--no-report"]
    log = tmp_path / "run.log"
    proc = start_gated(args, subprocess_env(tmp_path, FOILBENCH_GATE=str(gate)), log)
    try:
        deadline = time.monotonic() + GIVE_UP_S
        while not list(gate.glob("started-*")) and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert proc.poll() is None, log.read_text()
    finally:
        proc.kill()  # SIGKILL, inside its evaluation
        proc.wait()
    batches = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert batches == sorted([fresh.name, keep.name])  # the killed run made none

    (gate / "open").write_text("")
    rerun = start_gated(args, subprocess_env(tmp_path, FOILBENCH_GATE=str(gate)), log)
    assert rerun.wait(GIVE_UP_S) == 0, log.read_text()
    batches = [p for p in out.iterdir() if p.is_dir()]
    new = [p for p in batches if p not in (fresh, keep)]
    assert len(new) == 1 and (new[0] / "summary.json").is_file()
    assert fresh.is_dir() and keep.is_dir()  # too young to be judged; not empty
    assert not old.exists()


def test_clear_empty_batches_touches_only_empty_batch_named_folders(tmp_path):
    later = time.time() + EMPTY_BATCH_GRACE_S + 60
    (tmp_path / "20250101-000000.000-abcd").mkdir()
    (tmp_path / "sweep-20250101-000000.000-abcd").mkdir()  # a sweep's: not a run batch
    (tmp_path / "my-notes").mkdir()
    gone = clear_empty_batches(tmp_path, now=later)
    assert [p.name for p in gone] == ["20250101-000000.000-abcd"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "my-notes", "sweep-20250101-000000.000-abcd"]
