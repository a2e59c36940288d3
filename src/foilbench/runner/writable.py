"""Where a run writes, checked before any work, and a write that fails said in one sentence.

- ``--out`` that cannot be written (a read-only file system, no permission): refused before a
  model is loaded, naming the folder and what to do.
- ``FOILBENCH_HOME`` that cannot be written: the run goes on with a temporary home (no
  embedding cache kept, tiny-builtin's images drawn again), with a warning; a read-only home
  must not stop an evaluation that needs nothing from it.
- a write that fails midway (disk full): :func:`write_failure` turns the ``OSError`` into a
  :class:`~foilbench.errors.FoilbenchError` that says what was kept and what to do; every file
  is written to a temporary name and moved into place, so nothing empty or half-written is
  left, and cells already stored stay in the results store.
"""

from __future__ import annotations

import atexit
import errno
import os
import re
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

from foilbench.paths import HOME_ENV, home, use_home
from foilbench.runner.log import Log
from foilbench.runner.settings import RunnerError

FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


class WriteError(RunnerError):
    """A file of the run could not be written (full disk, read-only folder)."""


def probe(folder: Path) -> OSError | None:
    """None when ``folder`` (created if missing) takes a new file; else the error."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".foilbench-probe-", dir=folder)
        os.close(fd)
        os.unlink(name)
    except OSError as e:
        return e
    return None


def check_out(out: Path, option: str = "--out") -> None:
    """Refuse an output folder that cannot be written, before any work."""
    err = probe(out)
    if err is not None:
        raise WriteError(f"cannot write to {option} {out}: {err.strerror or err} "
                         f"(choose a writable folder with {option} DIR)")


def usable_home(log: Log) -> None:
    """Keep going when ``FOILBENCH_HOME`` cannot be written: point it at a temporary folder
    for this process (deleted at exit) and warn."""
    where = home()
    err = probe(where)
    if err is None:
        return
    temp = tempfile.mkdtemp(prefix="foilbench-home-")
    atexit.register(shutil.rmtree, temp, ignore_errors=True)
    use_home(temp)
    log("warning", f"{HOME_ENV} {where} cannot be written ({err.strerror or err}): running "
                   f"without the cache (nothing is kept between runs; set {HOME_ENV} to a "
                   f"writable folder to cache embeddings again)")


def write_text(path: Path, text: str) -> Path:
    """``text`` to ``path`` through a temporary file moved into place (a failed write leaves
    the old file or none, never an empty or partial one)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


@contextmanager
def sentences(what: str, kept: str):
    """Inside: a full or read-only disk (``OSError``, or DuckDB's ``IOException`` for the
    results store) becomes a :class:`WriteError` naming the file, what is kept, what to do."""
    import duckdb

    try:
        yield
    except OSError as e:
        wrapped = write_failure(e, what, kept)
        if wrapped is None:
            raise
        raise wrapped from None
    except (duckdb.IOException, duckdb.TransactionException) as e:  # a failed COMMIT
        text = str(e)
        code = (errno.ENOSPC if "No space left" in text else
                errno.EROFS if "Read-only" in text or "Permission denied" in text else None)
        named = re.search(r'Could not write file "([^"]+)"', text)
        converted = None if code is None else \
            write_failure(OSError(code, os.strerror(code), named.group(1) if named else what),
                          what, kept)
        if converted is None:
            raise
        raise converted from None


def write_failure(err: OSError, what: str, kept: str) -> WriteError | None:
    """The sentence for a failed write of ``what`` (None: not a full or read-only disk)."""
    where = err.filename or what
    if err.errno in FULL:
        return WriteError(f"no space left writing {where}: free space (or choose another "
                          f"--out) and run the same command again; {kept}")
    if err.errno in READ_ONLY:
        return WriteError(f"cannot write {where} ({err.strerror}): choose a writable folder "
                          f"with --out DIR; {kept}")
    return None
