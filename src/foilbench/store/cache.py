"""Persistent caches keyed by (model fingerprint, content hash), safe against interruption.

Layout under the cache root (default ``~/.cache/foilbench/embeddings``; see ``paths.py``)::

    <root>/<sanitised-fingerprint>-<sha256(fingerprint)[:16]>/
        fingerprint.txt              the full fingerprint (for humans)
        emb-<uuid>.safetensors       one shard per encoded batch: "keys" (n, 32) uint8 raw
                                     sha256 digests and "values" (n, d) float32 embeddings
        pair-<uuid>.safetensors      pair-score shards: "keys" (n, 64) uint8 = image digest +
                                     text digest, "values" (n,) float64 scores

Every shard is written to a temporary file in the same folder and moved into place with
``os.replace`` (atomic on POSIX and Windows), so a killed run leaves either a whole shard or
none, never a torn one; a rerun reuses every finished batch. Readers ignore ``*.tmp`` files.
Only shards are ever added, so concurrent writers cannot corrupt each other either.

What the file system does afterwards is another matter: a disk fault, a copy cut short or a
stray write can leave a shard whose header still parses but whose numbers are not the ones
written, and such a shard would silently change every score it feeds. So each shard carries
in its metadata the sha256 of its contents (:func:`content_sha256`: every tensor's name,
dtype, shape and bytes), verified whenever its values are read. A shard that fails the check,
cannot be read (truncated, empty) or has no checksum (written before checksums) is reported
(a :class:`CacheWarning`, or the ``notify`` callable given), deleted, and its entries are
recomputed as misses.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

from foilbench.hashing import sha256_text
from foilbench.paths import embeddings_dir

_DIGEST_BYTES = 32
CHECKSUM_KEY = "foilbench_sha256"


class CacheWarning(UserWarning):
    """A cache shard was corrupt, unreadable or unverifiable; it is discarded and recomputed."""


def content_sha256(tensors: dict[str, np.ndarray]) -> str:
    """sha256 over every tensor's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(tensors):
        arr = np.ascontiguousarray(tensors[name])
        h.update(f"{name}|{arr.dtype.str}|{arr.shape}|".encode())
        h.update(arr.reshape(-1).view(np.uint8).data if arr.size else b"")  # no copy
    return h.hexdigest()


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=4)


UNWRITABLE = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)


def as_os_error(err: Exception, path: Path) -> Exception:
    """safetensors' ``SafetensorError: ... (os error 28)`` as the ``OSError`` it wraps (so a
    full disk is met like any other: caching stops with a warning); other errors unchanged."""
    found = re.search(r"os error (\d+)", str(err))
    if isinstance(err, OSError) or found is None:
        return err
    code = int(found.group(1))
    return OSError(code, os.strerror(code), str(path))


def default_cache_root() -> Path:
    """``$FOILBENCH_HOME/embeddings`` (:func:`foilbench.paths.embeddings_dir`)."""
    return embeddings_dir()


