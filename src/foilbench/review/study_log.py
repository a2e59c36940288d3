"""The decision log of a one-page human study (Auto-Comp's concept check and solvability).

One SQLite file per study in the review folder: ``meta`` (key -> JSON text: the sample fixed
on first use, the CSRF secret) and ``decisions`` (every answer, in order, with its time; the
latest answer per unit counts, history kept). Each answer is its own transaction, so closing
the page or killing the server loses nothing and a rerun resumes. The schema is the one
``concept_checks.sqlite`` has always had, so older review folders read unchanged.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from foilbench.review.study_sample import SAMPLE_SIZE
from foilbench.review.units import ReviewError


class StudyLog:
    """``meta`` and ``decisions`` of one study file; safe to share across the app's threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # the web app answers from worker threads: one connection, serialised by a lock
        self.db = sqlite3.connect(self.path, check_same_thread=False)
        self.lock = threading.Lock()
        with self.lock, self.db:
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self.db.execute("CREATE TABLE IF NOT EXISTS decisions (seq INTEGER PRIMARY KEY "
                            "AUTOINCREMENT, unit TEXT NOT NULL, verdict TEXT NOT NULL, "
                            "at TEXT NOT NULL)")

    def meta(self, key: str) -> str | None:
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def meta_or_store(self, key: str, default: str) -> str:
        """The stored value of ``key``, storing ``default`` the first time."""
        with self.lock, self.db:
            self.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, default))
            return self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]

    def fixed_sample(self, seed: int, n: int, draw: Callable[[], dict]) -> dict:
        """The study's sample: the stored one, else ``draw()`` (a JSON dict holding ``seed``
        and ``n``) stored now, so a resumed study sees the same units. Another process may
        store one first; that one counts. One drawn with another seed or size is an error."""
        stored = self.meta("sample")
        if stored is None:
            stored = self.meta_or_store("sample", json.dumps(draw()))
        meta = json.loads(stored)
        if (meta["seed"], meta["n"]) != (seed, n):
            raise ReviewError(f"{self.path} holds a sample drawn with seed {meta['seed']} "
                              f"and size {meta['n']}; pass those, or use another "
                              "--review-dir for a new sample")
        return meta

    def csrf_secret(self) -> str:
        return self.meta_or_store("csrf_secret", secrets.token_hex(32))

    def decide(self, unit: str, verdict: str) -> None:
        with self.lock, self.db:
            self.db.execute("INSERT INTO decisions (unit, verdict, at) VALUES (?, ?, ?)",
                            (unit, verdict,
                             datetime.now(timezone.utc).isoformat(timespec="seconds")))

    def current(self) -> dict[str, str]:
        """The latest answer per unit."""
        with self.lock:
            rows = self.db.execute("SELECT unit, verdict FROM decisions ORDER BY seq").fetchall()
        return {unit: verdict for unit, verdict in rows}

    def history(self) -> list[tuple[int, str, str, str]]:
        """Every answer: ``(seq, unit, verdict, at)`` in order."""
        with self.lock:
            return self.db.execute("SELECT seq, unit, verdict, at FROM decisions "
                                   "ORDER BY seq").fetchall()

    def close(self) -> None:
        self.db.close()


class LoggedStudy:
    """What both Auto-Comp studies are: a benchmark, a sample fixed in a :class:`StudyLog` in
    the review folder on first use, and its units by key. A study names its ``DB_FILE`` and
    says how to draw a sample (``draw``: a JSON dict with ``seed``, ``n`` and the units) and
    read one back (``units_of``)."""

    DB_FILE = ""

    def __init__(self, bench: Any, folder: str | Path, n: int = SAMPLE_SIZE,
                 seed: int = 0) -> None:
        self.bench = bench
        self.log = StudyLog(Path(folder) / self.DB_FILE)
        self.path = self.log.path
        try:
            self.units = self.units_of(self.log.fixed_sample(seed, n,
                                                             lambda: self.draw(n, seed)))
        except BaseException:  # a study that did not open leaves no file open
            self.log.close()
            raise
        self.unit_by_key = {u.key: u for u in self.units}

    def draw(self, n: int, seed: int) -> dict:
        raise NotImplementedError

    def units_of(self, meta: dict) -> list[Any]:
        raise NotImplementedError

    def close(self) -> None:
        self.log.close()
