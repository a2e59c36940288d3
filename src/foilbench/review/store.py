"""The decision store: an append-only SQLite log of review decisions, one transaction each.

Why SQLite: it ships with Python, commits durably (WAL journal, ``synchronous=FULL``), and lets
several processes open the same file, so a killed server, a closed tab or a second terminal
running ``foilbench review status`` never loses or corrupts a decision. Every decision is one
``BEGIN IMMEDIATE ... COMMIT`` that appends to ``events`` and updates ``current`` (the latest
verdict per unit) together; the HTTP reply is sent only after the commit.

Undo is a stack over the log: it reverts the most recent decision not already reverted (by
appending an ``undo`` event that names it) and restores that unit's previous verdict, or its
pending state if it had none. Nothing is ever deleted from ``events``, so the export can
publish the full history.

The file lives in ``DIR/review/decisions.sqlite`` and also keeps the secret the app signs its
CSRF tokens with (so an open tab keeps working across a server restart); it is created with
owner-only permissions.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from foilbench.review.rubric import PHASE_KEYS, VERDICTS, criterion_keys
from foilbench.review.units import ReviewError

SCHEMA_VERSION = "1"
DB_NAME = "decisions.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    phase TEXT NOT NULL,
    unit TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('accept', 'reject', 'undo')),
    failed TEXT NOT NULL DEFAULT '[]',
    note TEXT NOT NULL DEFAULT '',
    reverts INTEGER REFERENCES events(seq),
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS current (
    phase TEXT NOT NULL,
    unit TEXT NOT NULL,
    verdict TEXT NOT NULL,
    failed TEXT NOT NULL,
    note TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (phase, unit)
);
"""


@dataclass(frozen=True)
class Decision:
    phase: str
    unit: str
    verdict: str  # "accept" or "reject"
    failed: tuple[str, ...]  # failed criterion keys (empty for an accept)
    note: str
    seq: int


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def validate_decision(phase: str, verdict: str, failed: list[str] | tuple[str, ...]) -> None:
    """Refuse a decision the rubric does not allow (message names the bad field)."""
    if phase not in PHASE_KEYS:
        raise ReviewError(f"phase {phase!r} is not one of {', '.join(PHASE_KEYS)}")
    if verdict not in VERDICTS:
        raise ReviewError(f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    allowed = criterion_keys(phase)
    unknown = [c for c in failed if c not in allowed]
    if unknown:
        raise ReviewError(f"failed criteria {unknown} are not criteria of the {phase} phase "
                          f"({', '.join(allowed)})")
    if verdict == "reject" and not failed:
        raise ReviewError("a reject must name at least one failed criterion")
    if verdict == "accept" and failed:
        raise ReviewError("an accept cannot name failed criteria")


class DecisionStore:
    """Open (creating if needed) the decision log of one review folder."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists()
        self._lock = threading.Lock()
        self.con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=30)
        if fresh:
            os.chmod(self.path, 0o600)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA synchronous=FULL")
        with self._transaction():
            for stmt in filter(str.strip, _SCHEMA.split(";")):
                self.con.execute(stmt)
            self.con.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                             [SCHEMA_VERSION])
            self.con.execute("INSERT OR IGNORE INTO meta VALUES ('created', ?)", [_now()])
            self.con.execute("INSERT OR IGNORE INTO meta VALUES ('csrf_secret', ?)",
                             [secrets.token_hex(32)])

    # -- plumbing ---------------------------------------------------------------------------

    class _Tx:
        def __init__(self, store: DecisionStore):
            self.store = store

        def __enter__(self):
            self.store._lock.acquire()
            self.store.con.execute("BEGIN IMMEDIATE")
            return self.store.con

        def __exit__(self, exc_type, exc, tb):
            try:
                self.store.con.execute("ROLLBACK" if exc_type else "COMMIT")
            finally:
                self.store._lock.release()
            return False

    def _transaction(self) -> DecisionStore._Tx:
        return DecisionStore._Tx(self)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> DecisionStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- meta -------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self.con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def set_meta_once(self, key: str, value: str) -> str:
        """Store ``value`` under ``key`` unless one is there; return the stored value."""
        with self._transaction() as con:
            con.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", [key, value])
            return con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()[0]

    # -- decisions --------------------------------------------------------------------------

    def decide(self, phase: str, unit: str, verdict: str, failed=(), note: str = "") -> Decision:
        """Record one decision (replacing the unit's current verdict) in one transaction."""
        failed = tuple(dict.fromkeys(failed))
        validate_decision(phase, verdict, failed)
        payload = json.dumps(list(failed))
        note = str(note or "")[:2000]
        with self._transaction() as con:
            seq = con.execute(
                "INSERT INTO events (phase, unit, action, failed, note, created) "
                "VALUES (?, ?, ?, ?, ?, ?)", [phase, unit, verdict, payload, note, _now()]
            ).lastrowid
            con.execute("INSERT OR REPLACE INTO current VALUES (?, ?, ?, ?, ?, ?)",
                        [phase, unit, verdict, payload, note, seq])
        return Decision(phase, unit, verdict, failed, note, seq)

    def undo(self) -> Decision | None:
        """Revert the latest decision not yet reverted; returns it (None if nothing to undo)."""
        with self._transaction() as con:
            row = con.execute(
                "SELECT seq, phase, unit, action, failed, note FROM events e "
                "WHERE action != 'undo' AND NOT EXISTS "
                "(SELECT 1 FROM events u WHERE u.reverts = e.seq) ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            if row is None:
                return None
            seq, phase, unit, action, failed, note = row
            con.execute("INSERT INTO events (phase, unit, action, reverts, created) "
                        "VALUES (?, ?, 'undo', ?, ?)", [phase, unit, seq, _now()])
            prev = con.execute(
                "SELECT seq, action, failed, note FROM events e WHERE phase = ? AND unit = ? "
                "AND action != 'undo' AND seq < ? AND NOT EXISTS "
                "(SELECT 1 FROM events u WHERE u.reverts = e.seq) ORDER BY seq DESC LIMIT 1",
                [phase, unit, seq]).fetchone()
            if prev is None:
                con.execute("DELETE FROM current WHERE phase = ? AND unit = ?", [phase, unit])
            else:
                con.execute("INSERT OR REPLACE INTO current VALUES (?, ?, ?, ?, ?, ?)",
                            [phase, unit, prev[1], prev[2], prev[3], prev[0]])
        return Decision(phase, unit, action, tuple(json.loads(failed)), note, seq)

    def current(self) -> dict[tuple[str, str], Decision]:
        """The latest standing decision of every decided (phase, unit)."""
        with self._lock:
            rows = self.con.execute(
                "SELECT phase, unit, verdict, failed, note, seq FROM current").fetchall()
        return {(p, u): Decision(p, u, v, tuple(json.loads(f)), n, s)
                for p, u, v, f, n, s in rows}

    def can_undo(self) -> bool:
        with self._lock:
            row = self.con.execute(
                "SELECT 1 FROM events e WHERE action != 'undo' AND NOT EXISTS "
                "(SELECT 1 FROM events u WHERE u.reverts = e.seq) LIMIT 1").fetchone()
        return row is not None

    def events(self) -> list[dict]:
        """The whole log in order (decisions and undos), for the exported history."""
        with self._lock:
            cur = self.con.execute("SELECT seq, phase, unit, action, failed, note, reverts, "
                                   "created FROM events ORDER BY seq")
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
