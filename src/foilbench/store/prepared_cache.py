"""The prepared-image cache: an image after a model's resize and crop, as uint8, on disk.

Decoding a JPEG and resizing it costs as much as a tiny model's forward pass; a sweep whose
models share one preprocessing needs that result once, and a later sweep over the same
benchmark with a new model needs it not at all. Entries are keyed by (transform fingerprint,
sha256 of the image file) (:mod:`foilbench.scoring.prepared` makes the fingerprint) and hold
the (H, W, 3) uint8 pixels at the model's input size.

Layout under the root (default ``<embedding cache root>/prepared-images``, so Ray workers
that open the configured shared cache folder share it too)::

    <root>/<sha256(fingerprint)[:16]>/fingerprint.txt
    <root>/<sha256(fingerprint)[:16]>/<hash[:2]>/<hash>.safetensors   tensor "pixels"

Like the embedding cache (:mod:`foilbench.store.cache`) every file is written to a temporary
name and moved into place (``os.replace``), and carries the sha256 of its contents
(:func:`foilbench.store.cache.content_sha256`) in its metadata, verified on every read. An
entry that is unreadable, fails its checksum, lacks it, or has another shape or dtype than
the caller expects is reported, deleted and recomputed, never used.

Size limit: ``max_bytes`` (default :data:`DEFAULT_MAX_BYTES`). A read touches the file's
mtime, so the oldest mtime is the least recently used; after a write that takes the cache past
the limit, the least recently used entries are deleted until it is at 90% of it.
"""

from __future__ import annotations

import os
import re
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save

from foilbench.hashing import sha256_text
from foilbench.store.cache import CHECKSUM_KEY, UNWRITABLE, CacheWarning, content_sha256

DEFAULT_MAX_BYTES = 4 * 1024**3
FOLDER = "prepared-images"
KEY = "pixels"
SHA256_HEX = re.compile(r"[0-9a-f]{64}\Z")


def write_bytes(path: str, data: bytes) -> None:
    """Write ``data`` to a new file at ``path`` (the one write of an entry)."""
    with open(path, "wb") as fh:
        fh.write(data)


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=4)


