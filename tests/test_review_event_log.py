"""The append-only event log the choice validation and the comparison share: undo is a
replay of reverts, and a failed write transaction leaves nothing behind."""

from __future__ import annotations

import pytest

from foilbench.review.event_log import immediate, open_event_db, standing

SCHEMA = "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, v TEXT, reverts INTEGER);"


def test_standing_drops_reverted_answers_and_keeps_order():
    rows = [(1, "a", None), (2, "b", None), (3, None, 2), (4, "c", None), (5, None, 4),
            (6, None, 1), (7, "d", None)]
    assert standing(rows) == [(7, "d")]
    assert standing([(1, "x", "y", None), (2, "z", "w", None)]) == [(1, "x", "y"),
                                                                   (2, "z", "w")]


def test_a_failed_transaction_is_rolled_back_and_a_good_one_kept(tmp_path):
    db = open_event_db(tmp_path / "sub" / "log.sqlite", SCHEMA)
    with pytest.raises(RuntimeError):
        with immediate(db):
            db.execute("INSERT INTO events VALUES (1, 'a', NULL)")
            raise RuntimeError("boom")
    assert db.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    with immediate(db):
        db.execute("INSERT INTO events VALUES (1, 'a', NULL)")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    again = open_event_db(tmp_path / "sub" / "log.sqlite", SCHEMA)
    assert again.execute("SELECT v FROM events").fetchall() == [("a",)]
    again.close()
