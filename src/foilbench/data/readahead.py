"""Read-ahead for image files decoded in order: the disk reads the next files while the CPU
decodes this one.

A first run over a benchmark, or one after the page cache has been reclaimed, reads every
image from disk; read one file at a time, each read waits for the disk with the CPU idle, and
decoding waits for the read. :class:`ReadAhead` tells the kernel (``posix_fadvise`` with
``POSIX_FADV_WILLNEED``, which starts the read and returns at once) about the next
:data:`WINDOW` files before the current one is decoded, so reads and decoding overlap and the
read requests reach the disk several at a time. The window bounds what is asked for ahead of
use, so a benchmark larger than memory does not evict its own next files. Where the call does
not exist (macOS, Windows) or a file cannot be opened, nothing is done: the decode that follows
reads the file as before and reports any problem itself.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Sequence
from pathlib import Path

WINDOW = 32  # files asked for ahead of the one being decoded


def advise_will_need(path: Path | str) -> None:
    """Ask the kernel to start reading ``path`` into the page cache (no-op where unsupported
    or unreadable)."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    try:  # non-blocking: a FIFO named as an image must not stall the run here
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            advise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    except OSError:
        pass
    finally:
        os.close(fd)


class ReadAhead:
    """Advice for ``paths``, used in that order: :meth:`reached` ``(k)`` before file ``k`` is
    read asks for every file up to ``k + window`` not asked for yet. Safe to call from the
    decode threads; each file is asked for once."""

    def __init__(self, paths: Sequence[Path | str], window: int = WINDOW) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self._paths = list(paths)
        self._window = window
        self._next = 0  # first position not asked for yet
        self._lock = threading.Lock()

    def reached(self, k: int) -> None:
        with self._lock:
            start = self._next
            stop = min(len(self._paths), k + self._window + 1)
            self._next = max(start, stop)
        for path in self._paths[start:stop]:
            advise_will_need(path)