class PreparedImageCache:
    """uint8 prepared images keyed by (transform fingerprint, image sha256), size-limited."""

    def __init__(self, root: str | Path | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 notify: Callable[[str], None] | None = None) -> None:
        if root is None:
            from foilbench.store.cache import default_cache_root

            root = default_cache_root() / FOLDER
        if not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_bytes must be a positive integer, got {max_bytes!r}")
        self.root = Path(root)
        self.max_bytes = max_bytes
        self.notify = notify or _warn
        self._size: int | None = None  # bytes on disk, counted on the first write
        self.writable = True
        self._folders: dict[str, Path] = {}  # fingerprint -> its folder
        self._made: set[str] = set()  # entry folders this instance made or found

    def path(self, fingerprint: str, image_hash: str) -> Path:
        if not isinstance(image_hash, str) or not SHA256_HEX.match(image_hash):
            raise ValueError(f"prepared-image keys must be sha256 hex digests, got "
                             f"{image_hash!r}")
        folder = self._folders.get(fingerprint)
        if folder is None:
            folder = self._folders[fingerprint] = self.root / sha256_text(fingerprint)[:16]
        return folder / image_hash[:2] / f"{image_hash}.safetensors"

    def get(self, fingerprint: str, image_hash: str, shape: tuple[int, ...] | None = None
            ) -> np.ndarray | None:
        """The stored pixels, or None (a miss, or a bad entry: reported, deleted)."""
        path = self.path(fingerprint, image_hash)
        try:
            with safe_open(str(path), framework="numpy") as f:
                stored = (f.metadata() or {}).get(CHECKSUM_KEY)
                tensors = {name: f.get_tensor(name) for name in f.keys()}
        except FileNotFoundError:
            return None
        except Exception as e:  # truncated, empty, not safetensors
            return self._bad(path, f"unreadable ({str(e).splitlines()[0][:120] or e!r})")
        if stored is None:
            return self._bad(path, "without a checksum")
        if content_sha256(tensors) != stored:
            return self._bad(path, "corrupt (its contents do not match its checksum)")
        pixels = tensors.get(KEY)
        if pixels is None or pixels.dtype != np.uint8 or pixels.ndim != 3 \
                or (shape is not None and tuple(pixels.shape) != tuple(shape)):
            got = None if pixels is None else (pixels.dtype, pixels.shape)
            return self._bad(path, f"stale (holds {got}, expected uint8 {shape})")
        try:
            os.utime(path)  # least recently used = oldest mtime
        except OSError:
            pass
        return pixels

    def put(self, fingerprint: str, image_hash: str, pixels: np.ndarray) -> None:
        """Store ``pixels`` (uint8, H x W x C) atomically; an unwritable cache is reported once
        and then skipped (the run goes on without it)."""
        pixels = np.ascontiguousarray(pixels)
        if pixels.dtype != np.uint8 or pixels.ndim != 3:
            raise ValueError(f"prepared images are uint8 (H, W, C), got {pixels.dtype} "
                             f"{pixels.shape}")
        if not self.writable:
            return
        final = str(self.path(fingerprint, image_hash))
        if os.path.exists(final):  # content-addressed: the same key holds the same pixels
            return
        tensors = {KEY: pixels}
        data = save(tensors, metadata={CHECKSUM_KEY: content_sha256(tensors)})
        try:
            self._write(fingerprint, final, data)
        except OSError as e:
            if e.errno not in UNWRITABLE:
                raise
            self.writable = False
            self.notify(f"the prepared-image cache {self.root} is not writable "
                        f"({e.strerror or e}); images are prepared without it")
            return
        if self._size is None:
            self._size = self.size_bytes()
        else:
            self._size += len(data)
        if self._size > self.max_bytes:
            self.evict(int(self.max_bytes * 0.9))

    def _write(self, fingerprint: str, final: str, data: bytes) -> None:
        """``data`` to a temporary name in the entry's folder, then moved into place; the
        folder (and its fingerprint label) is made once per instance, and again if it went
        away meanwhile."""
        folder = os.path.dirname(final)
        for attempt in (1, 2):
            if folder not in self._made:
                os.makedirs(folder, exist_ok=True)
                label = os.path.join(os.path.dirname(folder), "fingerprint.txt")
                if not os.path.exists(label):
                    write_bytes(label, (fingerprint + "\n").encode())
                self._made.add(folder)
            tmp = f"{final[:-len('.safetensors')]}-{uuid.uuid4().hex}.tmp"
            try:
                write_bytes(tmp, data)
                os.replace(tmp, final)
                return
            except FileNotFoundError:
                if attempt == 2:
                    raise
                self._made.discard(folder)  # removed under us: make it again
            except BaseException:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise

    def entries(self) -> list[tuple[float, int, Path]]:
        """(mtime, bytes, path) of every entry."""
        out: list[tuple[float, int, Path]] = []
        if not self.root.is_dir():
            return out
        for path in self.root.glob("*/*/*.safetensors"):
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            out.append((st.st_mtime, st.st_size, path))
        return out

    def size_bytes(self) -> int:
        return sum(size for _, size, _ in self.entries())

    def evict(self, target: int) -> int:
        """Delete least recently used entries until at most ``target`` bytes remain; returns
        the number deleted."""
        entries = sorted(self.entries())
        total = sum(size for _, size, _ in entries)
        gone = 0
        for _, size, path in entries:
            if total <= target:
                break
            try:
                path.unlink()
                gone += 1
            except FileNotFoundError:
                pass
            total -= size
        self._size = total
        return gone

    def _bad(self, path: Path, why: str) -> np.ndarray | None:
        self.notify(f"prepared-image cache entry {path} is {why}; discarded, the image will be "
                    "prepared again")
        try:
            path.unlink()
        except OSError:
            pass
        return None
