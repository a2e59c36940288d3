"""Review decisions bound to what they judged (issue 24), undo per reviewer session, note
limits, and one sentence instead of a traceback for a damaged or unwritable decision store
(issue 27)."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image
from starlette.testclient import TestClient

from _review_fixtures import write_review_bench
from foilbench.cli.main import cli
from foilbench.data.format import load_benchmark, write_benchmark
from foilbench.review.app import SESSION_COOKIE, create_app, open_session
from foilbench.review.export import export_review
from foilbench.review.store import NOTE_LIMIT, DecisionStore, session_tag
from foilbench.review.units import ReviewError

BASE_URL = "http://127.0.0.1:8766"


@pytest.fixture()
def bench_dir(tmp_path):
    return write_review_bench(tmp_path / "bench")


def _decide_all_of_s0(session) -> None:
    session.decide("base", "s0", "accept")
    for key in ("s0-f00", "s0-f01", "s0-f02"):
        session.decide("instance", key, "accept")
        session.decide("verbosity", key, "accept")


def _recolour_foil(bench_dir, rel: str) -> None:
    path = bench_dir / rel
    arr = np.asarray(Image.open(path).convert("RGB")).copy()
    arr[30, 30] = (1, 2, 3)  # one pixel: the rebuild drew a slightly different foil
    Image.fromarray(arr).save(path)


def _reword_caption(bench_dir, foil_id: str) -> None:
    bench = load_benchmark(bench_dir)
    rows = bench.items["foil_id"] == foil_id
    bench.items.loc[rows & (bench.items["tier"] == "short"), "caption_foil"] = "a teal square"
    write_benchmark(bench, bench_dir)


# -- 7. decisions bound to the unit's content -----------------------------------------------


def test_units_have_content_hashes_that_follow_images_and_captions(bench_dir):
    before = open_session(bench_dir)
    h = {k: before.units.digest("instance", k) for k in ("s0-f00", "s0-f01", "s0-f02")}
    scene = before.units.digest("base", "s0")
    assert len(set(h.values())) == 3 and all(len(v) == 64 for v in h.values())
    before.store.close()
    _recolour_foil(bench_dir, "images/s0/foil_00.png")
    _reword_caption(bench_dir, "s0-f01")
    after = open_session(bench_dir)
    assert after.units.digest("instance", "s0-f00") != h["s0-f00"]  # image changed
    assert after.units.digest("instance", "s0-f01") != h["s0-f01"]  # caption changed
    assert after.units.digest("instance", "s0-f02") == h["s0-f02"]  # untouched
    assert after.units.digest("base", "s0") == scene  # base image and scene captions kept
    after.store.close()


def test_a_decision_on_a_changed_unit_is_not_applied_and_listed(bench_dir, tmp_path):
    session = open_session(bench_dir)
    _decide_all_of_s0(session)
    assert session.snapshot().outcome("s0-f00") == "kept"
    stored = session.store.current()[("instance", "s0-f00")]
    assert stored.unit_hash == session.units.digest("instance", "s0-f00")
    session.store.close()

    _recolour_foil(bench_dir, "images/s0/foil_00.png")  # a rebuild changed two units
    _reword_caption(bench_dir, "s0-f01")
    session = open_session(bench_dir)
    snap = session.snapshot()
    assert session.changed() == [("instance", "s0-f00"), ("instance", "s0-f01"),
                                 ("verbosity", "s0-f00"), ("verbosity", "s0-f01")]
    assert snap.instance_status("s0-f00") == "pending"
    assert snap.instance_status("s0-f01") == "pending"
    assert snap.instance_status("s0-f02") == "accept"  # unchanged: still applied
    assert snap.outcome("s0-f00") == "pending" and snap.outcome("s0-f02") == "kept"
    summary = snap.summary()
    assert {"phase": "instance", "key": "s0-f00"} in summary["rereview"]
    queue = {r["key"]: r for r in snap.queue("instance")}
    assert queue["s0-f00"]["changed"] and not queue["s0-f02"]["changed"]
    from foilbench.review.views import DriftCache, unit_view

    drift = DriftCache(session.units)
    assert unit_view(session.units, snap, "instance", "s0-f00", drift)["changed"] is True
    assert unit_view(session.units, snap, "verbosity", "s0-f01", drift)["changed"] is True
    assert unit_view(session.units, snap, "base", "s0", drift)["changed"] is False
    # the export keeps only what a decision still covers
    report = export_review(session, tmp_path / "qc", allow_pending=True)
    assert report["kept_instances"] == ["s0-f02"]
    # deciding again binds the decision to the new content
    session.decide("instance", "s0-f00", "accept")
    assert ("instance", "s0-f00") not in session.changed()
    session.store.close()


def test_review_status_warns_about_units_to_review_again(bench_dir):
    session = open_session(bench_dir)
    _decide_all_of_s0(session)
    session.store.close()
    _recolour_foil(bench_dir, "images/s0/foil_00.png")
    res = CliRunner().invoke(cli, ["review", "status", str(bench_dir)])
    assert res.exit_code == 0, res.output
    assert "2 unit(s) changed since they were decided" in res.output
    assert "instance 's0-f00'" in res.output and "re-review" in res.output


def test_decisions_of_an_older_store_without_hashes_still_apply(bench_dir):
    path = bench_dir / "review" / "decisions.sqlite"
    path.parent.mkdir()
    con = sqlite3.connect(path)  # schema 1 as written before hashes and sessions
    con.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, phase TEXT NOT NULL,
            unit TEXT NOT NULL, action TEXT NOT NULL, failed TEXT NOT NULL DEFAULT '[]',
            note TEXT NOT NULL DEFAULT '', reverts INTEGER, created TEXT NOT NULL);
        CREATE TABLE current (phase TEXT NOT NULL, unit TEXT NOT NULL, verdict TEXT NOT NULL,
            failed TEXT NOT NULL, note TEXT NOT NULL, seq INTEGER NOT NULL,
            PRIMARY KEY (phase, unit));
        INSERT INTO events VALUES (1, 'base', 's0', 'accept', '[]', '', NULL, 'then');
        INSERT INTO current VALUES ('base', 's0', 'accept', '[]', '', 1);
    """)
    con.commit()
    con.close()
    session = open_session(bench_dir)
    assert session.snapshot().scene_status("s0") == "accept"
    assert session.store.undo(session_tag("someone")) is None  # not that session's decision
    assert session.store.undo().unit == "s0"  # the store-level undo of anyone still works
    session.store.close()


