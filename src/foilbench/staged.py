"""A folder written whole or not at all: an export is built in a hidden sibling and moved into
place when complete.

``review export`` once wrote straight into ``--out``: a full disk (or an interrupt) midway
left a folder holding part of a benchmark, which the next export refused as "not empty" and
the user had to remove by hand. Inside :func:`staged_folder` the files go to
``.OUT.part-XXXX`` next to ``OUT``; on success it is renamed to ``OUT`` (one step, same file
system), on any failure it is removed. A full or read-only disk becomes one sentence naming
the destination (:class:`DiskWriteError`).

A process killed midway (SIGKILL) cannot remove its staging folder. Its name therefore says
whose it is (``.OUT.part-<host>-<pid>-<random>``, the host as a short hash), and the next
export to ``OUT`` removes the leftovers no live exporter owns: those of a dead process on
this host, and any older than :data:`STALE_PART_S` (a PID reused by an unrelated process,
another host's, or one named before owners were). A live exporter's part is left alone.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import shutil
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from foilbench.errors import FoilbenchError
from foilbench.processes import pid_alive

FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)
#: a staging part older than this is removed whoever owns it (no export takes a day)
STALE_PART_S = 24 * 3600.0
_OWNER = re.compile(r"^([0-9a-f]{6})-(\d+)-[0-9a-f]{8}$")


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


def host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]


def _prefix(out: Path) -> str:
    return f".{out.name}.part-"


def stale_parts(out: Path, now: float | None = None) -> list[Path]:
    """The staging parts beside ``out`` that no live exporter owns (module docstring)."""
    out, now = Path(out), time.time() if now is None else now
    here, prefix = host_tag(), _prefix(out)
    found: list[Path] = []
    try:
        siblings = list(out.parent.iterdir())
    except OSError:  # no parent yet, or unreadable: nothing of ours to clear
        return []
    for path in siblings:
        if not path.name.startswith(prefix):
            continue
        try:
            age = now - path.lstat().st_mtime
        except OSError:  # removed meanwhile
            continue
        owner = _OWNER.match(path.name[len(prefix):])
        dead = (owner is not None and owner.group(1) == here
                and int(owner.group(2)) != os.getpid() and not pid_alive(int(owner.group(2))))
        if dead or age > STALE_PART_S:
            found.append(path)
    return found


def clear_stale_parts(out: Path) -> list[Path]:
    """Remove :func:`stale_parts` of ``out`` (a folder or a file); returns what went."""
    gone: list[Path] = []
    for path in stale_parts(out):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        if not os.path.lexists(path):
            gone.append(path)
    return gone


@contextmanager
def staged_folder(out: Path, what: str) -> Iterator[Path]:
    """Yield a new hidden folder beside ``out`` to write ``what`` into; moved to ``out`` when
    the block ends normally (``out`` may exist only as an empty folder), removed otherwise.
    Parts left beside ``out`` by killed exports are removed first (:func:`clear_stale_parts`)."""
    out = Path(out)
    clear_stale_parts(out)
    staging = out.with_name(f"{_prefix(out)}{host_tag()}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
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
