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
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

from foilbench.hashing import sha256_text
from foilbench.paths import embeddings_dir

_DIGEST_BYTES = 32


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
    try:
        save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, str(tmp))
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            tmp.unlink()
    return final


class _ShardIndex:
    """In-memory index key-bytes -> (shard path, row) over one fingerprint's shards of a prefix.

    Only shards not yet seen are read on refresh, so repeated lookups cost one directory listing.
    """

    def __init__(self, folder: Path, prefix: str) -> None:
        self.folder = folder
        self.prefix = prefix
        self.seen: set[str] = set()
        self.where: dict[bytes, tuple[Path, int]] = {}

    def refresh(self) -> None:
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob(f"{self.prefix}-*.safetensors")):
            if path.name in self.seen:
                continue
            try:  # read only the keys tensor, not the embeddings
                with safe_open(str(path), framework="numpy") as shard:
                    keys = shard.get_tensor("keys")
            except Exception:  # an unreadable shard is skipped (and recomputed), never fatal
                self.seen.add(path.name)
                continue
            self.seen.add(path.name)
            for row, key in enumerate(keys):
                self.where.setdefault(key.tobytes(), (path, row))

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


def _read_rows(hits: dict[int, tuple[Path, int]]) -> dict[int, np.ndarray]:
    by_shard: dict[Path, list[tuple[int, int]]] = {}
    for pos, (path, row) in hits.items():
        by_shard.setdefault(path, []).append((pos, row))
    out: dict[int, np.ndarray] = {}
    for path, pairs in by_shard.items():
        values = load_file(str(path))["values"]
        for pos, row in pairs:
            out[pos] = values[row]
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

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_root()
        self._indexes: dict[tuple[str, str], _ShardIndex] = {}

    def folder(self, fingerprint: str) -> Path:
        return self.root / fingerprint_dirname(fingerprint)

    def _index(self, fingerprint: str, prefix: str) -> _ShardIndex:
        key = (fingerprint, prefix)
        if key not in self._indexes:
            self._indexes[key] = _ShardIndex(self.folder(fingerprint), prefix)
        return self._indexes[key]

    def _mark(self, fingerprint: str) -> None:
        folder = self.folder(fingerprint)
        folder.mkdir(parents=True, exist_ok=True)
        label = folder / "fingerprint.txt"
        if not label.exists():
            tmp = folder / f"fingerprint.{uuid.uuid4().hex}.tmp"
            tmp.write_text(fingerprint + "\n")
            os.replace(tmp, label)

    # --- embeddings -------------------------------------------------------------------------
    def get_many(self, fingerprint: str, hashes: list[str]) -> dict[str, np.ndarray]:
        """The cached embeddings among ``hashes`` (sha256 hex); misses are simply absent."""
        keys = _digest_bytes(list(hashes))
        rows = _read_rows(self._index(fingerprint, "emb").lookup(keys))
        return {hashes[pos]: vec for pos, vec in rows.items()}

    def put_many(self, fingerprint: str, hashes: list[str], array: np.ndarray) -> None:
        """Store one batch of embeddings (row k belongs to ``hashes[k]``) as one atomic shard."""
        array = np.asarray(array, dtype=np.float32)
        if array.ndim != 2 or array.shape[0] != len(hashes):
            raise ValueError(f"put_many: {len(hashes)} hashes but array of shape {array.shape}")
        if not hashes:
            return
        keys = _digest_bytes(list(hashes))
        self._mark(fingerprint)
        path = _atomic_save({"keys": keys, "values": array}, self.folder(fingerprint), "emb")
        self._index(fingerprint, "emb").add(path, keys)

    # --- pair scores (pairwise models) ------------------------------------------------------
    def get_pair_scores(self, fingerprint: str,
                        pairs: list[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """Cached scores among (image hash, text hash) pairs."""
        keys = self._pair_keys(pairs)
        rows = _read_rows(self._index(fingerprint, "pair").lookup(keys))
        return {pairs[pos]: float(v) for pos, v in rows.items()}

    def put_pair_scores(self, fingerprint: str, pairs: list[tuple[str, str]],
                        scores: np.ndarray) -> None:
        scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        if len(scores) != len(pairs):
            raise ValueError(f"put_pair_scores: {len(pairs)} pairs but {len(scores)} scores")
        if not pairs:
            return
        keys = self._pair_keys(pairs)
        self._mark(fingerprint)
        path = _atomic_save({"keys": keys, "values": scores}, self.folder(fingerprint), "pair")
        self._index(fingerprint, "pair").add(path, keys)

    @staticmethod
    def _pair_keys(pairs: list[tuple[str, str]]) -> np.ndarray:
        images = _digest_bytes([p[0] for p in pairs])
        texts = _digest_bytes([p[1] for p in pairs])
        return np.concatenate([images, texts], axis=1)
