"""The spend ledger's folder lock: one holder at a time across threads, processes and
operating systems, and the holder's PID on record for whoever waits too long.

Why :mod:`filelock` (issue 38): ``fcntl`` exists only on POSIX, so the ledger could not even be
imported on Windows; ``filelock`` locks ``spend.lock`` with ``fcntl.flock`` on POSIX and
``msvcrt.locking`` on Windows. The holder's PID and host go to ``spend.holder`` (the lock file
itself is truncated by every waiter's attempt on some platforms).
"""

from __future__ import annotations

import os
import socket
import threading
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from foilbench.errors import FoilbenchError

LOCK = "spend.lock"
HOLDER = "spend.holder"


class LedgerBusyError(FoilbenchError):
    """Another process held the folder's spend lock for too long."""


def host() -> str:
    """This machine's name, as claims and the holder file record it."""
    return socket.gethostname()


class FolderLock:
    """Exclusive lock on ``DIR/spend.lock``; re-entrant within one thread of one object."""

    def __init__(self, folder: Path, timeout_s: float) -> None:
        self.folder = folder
        self.timeout_s = float(timeout_s)
        self._thread_lock = threading.RLock()
        self._file_lock: FileLock | None = None
        self._depth = 0

    @contextmanager
    def held(self):
        with self._thread_lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self.folder.mkdir(parents=True, exist_ok=True)
            if self._file_lock is None:
                self._file_lock = FileLock(str(self.folder / LOCK))
            try:
                self._file_lock.acquire(timeout=self.timeout_s, poll_interval=0.01)
            except Timeout:
                raise LedgerBusyError(
                    f"{self.folder}: the spend ledger is held by {self.holder()} for more "
                    f"than {self.timeout_s:.0f} s; wait for that process or stop it, then "
                    "rerun (two processes may share one --out).") from None
            try:
                (self.folder / HOLDER).write_text(f"PID {os.getpid()} on {host()}",
                                                  encoding="utf-8")
                self._depth = 1
                yield
            finally:
                self._depth = 0
                self._file_lock.release()

    def holder(self) -> str:
        try:
            text = (self.folder / HOLDER).read_text(encoding="utf-8").strip()
        except OSError:
            text = ""
        return text[:120] or "an unknown process"
