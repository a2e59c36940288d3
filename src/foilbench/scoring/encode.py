"""Encode each unique input once: content hashes, cache lookups, batched forward passes.

Images are keyed by sha256 of the file bytes (two paths holding the same file are one input);
texts by sha256 of their UTF-8 bytes. Every finished batch goes into the cache at once, so a run
killed midway loses at most the batch in flight.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from PIL import Image, UnidentifiedImageError
from tqdm import tqdm

from foilbench.errors import BenchmarkError, ModelError
from foilbench.hashing import sha256_file, sha256_text
from foilbench.models.base import to_rgb


class Cache(Protocol):
    """What the engine needs from a cache (``foilbench.store.cache.EmbeddingCache``)."""

    def get_many(self, fingerprint: str, hashes: list[str]) -> dict[str, np.ndarray]: ...

    def put_many(self, fingerprint: str, hashes: list[str], array: np.ndarray) -> None: ...


@dataclass
class Timer:
    """Accumulates seconds per phase ("forward", "load", "hash", ...)."""

    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, phase: str, dt: float) -> None:
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


def open_rgb(path: Path) -> Image.Image:
    """Decode an image fully and convert it to RGB; a failure names the file."""
    try:
        with Image.open(path) as im:
            im.load()
            return to_rgb(im, name=str(path))
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError,
            ValueError) as e:
        raise BenchmarkError(f"cannot decode image {path}: {e}") from None


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
    progress: bool,
) -> tuple[np.ndarray, int, int]:
    """Embeddings of ``hashes`` (one row each, in order).

    ``load(positions)`` returns the inputs for those positions (opened images or texts);
    ``embed(inputs)`` is the model's forward call and is the only thing timed as "forward".
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
    bar = tqdm(total=len(todo), desc=label, unit="in", file=sys.stderr,
               disable=not progress or not todo, leave=False)
    try:
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            t0 = time.perf_counter()
            inputs = load(batch)
            t1 = time.perf_counter()
            emb = np.asarray(embed(inputs), dtype=np.float32)
            t2 = time.perf_counter()
            timer.add("load", t1 - t0)
            timer.add("forward", t2 - t1)
            if emb.ndim != 2 or emb.shape[0] != len(batch):
                raise ModelError(f"{label}: the model returned shape {emb.shape} for a batch of "
                                 f"{len(batch)} inputs (expected ({len(batch)}, d))")
            if cache is not None:
                cache.put_many(fingerprint, [hashes[i] for i in batch], emb)
                timer.add("cache", time.perf_counter() - t2)
            rows.update(zip(batch, emb, strict=True))
            bar.update(len(batch))
    finally:
        bar.close()
    if not hashes:
        return np.zeros((0, 1), dtype=np.float32), 0, 0
    return np.stack([rows[i] for i in range(len(hashes))]), len(todo), hits
