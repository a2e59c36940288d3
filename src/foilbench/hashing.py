"""The sha256 helpers that every content key is built from: images and texts in the embedding
cache, weight files in model fingerprints, benchmark checksums. Hex digests, so a key reads the
same in a file name, a table and a log line."""

from __future__ import annotations

import hashlib
from pathlib import Path

CHUNK = 1 << 20  # files are hashed in 1 MiB blocks: a multi-GB checkpoint never sits in memory


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


def sha256_file(path: str | Path, chunk: int = CHUNK) -> str:
    """Hex sha256 of a file's bytes, read in blocks of ``chunk`` bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()
