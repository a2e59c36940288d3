"""Empty batch folders left by killed runs, removed by the next run on the same ``--out``.

A run writes ``OUT/<batch_id>/summary.json`` (and ``report.html``) when it ends. It used to
make that folder when it started, so a run killed midway (SIGKILL, power) left an empty
``OUT/<batch_id>/`` beside the results of every finished run. Now the folder is made only
when its first file is written; and a run removes the empty batch folders earlier versions
(or a kill in the instant between making the folder and writing to it) left, once they are
older than :data:`EMPTY_BATCH_GRACE_S`, so a folder another run has just made is never
taken from under it. Only empty folders named like a batch id are touched.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

#: an empty batch folder younger than this may be a live run's, about to get its summary
EMPTY_BATCH_GRACE_S = 600.0
#: ``20261130-021502.481-3f9a`` (:func:`foilbench.store.db.new_batch_id`)
BATCH_NAME = re.compile(r"^\d{8}-\d{6}\.\d{3}-[0-9a-f]{4}$")


def clear_empty_batches(out_dir: Path, now: float | None = None) -> list[Path]:
    """Remove the empty batch folders in ``out_dir`` older than the grace; returns them."""
    now = time.time() if now is None else now
    gone: list[Path] = []
    try:
        entries = list(Path(out_dir).iterdir())
    except OSError:  # not there yet, or unreadable: nothing to clear
        return gone
    for path in entries:
        if not BATCH_NAME.match(path.name) or path.is_symlink() or not path.is_dir():
            continue
        try:
            if now - path.stat().st_mtime <= EMPTY_BATCH_GRACE_S:
                continue
            path.rmdir()  # fails (and is left) unless empty
        except OSError:
            continue
        gone.append(path)
    return gone
