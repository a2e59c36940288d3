"""Encode each unique input once: content hashes, cache lookups, batched forward passes.

Images are keyed by sha256 of the file bytes (two paths holding the same file are one input);
texts by sha256 of their UTF-8 bytes. Every finished batch goes into the cache at once, so a run
killed midway loses at most the batch in flight.

Two things keep the forward passes the bulk of the time:

- ``order``: the caller may give a sort key per input (text length, for adapters whose text
  batches run at their longest text's length); the inputs to encode are batched in that order,
  so a batch's length is close to each of its texts'.
- ``load_one`` + ``workers``: images are decoded and prepared (resize, crop, tensor) on a small
  thread pool while the model runs, at most :data:`PREFETCH_BATCHES` batches ahead (bounded
  memory). Pillow and numpy release the GIL while they work, so on a machine with a free core
  the decoding is hidden; on one core it costs what it did before. Time the main thread
  waits for inputs is "load"; the workers' own time, summed, is "prefetch".

Besides wall seconds the timer keeps thread CPU seconds ("forward_cpu", "load_cpu",
"prefetch_cpu"): on a shared or single core, wall time in one thread also counts the time the
other threads ran, CPU time does not.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from PIL import Image, UnidentifiedImageError

from foilbench.errors import BenchmarkError, ModelError
from foilbench.hashing import sha256_file, sha256_text
from foilbench.models.base import to_rgb
from foilbench.scoring.progress import stage

PREFETCH_BATCHES = 2  # batches decoded ahead of the one being encoded


class Cache(Protocol):
    """What the engine needs from a cache (``foilbench.store.cache.EmbeddingCache``)."""

    def get_many(self, fingerprint: str, hashes: list[str]) -> dict[str, np.ndarray]: ...

    def put_many(self, fingerprint: str, hashes: list[str], array: np.ndarray) -> None: ...


@dataclass
class Timer:
    """Accumulates seconds per phase ("forward", "load", "hash", ...)."""

    seconds: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, phase: str, dt: float) -> None:
        with self._lock:  # prefetch threads add too
            self.seconds[phase] = self.seconds.get(phase, 0.0) + dt


def hash_images(root: Path, refs: Sequence[str], timer: Timer) -> list[str]:
    t0 = time.perf_counter()
    out = []
    for rel in refs:
        try:
            out.append(sha256_file(root / rel))
        except OSError as e:
            raise BenchmarkError(f"cannot read image {root / rel}: {e.strerror or e}") from None
    timer.add("hash", time.perf_counter() - t0)
    return out


def hash_texts(texts: Sequence[str], timer: Timer) -> list[str]:
    t0 = time.perf_counter()
    out = [sha256_text(t) for t in texts]
    timer.add("hash", time.perf_counter() - t0)
    return out


def open_image(path: Path) -> Image.Image:
    """Decode an image fully, in its own mode (palette, RGBA, L stay as they are); a failure
    names the file. What an adapter that converts the way its library does gets
    (:func:`image_decoder`)."""
    try:
        with Image.open(path) as im:
            im.load()
            return im
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError,
            ValueError) as e:
        raise BenchmarkError(f"cannot decode image {path}: {e}") from None


def open_rgb(path: Path) -> Image.Image:
    """Decode an image fully and convert it to 8-bit RGB with
    :func:`foilbench.models.base.to_rgb` (transparency composited on white, as transformers'
    ``convert_to_rgb`` does); a failure names the file."""
    try:
        with Image.open(path) as im:
            im.load()
            return to_rgb(im, name=str(path))
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError,
            ValueError) as e:
        raise BenchmarkError(f"cannot decode image {path}: {e}") from None


def image_decoder(adapter: Any) -> Callable[[Path], Image.Image]:
    """How the engine decodes images for ``adapter``: :func:`open_image` when the adapter
    says ``own_mode_images = True`` (it converts as its library does, e.g. open_clip's
    transform converts to RGB after resizing and cropping), else :func:`open_rgb`."""
    return open_image if getattr(adapter, "own_mode_images", False) else open_rgb


def encode_unique(
    hashes: list[str],
    load: Callable[[list[int]], list[Any]],
    embed: Callable[[list[Any]], np.ndarray],
    *,
    fingerprint: str,
    cache: Cache | None,
    batch_size: int,
    timer: Timer,
    label: str,
    progress: Any,
    order: Sequence[float] | None = None,
    load_one: Callable[[int], Any] | None = None,
    workers: int = 0,
    phase: str = "forward",
) -> tuple[np.ndarray, int, int]:
    """Embeddings of ``hashes`` (one row each, in order).

    ``load(positions)`` returns the inputs for those positions (opened images or texts);
    ``embed(inputs)`` is the model's forward call and is the only thing timed as "forward"
    (and as ``phase``, e.g. "forward_image"). With ``load_one(position)`` and ``workers > 0``
    inputs are loaded one by one on that many threads, ahead of the forward passes. ``order``
    (one key per hash) sets the batching order of the inputs to encode.
    Returns (embeddings, number encoded, number of cache hits).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    rows: dict[int, np.ndarray] = {}
    if cache is not None and hashes:
        t0 = time.perf_counter()
        cached = cache.get_many(fingerprint, hashes)
        rows = {i: cached[h] for i, h in enumerate(hashes) if h in cached}
        timer.add("cache", time.perf_counter() - t0)
    hits = len(rows)
    todo = [i for i in range(len(hashes)) if i not in rows]
    if order is not None and len(todo) > batch_size:
        todo.sort(key=order.__getitem__)
    batches = [todo[s : s + batch_size] for s in range(0, len(todo), batch_size)]
    bar = stage(progress, label, len(todo))
    if load_one is not None and workers > 0 and len(todo) > 1:
        loaded = _prefetched(batches, load_one, workers, timer)
    else:
        loaded = _in_turn(batches, load, timer)
    try:
        for batch, inputs in loaded:
            t1, c1 = time.perf_counter(), time.thread_time()
            emb = np.asarray(embed(inputs), dtype=np.float32)
            t2 = time.perf_counter()
            timer.add("forward_cpu", time.thread_time() - c1)
            timer.add("forward", t2 - t1)
            if phase != "forward":
                timer.add(phase, t2 - t1)
            if emb.ndim != 2 or emb.shape[0] != len(batch):
                raise ModelError(f"{label}: the model returned shape {emb.shape} for a batch of "
                                 f"{len(batch)} inputs (expected ({len(batch)}, d))")
            if cache is not None:
                cache.put_many(fingerprint, [hashes[i] for i in batch], emb)
                timer.add("cache", time.perf_counter() - t2)
            rows.update(zip(batch, emb, strict=True))
            bar.update(len(batch))
    finally:
        loaded.close()
        bar.close()
    if not hashes:
        return np.zeros((0, 1), dtype=np.float32), 0, 0
    return np.stack([rows[i] for i in range(len(hashes))]), len(todo), hits