# -- 9. undo per reviewer session; note limit --------------------------------------------------


def _client(session, cookie: str) -> tuple[TestClient, str]:
    client = TestClient(create_app(session), base_url=BASE_URL)
    client.cookies.set(SESSION_COOKIE, cookie)
    html = client.get("/").text
    return client, re.search(r'name="csrf-token" content="([0-9a-f]+)"', html).group(1)


def test_undo_takes_back_only_this_reviewers_decisions(bench_dir):
    session = open_session(bench_dir)
    alice, ta = _client(session, "alice-session")
    bob, tb = _client(session, "bob-session")
    post = {"phase": "instance", "verdict": "accept"}
    assert alice.post("/api/decide", headers={"X-CSRF-Token": ta},
                      json={**post, "key": "s0-f00"}).status_code == 200
    assert bob.post("/api/decide", headers={"X-CSRF-Token": tb},
                    json={**post, "key": "s1-f00"}).status_code == 200
    assert bob.post("/api/decide", headers={"X-CSRF-Token": tb},
                    json={"phase": "instance", "key": "s0-f00", "verdict": "reject",
                          "failed": ["edit_matches_caption"]}).status_code == 200
    # Alice's undo takes back her accept of s0-f00, not Bob's later decisions
    r = alice.post("/api/undo", headers={"X-CSRF-Token": ta}, json={})
    assert r.json()["undone"] == {"phase": "instance", "key": "s0-f00", "verdict": "accept"}
    snap = session.snapshot()
    assert snap.instance_status("s1-f00") == "accept"
    assert snap.instance_status("s0-f00") == "reject"  # Bob's reject stands
    assert r.json()["summary"]["can_undo"] is False  # Alice has nothing left to undo
    assert alice.post("/api/undo", headers={"X-CSRF-Token": ta}, json={}).json()["undone"] \
        is None
    assert bob.get("/api/summary").json()["can_undo"] is True
    # Bob's undo of his reject falls back to no decision in force (Alice's was undone)
    r = bob.post("/api/undo", headers={"X-CSRF-Token": tb}, json={})
    assert r.json()["undone"]["verdict"] == "reject"
    assert session.snapshot().instance_status("s0-f00") == "pending"
    # the log keeps a hash of each session, never the cookie
    tags = {e["session"] for e in session.store.events()}
    assert tags == {session_tag("alice-session"), session_tag("bob-session")}
    assert "alice-session" not in str(session.store.events())
    alice.close()
    bob.close()
    session.store.close()


def test_a_note_over_the_limit_is_refused_not_cut(bench_dir):
    session = open_session(bench_dir)
    session.decide("base", "s0", "reject", ["image_clean"], "x" * NOTE_LIMIT)  # at the limit
    with pytest.raises(ReviewError, match=f"note is {NOTE_LIMIT + 1} characters; the limit is "
                                          f"{NOTE_LIMIT}"):
        session.decide("base", "s1", "accept", note="x" * (NOTE_LIMIT + 1))
    assert ("base", "s1") not in session.store.current()
    client, token = _client(session, "carol")
    r = client.post("/api/decide", headers={"X-CSRF-Token": token},
                    json={"phase": "base", "key": "s1", "verdict": "accept",
                          "note": "y" * 5_000})
    assert r.status_code == 400 and "limit is 2000" in r.json()["error"]
    r = client.post("/api/decide", headers={"X-CSRF-Token": token},  # over the body bound
                    json={"phase": "base", "key": "s1", "verdict": "accept",
                          "note": "y" * 100_000})
    assert r.status_code == 413  # refused before it is read (issue 42)
    assert ("base", "s1") not in session.store.current()
    client.close()
    session.store.close()