def fingerprint_dirname(fingerprint: str) -> str:
    """A file-system-safe, collision-free folder name for a fingerprint."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", fingerprint).strip("._")[:60] or "model"
    return f"{safe}-{sha256_text(fingerprint)[:16]}"


def _digest_bytes(hexes: list[str]) -> np.ndarray:
    """(n, 32) uint8 array of sha256 hex digests."""
    if not hexes:
        return np.zeros((0, _DIGEST_BYTES), dtype=np.uint8)
    try:
        raw = bytes.fromhex("".join(hexes))
    except ValueError:
        raise ValueError("cache keys must be sha256 hex digests") from None
    if len(raw) != len(hexes) * _DIGEST_BYTES:
        raise ValueError("cache keys must be 64-character sha256 hex digests")
    return np.frombuffer(raw, dtype=np.uint8).reshape(len(hexes), _DIGEST_BYTES)


def _atomic_save(tensors: dict[str, np.ndarray], folder: Path, prefix: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{prefix}-{uuid.uuid4().hex}"
    tmp = folder / f"{name}.tmp"
    final = folder / f"{name}.safetensors"
    tensors = {k: np.ascontiguousarray(v) for k, v in tensors.items()}
    try:
        try:
            save_file(tensors, str(tmp), metadata={CHECKSUM_KEY: content_sha256(tensors)})
        except Exception as e:  # safetensors reports a full disk as its own error type
            raise as_os_error(e, tmp) from None
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            tmp.unlink()
    return final


class _ShardIndex:
    """In-memory index key-bytes -> (shard path, row) over one fingerprint's shards of a prefix.

    Only shards not yet seen are read on refresh, so repeated lookups cost one directory listing.
    """

    def __init__(self, folder: Path, prefix: str, notify: Callable[[str], None]) -> None:
        self.folder = folder
        self.prefix = prefix
        self.notify = notify
        self.seen: set[str] = set()
        self.where: dict[bytes, tuple[Path, int]] = {}

    def refresh(self) -> None:
        if not self.folder.is_dir():
            return
        bad: list[tuple[Path, str]] = []
        for path in sorted(self.folder.glob(f"{self.prefix}-*.safetensors")):
            if path.name in self.seen:
                continue
            self.seen.add(path.name)
            try:  # read only the keys tensor, not the embeddings
                with safe_open(str(path), framework="numpy") as shard:
                    keys = shard.get_tensor("keys")
            except FileNotFoundError:  # discarded meanwhile by another process
                continue
            except Exception as e:  # truncated or empty: recomputed, never fatal, never silent
                bad.append((path, f"unreadable ({_short(e)})"))
                continue
            for row, key in enumerate(keys):
                self.where.setdefault(key.tobytes(), (path, row))
        self.discard(bad)

    def forget(self, *paths: Path) -> None:
        gone = set(paths)
        if gone:
            self.where = {k: v for k, v in self.where.items() if v[0] not in gone}

    def discard(self, bad: list[tuple[Path, str]]) -> None:
        """Report the shards in ``bad`` ((path, why) pairs; one message per reason), delete
        them and forget their rows (they become misses)."""
        by_why: dict[str, list[Path]] = {}
        for path, why in bad:
            by_why.setdefault(why, []).append(path)
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError as e:  # a read-only cache: the shard is still never used
                self.notify(f"could not delete {path}: {e.strerror or e}")
        self.forget(*(path for path, _ in bad))
        for why, paths in by_why.items():
            what = (f"embedding cache shard {paths[0]} is" if len(paths) == 1 else
                    f"{len(paths)} embedding cache shards in {self.folder} (e.g. "
                    f"{paths[0].name}) are")
            self.notify(f"{what} {why}; discarded, the entries will be recomputed")

    def lookup(self, keys: np.ndarray) -> dict[int, tuple[Path, int]]:
        """Positions in ``keys`` that are cached -> (shard, row)."""
        self.refresh()
        found = {}
        for i, key in enumerate(keys):
            hit = self.where.get(key.tobytes())
            if hit is not None:
                found[i] = hit
        return found

    def add(self, path: Path, keys: np.ndarray) -> None:
        self.seen.add(path.name)
        for row, key in enumerate(keys):
            self.where.setdefault(key.tobytes(), (path, row))


def _short(err: Exception) -> str:
    return str(err).splitlines()[0][:120] if str(err) else type(err).__name__


def _verified(path: Path) -> tuple[dict[str, np.ndarray] | None, str | None]:
    """(tensors, None) when the shard's checksum matches, else (None, why)."""
    try:
        with safe_open(str(path), framework="numpy") as shard:
            stored = (shard.metadata() or {}).get(CHECKSUM_KEY)
            tensors = {name: shard.get_tensor(name) for name in shard.keys()}
    except FileNotFoundError:
        return None, None
    except Exception as e:
        return None, f"unreadable ({_short(e)})"
    if stored is None:
        return None, "without a checksum (written by an older foilbench)"
    if content_sha256(tensors) != stored:
        return None, "corrupt (its contents do not match its checksum)"
    if "values" not in tensors or "keys" not in tensors:
        return None, "missing its keys or values"
    return tensors, None


def _read_rows(index: _ShardIndex, hits: dict[int, tuple[Path, int]]) -> dict[int, np.ndarray]:
    """Rows of verified shards; a shard failing verification is discarded (its positions are
    left out, so the caller recomputes them)."""
    by_shard: dict[Path, list[tuple[int, int]]] = {}
    for pos, (path, row) in hits.items():
        by_shard.setdefault(path, []).append((pos, row))
    out: dict[int, np.ndarray] = {}
    bad: list[tuple[Path, str]] = []
    for path, pairs in by_shard.items():
        tensors, why = _verified(path)
        if tensors is None:
            if why is None:  # deleted meanwhile by another process
                index.forget(path)
            else:
                bad.append((path, why))
            continue
        values = tensors["values"]
        for pos, row in pairs:
            out[pos] = values[row]
    index.discard(bad)
    return out


