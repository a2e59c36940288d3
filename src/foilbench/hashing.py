"""The sha256 helpers that every content key is built from: images and texts in the embedding
cache, weight files in model fingerprints, benchmark checksums. Hex digests, so a key reads the
same in a file name, a table and a log line."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

CHUNK = 1 << 20  # files are hashed in 1 MiB blocks: a multi-GB checkpoint never sits in memory
_FILE_HASHES: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "foilbench_file_hashes", default=None)


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``.

    >>> sha256_bytes(b"abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """Hex sha256 of ``text`` encoded as UTF-8 (so the key of a caption never depends on the
    platform's default encoding).

    >>> sha256_text("abc") == sha256_bytes(b"abc")
    True
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@contextlib.contextmanager
def remembered_file_hashes() -> Iterator[None]:
    """Inside the block a file is hashed once while its identity and times are unchanged
    (device, inode, size, mtime, ctime, read from the open file): a run's validation, its
    benchmark checksum and its engine each key an image by its sha256, and reading every image
    three times is a cost of its own. Scoped to a run, not the process, because a file can
    be rewritten within one clock tick of the file system; a nested block shares the outer
    one's memory. Threads started inside see it only when given the context
    (``contextvars.copy_context().run``)."""
    token = _FILE_HASHES.set(_FILE_HASHES.get() if _FILE_HASHES.get() is not None else {})
    try:
        yield
    finally:
        _FILE_HASHES.reset(token)


def sha256_file(path: str | Path, chunk: int = CHUNK) -> str:
    """Hex sha256 of a file's bytes, read in blocks of ``chunk`` bytes (remembered inside
    :func:`remembered_file_hashes`). Only a regular file is read: a FIFO or a device raises
    :class:`~foilbench.regular_files.NotRegularFile` instead of blocking or never ending."""
    from foilbench.regular_files import open_regular

    memo = _FILE_HASHES.get()
    if memo is not None:  # known: no need to open the file (stat follows symlinks as open does)
        try:
            known = memo.get(_identity(os.stat(path)))
        except (OSError, ValueError):  # missing, a loop, a NUL: the open below says what
            known = None
        if known is not None:
            return known
    with open_regular(path) as f:
        key = None
        if memo is not None:
            key = _identity(os.fstat(f.fileno()))
            known = memo.get(key)
            if known is not None:
                return known
        h = hashlib.sha256()
        while block := f.read(chunk):
            h.update(block)
    digest = h.hexdigest()
    if memo is not None and key is not None:
        memo[key] = digest
    return digest


def sha256_read(st: os.stat_result, data: bytes) -> str:
    """Hex sha256 of ``data``, the whole content of the file whose ``fstat`` (taken on the
    open file before the read) is ``st``: remembered, inside :func:`remembered_file_hashes`,
    as :func:`sha256_file` remembers it, so a caller that has read a file once for its own
    use (validation's header and decode) hashes it from those bytes and nobody reads it
    again."""
    memo = _FILE_HASHES.get()
    key = _identity(st)
    known = memo.get(key) if memo is not None else None
    if known is not None:
        return known
    digest = hashlib.sha256(data).hexdigest()
    if memo is not None:
        memo[key] = digest
    return digest


def _identity(st: os.stat_result) -> tuple:
    """What a remembered hash is keyed by: the file's identity and times."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
