"""A marker beside the results store while a run or sweep works, so ``show`` can tell "a run
is in progress and nothing has finished yet" from "no run was ever made here".

The store itself appears only when the first cell is written (:mod:`foilbench.store.shared`
opens it per finished cell), so before that there is nothing to read. The marker is
``.foilbench-in-progress-<pid>.json`` in the store's folder: what runs, since when; it is
removed when the run ends, however it ends, and a marker whose process is gone (killed) is
ignored and cleaned up by the next reader.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from pathlib import Path

PREFIX = ".foilbench-in-progress-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


@contextmanager
def in_progress(db_path: Path, what: str):
    """Mark ``db_path``'s folder while the ``with`` block runs (a marker that cannot be
    written is skipped: the run matters more than the marker)."""
    path = Path(db_path).parent / f"{PREFIX}{os.getpid()}.json"
    marker: Path | None = path
    try:
        path.write_text(json.dumps({"pid": os.getpid(), "what": what,
                                      "db": str(db_path), "started": time.time()}))
    except OSError:
        marker = None
    try:
        yield
    finally:
        if marker is not None:
            marker.unlink(missing_ok=True)


def active(db_path: Path) -> list[dict]:
    """The runs working on ``db_path`` now (their markers, oldest first)."""
    found = []
    for marker in sorted(Path(db_path).parent.glob(f"{PREFIX}*.json")):
        try:
            info = json.loads(marker.read_text())
            pid = int(info["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if Path(info.get("db", "")) != Path(db_path):
            continue
        if not _alive(pid):
            marker.unlink(missing_ok=True)
            continue
        found.append(info)
    return sorted(found, key=lambda i: i.get("started", 0))
