"""Only regular files are read as data: a FIFO, a device, a socket or a symlink loop named as an
image (or any file a benchmark names) is refused by name before a byte is read.

Opening a FIFO for reading blocks until a writer appears, so a benchmark holding one made
``inspect`` hang forever while hashing it; a character device (``/dev/zero``) never ends.
:func:`open_regular` opens without blocking (``O_NONBLOCK``, which changes nothing for a
regular file) and looks at what it opened (``fstat``), so there is no window between the check
and the read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


class NotRegularFile(OSError):
    """The path names something other than a regular file (``strerror`` says what)."""


def file_kind(mode: int) -> str:
    """'a FIFO (named pipe)', 'a socket', ... for a ``st_mode`` that is not a regular file."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for binary reading; :class:`NotRegularFile` when it is not a regular
    file, ``OSError`` (``ELOOP``) for a symlink loop, as ``open`` raises for a missing one."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, f"{file_kind(mode)}, not a regular file",
                                 str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def not_regular_reason(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as a data file ('a FIFO (named pipe)', 'a symlink loop',
    ...), or None when it is a regular file or does not exist (missing is the caller's case).
    Reads no byte, and raises for no failed ``stat`` (the caller's open says what failed)."""
    return _reason_and_mode(path)[0]


def regular_status(path: str | Path) -> tuple[str | None, bool]:
    """(:func:`not_regular_reason`, ``Path(path).is_file()``) from one ``stat``: a caller that
    needs both asks once. A stat that fails but for a loop asks ``is_file`` itself, so a
    missing file is missing and any other error is raised or not as ``is_file`` does."""
    reason, mode = _reason_and_mode(path)
    if mode is not None or reason is not None:
        return reason, mode is not None and reason is None
    return None, Path(path).is_file()


def _reason_and_mode(path: str | Path) -> tuple[str | None, int | None]:
    """(:func:`not_regular_reason`, ``st_mode`` or None when the ``stat`` failed)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return ("a symlink loop" if e.errno == errno.ELOOP else None), None
    except ValueError:  # a NUL byte in the name
        return "a path holding a NUL byte", None
    return (None if stat.S_ISREG(mode) else file_kind(mode)), mode
