"""The driver's plan of a Ray run: work items per model, and how a large cell is sharded.

Cells are grouped by model: each model has a queue of :class:`Work` that only the workers
holding that model take, so a model is loaded once per worker that serves it. A dual-encoder cell with more
unique inputs than the shard size becomes shard works (slices of its distinct image files, by
content hash as the engine counts them, and of its unique texts, each slice a whole number of
the run's batches, so that, the cache being cold, a shard encodes the very batches one worker
would have) and, once every shard is back, one ``finish`` work that scores the cell with all
embeddings at hand. Planning hashes the cell's image files once on the driver.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from foilbench.data.format import Benchmark
from foilbench.scoring.encode import Timer, hash_images


@dataclass
class Work:
    """One call to a model actor: a whole ``cell``, a ``shard`` of a cell's inputs, or the
    ``finish`` of a sharded cell."""

    kind: str
    bench: int
    side: str = ""
    refs: list[str] = field(default_factory=list)
    embeddings: Any = None  # finish: an object ref of hash -> vector


@dataclass
class Gather:
    """The shards of one cell on their way back."""

    waiting: int
    rows: dict[str, Any] = field(default_factory=dict)
    failed: bool = False


@dataclass
class ModelState:
    """Everything the driver tracks for one model spec."""

    spec: str
    queue: deque = field(default_factory=deque)
    info: dict[str, Any] | None = None
    describing: bool = False
    workers: int = 0  # workers holding this model now
    gathers: dict[int, Gather] = field(default_factory=dict)
    load_seconds: list[float] = field(default_factory=list)

    def cells_left(self) -> set[int]:
        """Benchmarks of this model not finished yet (queued, sharding or in flight)."""
        return {w.bench for w in self.queue} | set(self.gathers)

    def drop_bench(self, bench: int) -> None:
        """Forget the queued works of one cell (it failed)."""
        self.queue = deque(w for w in self.queue if w.bench != bench)
        self.gathers.pop(bench, None)


def shard_slices(items: list[str], size: int, batch: int) -> list[list[str]]:
    """``items`` in consecutive slices of about ``size``, rounded up to whole batches.

    >>> [len(s) for s in shard_slices([str(i) for i in range(10)], 4, 3)]
    [6, 4]
    """
    step = max(batch, -(-size // batch) * batch)
    return [items[i:i + step] for i in range(0, len(items), step)]


def shard_cell(bench: Benchmark, index: int, size: int, batch: int) -> list[Work] | None:
    """The shard works of one cell, or None when it is small enough to run whole."""
    images, texts = bench.unique_images(), bench.unique_texts()
    if not size or len(images) + len(texts) <= size:
        return None
    images = distinct_files(bench, images)
    works = [Work("shard", index, "image", part) for part in shard_slices(images, size, batch)]
    works += [Work("shard", index, "text", part) for part in shard_slices(texts, size, batch)]
    return works


def distinct_files(bench: Benchmark, refs: list[str]) -> list[str]:
    """The first ref of each distinct image file (by content hash, in order): the inputs the
    engine encodes, so shard batches line up with its batches."""
    first: dict[str, str] = {}
    for ref, digest in zip(refs, hash_images(bench.root, refs, Timer()), strict=True):
        first.setdefault(digest, ref)
    return list(first.values())