class EmbeddingCache:
    """Embeddings (and pair scores) per model fingerprint and content hash.

    >>> import tempfile, numpy as np
    >>> cache = EmbeddingCache(tempfile.mkdtemp())
    >>> h = "ab" * 32
    >>> cache.put_many("m1", [h], np.ones((1, 3), dtype=np.float32))
    >>> cache.get_many("m1", [h, "cd" * 32])[h].tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, root: str | Path | None = None, *,
                 notify: Callable[[str], None] | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_root()
        self.notify = notify or _warn
        self._indexes: dict[tuple[str, str], _ShardIndex] = {}
        self.disabled = False  # set when a write found the disk full or read-only

    def folder(self, fingerprint: str) -> Path:
        return self.root / fingerprint_dirname(fingerprint)

    def _index(self, fingerprint: str, prefix: str) -> _ShardIndex:
        key = (fingerprint, prefix)
        if key not in self._indexes:
            self._indexes[key] = _ShardIndex(self.folder(fingerprint), prefix, self.notify)
        return self._indexes[key]

    def _mark(self, fingerprint: str) -> None:
        folder = self.folder(fingerprint)
        folder.mkdir(parents=True, exist_ok=True)
        label = folder / "fingerprint.txt"
        if not label.exists():
            tmp = folder / f"fingerprint.{uuid.uuid4().hex}.tmp"
            try:
                tmp.write_text(fingerprint + "\n")
                os.replace(tmp, label)
            finally:
                tmp.unlink(missing_ok=True)

    def _saved(self, save: Callable[[], None]) -> None:
        """Run one cache write; a full or read-only disk stops caching for this cache object
        (said once): the run's numbers never depend on the cache, so it goes on without."""
        if self.disabled:
            return
        try:
            save()
        except OSError as e:
            if e.errno not in UNWRITABLE:
                raise
            self.disabled = True
            self.notify(f"the embedding cache at {self.root} cannot be written ({e.strerror}): "
                        "continuing without caching new embeddings (free space or set "
                        "FOILBENCH_HOME to a writable folder to cache again)")

    # --- embeddings -------------------------------------------------------------------------
    def get_many(self, fingerprint: str, hashes: list[str]) -> dict[str, np.ndarray]:
        """The cached embeddings among ``hashes`` (sha256 hex); misses are simply absent."""
        keys = _digest_bytes(list(hashes))
        index = self._index(fingerprint, "emb")
        rows = _read_rows(index, index.lookup(keys))
        return {hashes[pos]: vec for pos, vec in rows.items()}

    def put_many(self, fingerprint: str, hashes: list[str], array: np.ndarray) -> None:
        """Store one batch of embeddings (row k belongs to ``hashes[k]``) as one atomic shard."""
        array = np.asarray(array, dtype=np.float32)
        if array.ndim != 2 or array.shape[0] != len(hashes):
            raise ValueError(f"put_many: {len(hashes)} hashes but array of shape {array.shape}")
        if not hashes:
            return
        keys = _digest_bytes(list(hashes))

        def save() -> None:
            self._mark(fingerprint)
            path = _atomic_save({"keys": keys, "values": array}, self.folder(fingerprint),
                                "emb")
            self._index(fingerprint, "emb").add(path, keys)

        self._saved(save)

    # --- pair scores (pairwise models) ------------------------------------------------------
    def get_pair_scores(self, fingerprint: str,
                        pairs: list[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """Cached scores among (image hash, text hash) pairs."""
        keys = self._pair_keys(pairs)
        index = self._index(fingerprint, "pair")
        rows = _read_rows(index, index.lookup(keys))
        return {pairs[pos]: float(v) for pos, v in rows.items()}

    def put_pair_scores(self, fingerprint: str, pairs: list[tuple[str, str]],
                        scores: np.ndarray) -> None:
        scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        if len(scores) != len(pairs):
            raise ValueError(f"put_pair_scores: {len(pairs)} pairs but {len(scores)} scores")
        if not pairs:
            return
        keys = self._pair_keys(pairs)

        def save() -> None:
            self._mark(fingerprint)
            path = _atomic_save({"keys": keys, "values": scores}, self.folder(fingerprint),
                                "pair")
            self._index(fingerprint, "pair").add(path, keys)

        self._saved(save)

    @staticmethod
    def _pair_keys(pairs: list[tuple[str, str]]) -> np.ndarray:
        images = _digest_bytes([p[0] for p in pairs])
        texts = _digest_bytes([p[1] for p in pairs])
        return np.concatenate([images, texts], axis=1)
