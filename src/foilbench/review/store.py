"""The decision store: an append-only SQLite log of review decisions, one transaction each.

Why SQLite: it ships with Python, commits durably (WAL journal, ``synchronous=FULL``), and lets
several processes open the same file, so a killed server, a closed tab or a second terminal
running ``foilbench review status`` never loses or corrupts a decision. Every decision is one
``BEGIN IMMEDIATE ... COMMIT`` that appends to ``events`` and updates ``current`` (the latest
verdict per unit) together; the HTTP reply is sent only after the commit.

Undo is a stack per reviewer session (the browser's session cookie, stored only as a hash):
it reverts that session's most recent decision not already reverted (by appending an ``undo``
event that names it), and the unit's standing verdict becomes its latest decision still in
force, from any session, or pending if none. One reviewer's undo never takes back another's
decision. Nothing is ever deleted from ``events``, so the export can publish the full history.

Every decision also stores the content hash of the unit it judged (``unit_hash``: its images'
bytes and its captions, :mod:`foilbench.review.units`), so a decision about a unit that a
rebuild changed is not applied (:meth:`foilbench.review.state.ReviewSession.snapshot`).
Notes are limited to :data:`NOTE_LIMIT` characters (a longer one is refused, not cut).

A file that is not a readable SQLite database, or a folder the review cannot write, is a
:class:`ReviewError` with what to do (move the file aside; give ``--review-dir``).

The file lives in ``DIR/review/decisions.sqlite`` and also keeps the secret the app signs its
CSRF tokens with (so an open tab keeps working across a server restart); it is created with
owner-only permissions.
"""

from __future__ import annotations

import errno
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
NOTE_LIMIT = 2000  # characters of a reviewer note
#: columns added after schema 1 (added in place to an older file; old rows get '')
_ADDED = {"events": ("session", "unit_hash"), "current": ("unit_hash",)}

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
    unit_hash: str = ""  # content hash of the unit judged ('' for decisions before hashing)


