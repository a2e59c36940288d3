"""A folder written whole or not at all: an export is built in a hidden sibling and moved into
place when complete.

``review export`` once wrote straight into ``--out``: a full disk (or an interrupt) midway
left a folder holding part of a benchmark, which the next export refused as "not empty" and
the user had to remove by hand. Inside :func:`staged_folder` the files go to
``.OUT.part-XXXX`` next to ``OUT``; on success it is renamed to ``OUT`` (one step, same file
system), on any failure it is removed. A full or read-only disk becomes one sentence naming
the destination (:class:`DiskWriteError`).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from foilbench.errors import FoilbenchError

FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


class DiskWriteError(FoilbenchError):
    """A destination could not be written: the disk is full or read-only."""


def disk_errno(err: BaseException) -> int | None:
    """The errno of a full or read-only disk behind ``err`` (an ``OSError``, or a library's
    error that only says so in its text: pyarrow, safetensors, SQLite), else None."""
    code = getattr(err, "errno", None)
    if code in FULL + READ_ONLY:
        return code
    text = str(err)
    found = re.search(r"(?:Errno |os error )(\d+)", text)
    if found and int(found.group(1)) in FULL + READ_ONLY:
        return int(found.group(1))
    if "No space left" in text or "database or disk is full" in text:
        return errno.ENOSPC
    if "Read-only file system" in text:
        return errno.EROFS
    return None


def disk_sentence(err: BaseException, destination: Path | str, what: str,
                  kept: str = "nothing was left there") -> str | None:
    """'no space left writing WHAT to DEST: KEPT; ...' for a full or read-only disk, else
    None."""
    code = disk_errno(err)
    if code is None:
        return None
    why = "no space left" if code in FULL else f"cannot write ({os.strerror(code)})"
    return (f"{why} writing {what} to {destination}: {kept}; free space or choose another "
            "destination, and run the same command again")


@contextmanager
def staged_folder(out: Path, what: str) -> Iterator[Path]:
    """Yield a new hidden folder beside ``out`` to write ``what`` into; moved to ``out`` when
    the block ends normally (``out`` may exist only as an empty folder), removed otherwise."""
    out = Path(out)
    staging = out.with_name(f".{out.name}.part-{uuid.uuid4().hex[:8]}")
    try:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            staging.mkdir()
            yield staging
            if out.is_dir():
                out.rmdir()  # empty (callers refuse a non-empty one first)
            os.replace(staging, out)
        except Exception as e:
            sentence = disk_sentence(e, out, what)
            if sentence is None:
                raise
            raise DiskWriteError(sentence) from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
