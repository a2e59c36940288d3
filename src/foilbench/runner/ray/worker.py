"""The Ray actor of one worker slot: holds one model at a time, fed that model's cells.

The driver starts one actor per worker slot, with a model's resources (``num_cpus``,
``num_gpus``) and Ray's restart policy. Every call names its model spec; the actor loads a
model on the first call that names it and keeps it while the driver sends it that model's
cells (cells are grouped by model, so a model is loaded once per worker that serves it), then
drops it when the driver moves the slot to the next model; the process, its imports and its
CUDA context are paid once per slot, not once per model. When the process dies mid-cell
(killed, out of memory, its node lost) the driver gives the call to a new worker
(:mod:`.recover`), and since the call names its model, that worker loads it.

Each cell is computed by :func:`~foilbench.runner.cell.evaluate_cell`, exactly as a
sequential run computes it, and returned as plain data (:mod:`.payload`); the actor never
opens the results store. Progress bars are off in workers: the driver shows one aggregated
display instead.
"""

from __future__ import annotations

import gc
import time
from dataclasses import asdict
from typing import Any

import numpy as np

from foilbench.data.format import Benchmark
from foilbench.models.batched import forward_batch_size
from foilbench.models.registry import resolve_model
from foilbench.runner.cell import evaluate_cell
from foilbench.runner.ray.cache import MemoryCache, RemoteCache, worker_preparation
from foilbench.runner.ray.payload import to_payload
from foilbench.runner.settings import RunSettings
from foilbench.scoring.encode import (
    Timer,
    encode_unique,
    hash_images,
    hash_texts,
    image_decoder,
    open_image,
)
from foilbench.scoring.prepared import Bound, bind, sharing
from foilbench.store.cache import EmbeddingCache


def limit_threads(n: int) -> None:
    """Use ``n`` BLAS and torch threads in this process (the CPUs the actor reserved).

    Ray sets ``OMP_NUM_THREADS`` for an actor, but a library that was loaded before (by a
    worker setup hook, say) keeps its own count; setting it here keeps a worker within its
    reservation and its numbers equal to a sequential run's with as many threads (a float32
    product summed by a different number of threads can differ in the last digits).
    """
    try:
        import torch

        torch.set_num_threads(n)
    except ImportError:
        pass
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:
        pass


class ModelWorker:
    """Actor body (wrapped with ``ray.remote`` by the scheduler)."""

    def __init__(self, settings: dict[str, Any], *, cache_server: str | None = None,
                 revision: str | None = None, threads: int | None = None) -> None:
        if threads:
            limit_threads(threads)
        self.settings = RunSettings(**{**settings, "progress": False})
        self.revision = revision
        self.cache_server = cache_server
        self.spec: str | None = None
        self._adapter: Any = None
        self._cache: Any = None
        self._prepared: Any = None  # prepared images shared by this worker's cells

    def _model(self, spec: str) -> Any:
        """The adapter of ``spec``, loaded when the held model is another (or none)."""
        if self.spec != spec:
            self._drop()
            self._adapter = resolve_model(spec, device=self.settings.device,
                                          dtype=self.settings.dtype)
            self.spec = spec
        return self._adapter

    def _drop(self) -> None:
        """Free the held model (and, on a GPU, its cached memory) before loading another."""
        if self._adapter is None:
            return
        self._adapter, self.spec = None, None
        gc.collect()
        if self.settings.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()

    def _store_cache(self) -> Any:
        if not self.settings.use_cache:
            return None
        if self._cache is None:
            if self.cache_server is not None:  # the named cache actor on the driver's node
                import ray

                self._cache = RemoteCache(ray.get_actor(self.cache_server))
            else:
                self._cache = EmbeddingCache(self.settings.cache_dir)
        return self._cache

    def node(self) -> str:
        """The Ray node this worker runs on (the driver's first call: it also tells the
        driver that the actor was placed and started)."""
        import ray

        return ray.get_runtime_context().get_node_id()

    def describe(self, spec: str) -> dict[str, Any]:
        """Load the model; its :class:`~foilbench.models.base.ModelInfo` as a dict (the
        driver needs the fingerprint for the resume check) and the load time."""
        t0 = time.perf_counter()
        info = asdict(self._model(spec).info)
        return {"info": info, "load_seconds": time.perf_counter() - t0}

    def evaluate(self, spec: str, bench: Benchmark,
                 embeddings: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
        """One cell as a payload; ``embeddings`` (hash -> vector) are inputs this cell's
        shards already encoded, looked up before the cache."""
        t0 = time.perf_counter()
        adapter = self._model(spec)
        cache = self._store_cache()
        if embeddings:
            cache = MemoryCache(adapter.info.fingerprint, embeddings, cache)
        self._prepared = worker_preparation(self.settings, self._prepared, adapter)
        with sharing(self._prepared):
            cell = evaluate_cell(adapter, bench, self.settings, cache=cache,
                                 revision=self.revision)
        payload = to_payload(cell)
        payload["worker_seconds"] = time.perf_counter() - t0
        return payload

    def encode_shard(self, spec: str, bench: Benchmark, side: str,
                     refs: list[str]) -> dict[str, Any]:
        """Embeddings of a shard of a benchmark's unique images (``side="image"``, refs are
        image paths) or texts: each distinct content hash once, in the run's batches, through
        the cache like the engine's own encoding."""
        t0 = time.perf_counter()
        adapter = self._model(spec)
        timer = Timer()
        if side == "image":
            hashes = hash_images(bench.root, refs, timer)
            embed = adapter.embed_images
        else:
            hashes = hash_texts(refs, timer)
            embed = adapter.embed_texts
        first: dict[str, int] = {}
        for pos, h in enumerate(hashes):
            first.setdefault(h, pos)
        unique = list(first)

        bound = None
        if side == "image":  # pixels shared through the configured cache folder
            self._prepared = worker_preparation(self.settings, self._prepared, adapter)
            bound = bind(adapter, self._prepared) if self._prepared is not None else None
        if bound is not None:
            embed = adapter.embed_prepared

        decode = image_decoder(adapter)  # as the engine decodes (scoring/engine.py)

        def load_one(shared: Bound, p: int) -> Any:
            path = bench.image_path(refs[first[unique[p]]])
            ready = shared.load(unique[p], lambda: open_image(path))
            return ready if ready is not None else adapter.prepare_image(decode(path), p)

        def load(positions: list[int]) -> list[Any]:
            if bound is not None:
                return [load_one(bound, p) for p in positions]
            picked = [refs[first[unique[p]]] for p in positions]
            return [decode(bench.image_path(r)) for r in picked] if side == "image" else picked

        emb, encoded, hits = encode_unique(
            unique, load, embed, fingerprint=adapter.info.fingerprint,
            cache=self._store_cache(),
            batch_size=forward_batch_size(adapter, self.settings.batch_size), timer=timer,
            label=f"{spec}: {side}s", progress=False)
        return {"hashes": unique, "embeddings": emb, "encoded": encoded, "hits": hits,
                "worker_seconds": time.perf_counter() - t0}
