"""The append-only SQLite event logs of the choice validation (:mod:`foilbench.review.choice`)
and the side-by-side comparison (:mod:`foilbench.review.compare`).

Each answer is an ``events`` row, committed before the page hears back (WAL journal,
``synchronous=FULL``: a killed server loses no answer it acknowledged); undo appends a row
that ``reverts`` an earlier one, so history is kept and the standing answers are a replay.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path


def open_event_db(path: Path, schema: str) -> sqlite3.Connection:
    """The log at ``path`` (its folder made), durable and in autocommit, shared by the app's
    threads; ``schema`` (``CREATE ... IF NOT EXISTS``) applied."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.executescript(schema)
    return db


@contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction taken up front (``BEGIN IMMEDIATE``), so a read-then-write such
    as undo sees no other writer in between; committed on leaving, rolled back on error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def standing(rows: Iterable[tuple]) -> list[tuple]:
    """``(seq, *answer)`` of every event not reverted, in order, from rows
    ``(seq, *answer, reverts)`` in ``seq`` order (``reverts`` None for an answer)."""
    live: dict[int, tuple] = {}
    for seq, *answer, reverts in rows:
        if reverts is None:
            live[seq] = tuple(answer)
        else:
            live.pop(reverts, None)
    return [(seq, *answer) for seq, answer in live.items()]


def utc_now() -> str:
    """An event's time: UTC, to the second, ISO 8601."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