# -- 9. a sentence, not a traceback ------------------------------------------------------------


def test_a_corrupt_decision_store_is_one_clear_message_exit_2(bench_dir):
    path = bench_dir / "review" / "decisions.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"this is not sqlite at all, garbage garbage garbage\n" * 20)
    with pytest.raises(ReviewError, match="is not a readable review database .*move it aside"):
        DecisionStore(path)
    res = subprocess.run([sys.executable, "-m", "foilbench", "review", "status",
                          str(bench_dir)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and "not a readable review database" in res.stderr
    assert path.read_bytes().startswith(b"this is not sqlite")  # nothing overwritten


def test_a_store_with_damaged_pages_is_caught_at_open(tmp_path):
    path = tmp_path / "decisions.sqlite"
    store = DecisionStore(path)
    for k in range(300):
        store.decide("base", f"s{k}", "accept", note="n" * 200)
    store.close()
    data = bytearray(path.read_bytes())
    for page in range(8, 12):  # b-tree pages of the events table (4096-byte pages)
        data[page * 4096 + 8: page * 4096 + 600] = b"\x00\xff" * 296
    path.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"decisions.sqlite{suffix}").unlink(missing_ok=True)
    with pytest.raises(ReviewError, match="not a readable review database"):
        DecisionStore(path)


@pytest.mark.parametrize("errno_name", ["EROFS", "EACCES"])
def test_a_read_only_review_folder_suggests_review_dir(bench_dir, monkeypatch, errno_name):
    """A read-only mount (EROFS) or a folder without write permission (EACCES): the errors
    the OS gives (the root user that runs these tests passes permission bits, so the error
    is raised where the folder is made)."""
    import errno
    import os
    from pathlib import Path

    code = getattr(errno, errno_name)
    real_mkdir = Path.mkdir

    def mkdir(self, *a, **kw):
        if self.name == "review":
            raise OSError(code, os.strerror(code), str(self))
        return real_mkdir(self, *a, **kw)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    # `review status` only reads (issue 42: tests/test_faults_progress_state.py); export
    # opens the decision log for writing
    res = CliRunner().invoke(cli, ["review", "export", str(bench_dir), "--out",
                                   str(bench_dir.parent / "exported")])
    assert isinstance(res.exception, ReviewError), res.output
    assert "give --review-dir DIR" in str(res.exception)
    monkeypatch.setattr(Path, "mkdir", real_mkdir)
    ok = CliRunner().invoke(cli, ["review", "status", str(bench_dir), "--review-dir",
                                  str(bench_dir.parent / "elsewhere")])
    assert ok.exit_code == 0, ok.output


def test_an_unopenable_database_file_suggests_review_dir(bench_dir, monkeypatch):
    import foilbench.review.store as store_mod

    def connect(*a, **kw):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(store_mod.sqlite3, "connect", connect)
    with pytest.raises(ReviewError, match="the folder is read-only: give --review-dir"):
        open_session(bench_dir)


def test_the_review_app_shows_a_check_that_did_not_run_as_not_checked(tmp_path):
    """In headless Chromium: a CompoSET build without a detector shows, on each instance,
    ``count check: not checked`` (issue 24), not a silent pass."""
    from _browser import browser_page
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.construct.composet.spec import ComposetConfig
    from foilbench.construct.engine.runner import run_pipeline
    from test_review_browser import IDLE, Server, _press

    backends = {r: resolve_backend(r, "template" if r == "text" else "world")
                for r in ("text", "image", "edit")}
    run_pipeline("composet", ComposetConfig(n_scenes=1, foils_per_scene=4, size=64, min_foils_per_scene=0), backends,
                 tmp_path / "cs", progress=False)
    server = Server(tmp_path / "cs")
    try:
        with browser_page() as (page, errors):
            page.goto(server.url)
            page.wait_for_selector("body[data-ready='1']")
            page.wait_for_function(IDLE)
            _press(page, "a")  # the one scene: accepted, the instance phase follows
            page.wait_for_function(
                "() => document.querySelector('#phases button.active')?.dataset.phase "
                "=== 'instance'")
            page.wait_for_function(IDLE)
            text = page.inner_text(".auto-checks")
            assert "count check: not checked" in text
            assert "pixel drift: 0.00% outside the edit region" in text
            assert errors == []
    finally:
        server.kill()