def session_tag(session_id: str) -> str:
    """What the log keeps of a reviewer session: a short hash, never the cookie itself."""
    import hashlib

    return hashlib.sha256(session_id.encode()).hexdigest()[:16] if session_id else ""


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
    """Open (creating if needed) the decision log of one review folder; ``read_only``: read it
    without writing anything (``review status`` on a read-only folder), an absent log read as
    an empty one."""

    def __init__(self, path: str | Path, *, read_only: bool = False):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self._open_read_only() if read_only else self._open()
        except OSError as e:  # EACCES, EPERM, EROFS: the folder cannot be written
            if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise ReviewError(self._unwritable(e)) from None
            raise ReviewError(f"cannot open the review decisions at {self.path} ({e})") from None
        except sqlite3.OperationalError as e:
            if any(w in str(e) for w in ("unable to open", "readonly", "read-only")):
                raise ReviewError(self._unwritable(e)) from None
            raise ReviewError(self._corrupt(e)) from None
        except sqlite3.DatabaseError as e:
            raise ReviewError(self._corrupt(e)) from None

    def _unwritable(self, e: Exception) -> str:
        return (f"cannot write the review decisions in {self.path.parent} ({e}); the folder "
                "is read-only: give --review-dir DIR, a folder you can write, to keep them "
                "there")

    def _corrupt(self, e: Exception) -> str:
        return (f"{self.path} is not a readable review database ({e}); move it aside (or "
                "restore it from a backup) and run again: a new one is started, or give "
                "--review-dir for a fresh review elsewhere")

    def _open_read_only(self) -> None:
        if not self.path.exists():  # nothing decided yet: an empty log, written nowhere
            self.con = sqlite3.connect(":memory:", isolation_level=None,
                                       check_same_thread=False)
            self._create_schema()
            return
        uri = self.path.resolve().as_uri()
        self.con = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None,
                                   check_same_thread=False, timeout=30)
        try:
            self.con.execute("SELECT count(*) FROM events").fetchone()
        except sqlite3.OperationalError:  # a WAL log in a folder that cannot be written
            self.con.close()
            self.con = sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None,
                                       check_same_thread=False)
            self.con.execute("SELECT count(*) FROM events").fetchone()

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists()
        self.con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=30)
        if fresh:
            os.chmod(self.path, 0o600)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA synchronous=FULL")
        problems = [r[0] for r in self.con.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:  # damaged pages would otherwise fail later, mid-review
            raise sqlite3.DatabaseError("; ".join(problems[:3]))
        self._create_schema()

    def _create_schema(self) -> None:
        with self._transaction():
            for stmt in filter(str.strip, _SCHEMA.split(";")):
                self.con.execute(stmt)
            for table, columns in _ADDED.items():
                have = {r[1] for r in self.con.execute(f"PRAGMA table_info({table})")}
                for col in columns:
                    if col not in have:
                        self.con.execute(f"ALTER TABLE {table} ADD COLUMN {col} TEXT NOT NULL "
                                         "DEFAULT ''")
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

    def decide(self, phase: str, unit: str, verdict: str, failed=(), note: str = "", *,
               session: str = "", unit_hash: str = "") -> Decision:
        """Record one decision (replacing the unit's current verdict) in one transaction;
        ``session`` is the reviewer session's tag (:func:`session_tag`), ``unit_hash`` the
        content hash of the unit as the reviewer saw it."""
        failed = tuple(dict.fromkeys(failed))
        validate_decision(phase, verdict, failed)
        payload = json.dumps(list(failed))
        note = str(note or "")
        if len(note) > NOTE_LIMIT:
            raise ReviewError(f"note is {len(note)} characters; the limit is {NOTE_LIMIT}: "
                              "shorten it (nothing was recorded)")
        with self._transaction() as con:
            seq = con.execute(
                "INSERT INTO events (phase, unit, action, failed, note, created, session, "
                "unit_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [phase, unit, verdict, payload, note, _now(), session, unit_hash]).lastrowid
            con.execute("INSERT OR REPLACE INTO current (phase, unit, verdict, failed, note, "
                        "seq, unit_hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [phase, unit, verdict, payload, note, seq, unit_hash])
        return Decision(phase, unit, verdict, failed, note, seq, unit_hash)

    _IN_FORCE = ("action != 'undo' AND NOT EXISTS "
                 "(SELECT 1 FROM events u WHERE u.reverts = e.seq)")

    def undo(self, session: str | None = None) -> Decision | None:
        """Revert the latest decision in force of reviewer ``session`` (of anyone when None);
        returns it (None if that session has nothing to undo)."""
        who, args = ("", []) if session is None else (" AND session = ?", [session])
        with self._transaction() as con:
            row = con.execute(
                "SELECT seq, phase, unit, action, failed, note, unit_hash FROM events e "
                f"WHERE {self._IN_FORCE}{who} ORDER BY seq DESC LIMIT 1", args).fetchone()
            if row is None:
                return None
            seq, phase, unit, action, failed, note, unit_hash = row
            con.execute("INSERT INTO events (phase, unit, action, reverts, created, session) "
                        "VALUES (?, ?, 'undo', ?, ?, ?)",
                        [phase, unit, seq, _now(), session or ""])
            latest = con.execute(  # the unit's latest decision still in force, any session
                "SELECT seq, action, failed, note, unit_hash FROM events e WHERE phase = ? "
                f"AND unit = ? AND {self._IN_FORCE} ORDER BY seq DESC LIMIT 1",
                [phase, unit]).fetchone()
            if latest is None:
                con.execute("DELETE FROM current WHERE phase = ? AND unit = ?", [phase, unit])
            else:
                con.execute("INSERT OR REPLACE INTO current (phase, unit, verdict, failed, "
                            "note, seq, unit_hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [phase, unit, latest[1], latest[2], latest[3], latest[0],
                             latest[4]])
        return Decision(phase, unit, action, tuple(json.loads(failed)), note, seq, unit_hash)

    def current(self) -> dict[tuple[str, str], Decision]:
        """The latest standing decision of every decided (phase, unit)."""
        with self._lock:
            rows = self.con.execute("SELECT phase, unit, verdict, failed, note, seq, unit_hash "
                                    "FROM current").fetchall()
        return {(p, u): Decision(p, u, v, tuple(json.loads(f)), n, s, h)
                for p, u, v, f, n, s, h in rows}

    def can_undo(self, session: str | None = None) -> bool:
        who, args = ("", []) if session is None else (" AND session = ?", [session])
        with self._lock:
            row = self.con.execute(f"SELECT 1 FROM events e WHERE {self._IN_FORCE}{who} "
                                   "LIMIT 1", args).fetchone()
        return row is not None

    def events(self) -> list[dict]:
        """The whole log in order (decisions and undos), for the exported history."""
        with self._lock:
            cur = self.con.execute("SELECT seq, phase, unit, action, failed, note, reverts, "
                                   "created, session, unit_hash FROM events ORDER BY seq")
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
