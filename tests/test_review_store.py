"""The review decision store and the rules built on it: transactions, undo, resume, scene
invalidation by a base reject, and export counts."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest

from _review_fixtures import write_review_bench
from foilbench.data.format import load_benchmark
from foilbench.review.app import open_session
from foilbench.review.export import REPORT_JSON, REPORT_MD, export_review
from foilbench.review.store import DecisionStore
from foilbench.review.units import ReviewError, build_units


@pytest.fixture()
def bench_dir(tmp_path):
    return write_review_bench(tmp_path / "bench")


def test_units_group_tiers_into_instances_and_scenes(bench_dir):
    units = build_units(load_benchmark(bench_dir))
    assert [s.key for s in units.scenes] == ["s0", "s1", "s2"]
    assert len(units.instances) == 10
    inst = units.instance_by_key["s1-f02"]
    assert list(inst.captions) == ["short", "medium", "long"]
    assert inst.mask == "masks/s1/foil_02.png" and units.mask_column == "mask_path"
    assert len(units.verbosity_instances) == 10
    assert units.scene_by_key["s1"].instance_keys == ("s1-f00", "s1-f01", "s1-f02", "s1-f03")


def test_units_without_foil_id_or_tier_use_image_pairs(bench_dir):
    bench = load_benchmark(bench_dir)
    bench.items = bench.items[bench.items["tier"] == "short"].drop(
        columns=["foil_id", "tier", "mask_path", "scene_id"])
    units = build_units(bench)
    assert len(units.instances) == 10 and not units.verbosity_instances
    assert units.mask_column is None
    assert len(units.scenes) == 3  # grouped by base image
    assert units.instances[0].key == "images/s0/base.png|images/s0/foil_00.png"


def test_decisions_are_committed_one_transaction_each(tmp_path):
    path = tmp_path / "d.sqlite"
    store = DecisionStore(path)
    store.decide("instance", "x", "reject", ["count_preserved", "count_preserved"], "n")
    # a second connection (another process, or a restarted server) sees it at once
    other = sqlite3.connect(path)
    rows = other.execute("SELECT unit, verdict, failed FROM current").fetchall()
    assert rows == [("x", "reject", '["count_preserved"]')]
    assert other.execute("SELECT count(*) FROM events").fetchone()[0] == 1
    other.close()
    with pytest.raises(ReviewError, match="at least one failed criterion"):
        store.decide("instance", "y", "reject", [])
    with pytest.raises(ReviewError, match="not criteria of the base phase"):
        store.decide("base", "y", "reject", ["count_preserved"])
    with pytest.raises(ReviewError, match="cannot name failed"):
        store.decide("base", "y", "accept", ["objects_present"])
    assert len(store.events()) == 1  # refused decisions wrote nothing
    store.close()
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_undo_is_a_stack_that_restores_previous_verdicts(tmp_path):
    store = DecisionStore(tmp_path / "d.sqlite")
    store.decide("instance", "a", "accept")
    store.decide("instance", "b", "accept")
    store.decide("instance", "a", "reject", ["edit_matches_caption"])
    assert store.current()[("instance", "a")].verdict == "reject"
    undone = store.undo()
    assert (undone.unit, undone.verdict) == ("a", "reject")
    assert store.current()[("instance", "a")].verdict == "accept"  # the earlier verdict
    assert store.undo().unit == "b"
    assert ("instance", "b") not in store.current()  # back to pending
    assert store.undo().unit == "a"
    assert store.current() == {}
    assert store.undo() is None and not store.can_undo()
    actions = [e["action"] for e in store.events()]
    assert actions == ["accept", "accept", "reject", "undo", "undo", "undo"]


def test_resume_after_reopen_starts_at_first_pending(bench_dir):
    s = open_session(bench_dir)
    assert s.snapshot().resume_position() == {"phase": "base", "key": "s0"}
    for scene in ("s0", "s1", "s2"):
        s.decide("base", scene, "accept")
    s.decide("instance", "s0-f00", "accept")
    s.store.close()
    s2 = open_session(bench_dir)  # as after a crash: a new process opens the same file
    assert s2.snapshot().resume_position() == {"phase": "instance", "key": "s0-f01"}
    assert s2.snapshot().progress()["done"] == 4
    s2.store.close()


def test_base_reject_invalidates_the_whole_scene(bench_dir):
    s = open_session(bench_dir)
    s.decide("instance", "s1-f00", "accept")
    s.decide("verbosity", "s1-f00", "accept")
    s.decide("base", "s1", "reject", ["objects_present"])
    snap = s.snapshot()
    assert {snap.instance_status(k) for k in s.units.scene_by_key["s1"].instance_keys} == \
        {"invalidated"}
    assert snap.outcome("s1-f00") == "discarded"
    assert snap.phase_stats("instance")["invalidated"] == 4
    assert snap.phase_stats("instance")["discard"]["n"] == 0  # not in phase-2 denominators
    with pytest.raises(ReviewError, match="invalidated"):
        s.decide("instance", "s1-f01", "accept")
    s.undo()  # the base reject
    assert s.snapshot().outcome("s1-f00") == "pending"  # scene back to pending
    s.store.close()


def test_verbosity_needs_an_accepted_instance(bench_dir):
    s = open_session(bench_dir)
    with pytest.raises(ReviewError, match="needs the instance accepted"):
        s.decide("verbosity", "s0-f00", "accept")
    with pytest.raises(ReviewError, match="no instance unit"):
        s.decide("instance", "nope", "accept")
    s.store.close()


def _decide_all(s) -> dict:
    """A full review with known outcomes; returns the expected counts."""
    for scene in ("s0", "s1"):
        s.decide("base", scene, "accept")
    s.decide("base", "s2", "reject", ["image_clean"])  # invalidates 3 instances
    rejects = {"s0-f01": ["count_preserved"], "s1-f03": ["nothing_else_changed",
                                                         "edit_matches_caption"]}
    for key in ("s0-f00", "s0-f01", "s0-f02", "s1-f00", "s1-f01", "s1-f02", "s1-f03"):
        failed = rejects.get(key, [])
        s.decide("instance", key, "reject" if failed else "accept", failed)
    for key in ("s0-f00", "s0-f02", "s1-f00", "s1-f01", "s1-f02"):
        bad = key == "s1-f02"
        s.decide("verbosity", key, "reject" if bad else "accept",
                 ["medium_keeps_phrase"] if bad else [])
    return {"kept": ["s0-f00", "s0-f02", "s1-f00", "s1-f01"], "discarded": 6}


def test_export_writes_kept_instances_and_rates(bench_dir, tmp_path):
    s = open_session(bench_dir)
    with pytest.raises(ReviewError, match="review unfinished"):
        export_review(s, tmp_path / "early")
    expected = _decide_all(s)
    report = export_review(s, tmp_path / "out")
    out = load_benchmark(tmp_path / "out")  # validates
    assert sorted(out.items["foil_id"].unique()) == expected["kept"]
    assert len(out) == 3 * len(expected["kept"]) == report["n_items"]
    assert all((tmp_path / "out" / m).is_file() for m in out.items["mask_path"])
    assert out.manifest.extras["qc"]["instances_kept"] == 4 and not out.manifest.partial
    ov = report["overall"]
    assert (ov["kept"], ov["discarded"], ov["pending"]) == (4, 6, 0)
    assert ov["discard"]["rate"] == pytest.approx(6 / 10)
    inst = report["phases"]["instance"]
    assert (inst["accept"], inst["reject"], inst["invalidated"]) == (5, 2, 3)
    assert inst["discard"]["rate"] == pytest.approx(2 / 7)
    assert inst["by_criterion"]["count_preserved"]["k"] == 1
    assert inst["by_criterion"]["nothing_else_changed"]["rate"] == pytest.approx(1 / 7)
    assert report["phases"]["base"]["discard"]["rate"] == pytest.approx(1 / 3)
    assert report["phases"]["verbosity"]["discard"]["rate"] == pytest.approx(1 / 5)
    by_et = report["by_edit_type"]
    assert sum(v["instances"] for v in by_et.values()) == 10
    assert sum(v["kept"] for v in by_et.values()) == 4
    saved = json.loads((tmp_path / "out" / REPORT_JSON).read_text())
    assert saved["overall"] == json.loads(json.dumps(ov))
    md = (tmp_path / "out" / REPORT_MD).read_text()
    assert "60.0% (6/10)" in md and "28.6% (2/7)" in md and "22.4%" in md
    log = pd.read_parquet(tmp_path / "out" / "qc_decisions.parquet")
    assert len(log) == 3 + 7 + 5
    with pytest.raises(ReviewError, match="not empty"):
        export_review(s, tmp_path / "out")
    s.store.close()


def test_export_with_pending_is_partial(bench_dir, tmp_path):
    s = open_session(bench_dir)
    s.decide("base", "s0", "accept")
    s.decide("instance", "s0-f00", "accept")
    s.decide("verbosity", "s0-f00", "accept")
    report = export_review(s, tmp_path / "out", allow_pending=True)
    out = load_benchmark(tmp_path / "out")
    assert list(out.items["foil_id"].unique()) == ["s0-f00"] and out.manifest.partial
    assert report["overall"]["pending"] == 9 and not report["complete"]
    s.store.close()
