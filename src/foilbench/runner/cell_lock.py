"""One cell computed once, however many sweeps ask for it at the same time.

Two identical ``sweep`` commands on one ``--out`` each found no finished run for a cell (the
other had not stored it yet) and both computed every cell. :func:`cell_lock` holds an
exclusive lock file per cell (the model's fingerprint and the benchmark's checksum) beside the
results store while a sweep looks for the cell's finished run and, finding none, computes and
stores it; a second sweep waits on the lock, then finds the stored run and reuses it. The
lock is the operating system's (``flock``): a killed sweep releases it. Where ``fcntl`` does
not exist (Windows), cells are not locked (the old behaviour: both compute).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from foilbench.runner.log import Log

LOCK_DIR = ".foilbench-cells"


@contextmanager
def cell_lock(db_path: Path, key: str, what: str, log: Log) -> Iterator[None]:
    """Hold the lock of cell ``key`` of the store at ``db_path``; ``what`` names the cell in
    the one message said while waiting. A lock file that cannot be made is no lock."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    folder = Path(db_path).parent / LOCK_DIR
    name = hashlib.sha256(key.encode()).hexdigest()[:32] + ".lock"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / name, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a full or read-only folder: the store will say so itself
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log("info", f"waiting for another sweep computing {what}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:  # who holds it, for a person looking (the file is never empty)
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass  # a full disk: the lock still holds
        yield
    finally:
        os.close(fd)  # releases the lock