def _in_turn(batches: list[list[int]], load: Callable[[list[int]], list[Any]],
             timer: Timer) -> Generator[tuple[list[int], list[Any]], None, None]:
    for batch in batches:
        t0, c0 = time.perf_counter(), time.thread_time()
        inputs = load(batch)
        timer.add("load", time.perf_counter() - t0)
        timer.add("load_cpu", time.thread_time() - c0)
        yield batch, inputs


def _prefetched(batches: list[list[int]], load_one: Callable[[int], Any], workers: int,
                timer: Timer) -> Generator[tuple[list[int], list[Any]], None, None]:
    """Batches with their inputs, loaded on ``workers`` threads up to
    :data:`PREFETCH_BATCHES` batches ahead; a failed load raises here, in batch order."""
    from concurrent.futures import ThreadPoolExecutor

    def timed(position: int) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return load_one(position)
        finally:
            timer.add("prefetch", time.perf_counter() - t0)
            timer.add("prefetch_cpu", time.thread_time() - c0)

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="foilbench-decode")
    pending: deque = deque()
    upcoming = iter(batches)

    def submit_next() -> None:
        batch = next(upcoming, None)
        if batch is not None:
            pending.append((batch, [pool.submit(timed, p) for p in batch]))

    try:
        for _ in range(PREFETCH_BATCHES + 1):
            submit_next()
        while pending:
            batch, futures = pending.popleft()
            t0 = time.perf_counter()
            inputs = [f.result() for f in futures]
            timer.add("load", time.perf_counter() - t0)
            submit_next()
            yield batch, inputs
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
