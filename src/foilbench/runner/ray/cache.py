"""The embedding cache seen from Ray workers.

Two ways, chosen by :attr:`~foilbench.runner.ray.cluster.RayOptions.shared_cache`:

- default: one :class:`CacheServer` actor on the driver's node owns the
  :class:`~foilbench.store.cache.EmbeddingCache` folder (started with the first cell the
  driver sends: a run that only reuses finished cells starts none), and workers reach it through
  :class:`RemoteCache` (``get_many``/``put_many`` and the pair-score calls as remote calls).
  Every encoded batch is still written as one atomic shard the moment it is done, so a run
  killed midway (driver or worker) keeps every finished batch, exactly as a sequential run
  does, and only one process ever writes the folder;
- shared: each worker opens the folder itself (it must be on storage all nodes mount);
  shards are written atomically under unique names, so concurrent writers are safe.

:class:`MemoryCache` layers embeddings a cell's shards already computed over either.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from foilbench.store.cache import EmbeddingCache


class CacheServer:
    """Actor body: an :class:`EmbeddingCache` served to workers (one call at a time)."""

    def __init__(self, root: str | None) -> None:
        self.cache = EmbeddingCache(root)

    def get_many(self, fingerprint: str, hashes: list[str]) -> dict[str, np.ndarray]:
        return self.cache.get_many(fingerprint, hashes)

    def put_many(self, fingerprint: str, hashes: list[str], array: np.ndarray) -> None:
        self.cache.put_many(fingerprint, hashes, array)

    def get_pair_scores(self, fingerprint: str, pairs: list) -> dict:
        return self.cache.get_pair_scores(fingerprint, [tuple(p) for p in pairs])

    def put_pair_scores(self, fingerprint: str, pairs: list, scores: np.ndarray) -> None:
        self.cache.put_pair_scores(fingerprint, [tuple(p) for p in pairs], scores)

    def root(self) -> str:
        return str(self.cache.root)


class RemoteCache:
    """The engine's cache interface over a :class:`CacheServer` actor handle."""

    def __init__(self, server: Any) -> None:
        self.server = server

    def _call(self, method: str, *args: Any) -> Any:
        import ray

        return ray.get(getattr(self.server, method).remote(*args))

    def get_many(self, fingerprint: str, hashes: list[str]) -> dict[str, np.ndarray]:
        return self._call("get_many", fingerprint, list(hashes))

    def put_many(self, fingerprint: str, hashes: list[str], array: np.ndarray) -> None:
        self._call("put_many", fingerprint, list(hashes), np.asarray(array))

    def get_pair_scores(self, fingerprint: str, pairs: list) -> dict:
        return self._call("get_pair_scores", fingerprint, list(pairs))

    def put_pair_scores(self, fingerprint: str, pairs: list, scores: np.ndarray) -> None:
        self._call("put_pair_scores", fingerprint, list(pairs), np.asarray(scores))


class MemoryCache:
    """Embeddings held in memory (``hash -> vector``, one fingerprint) in front of ``base``
    (any cache, or None): lookups are answered from memory first, writes go to ``base``."""

    def __init__(self, fingerprint: str, rows: dict[str, np.ndarray], base: Any = None) -> None:
        self.fingerprint, self.rows, self.base = fingerprint, rows, base

    def get_many(self, fingerprint: str, hashes: list[str]) -> dict[str, np.ndarray]:
        found = {h: self.rows[h] for h in hashes if h in self.rows} \
            if fingerprint == self.fingerprint else {}
        rest = [h for h in hashes if h not in found]
        if rest and self.base is not None:
            found.update(self.base.get_many(fingerprint, rest))
        return found

    def put_many(self, fingerprint: str, hashes: list[str], array: np.ndarray) -> None:
        if self.base is not None:
            self.base.put_many(fingerprint, hashes, array)

    def get_pair_scores(self, fingerprint: str, pairs: list) -> dict:
        return self.base.get_pair_scores(fingerprint, pairs) if self.base is not None else {}

    def put_pair_scores(self, fingerprint: str, pairs: list, scores: np.ndarray) -> None:
        if self.base is not None:
            self.base.put_pair_scores(fingerprint, pairs, scores)


WORKER_MEMORY_BYTES = 256 * 1024**2  # prepared images a worker keeps in memory


def worker_preparation(settings: Any, held: Any, adapter: Any) -> Any:
    """The :class:`~foilbench.scoring.prepared.SharedPreparation` a worker evaluates its
    cells in: ``held`` (the worker's previous one, or None) with ``adapter``'s preparer
    registered. Its disk layer is the prepared-image cache in the configured cache folder
    (``<cache_dir>/prepared-images``): with ``shared_cache`` that folder is on storage every
    node mounts, so each image is decoded once for the whole cluster; entries are written
    atomically under their content key, so concurrent workers are safe. None when sharing is
    off or the model cannot share."""
    from foilbench.scoring import prepared

    if not getattr(settings, "share_preparation", True):
        return None
    prep = prepared.preparer_of(adapter)
    if prep is None:
        return None
    if held is None:
        fresh = prepared.for_run([], settings)
        held = prepared.SharedPreparation([], fresh.disk, max_memory_bytes=WORKER_MEMORY_BYTES)
    held.register(prep)
    return held
