"""Prepare each image once per distinct preprocessing, shared by every model that uses it.

In a sweep the models usually share one preprocessing (open_clip's eval transform at 224 px
with OpenAI's mean and std), yet each would decode and resize every image again. Here a
model's transform is split into its pixel part (resize, crop, colour conversion: uint8 in,
uint8 out) and its tensor tail (``ToTensor`` + ``Normalize``, done per model by
:func:`foilbench.models.openclip.fast.to_normalised_tensor`, as the adapter's own
``prepare_image`` does, so the tensors are bit-identical, tested).

The pixel part is fingerprinted (:func:`head_fingerprint`): every step's class and its
settings (size, interpolation, max_size, antialias, crop size, fill, resize mode, conversion
mode, in order) plus the Pillow and torchvision versions that run them. A step whose settings
are not plain values (a lambda, a custom callable holding state) has no fingerprint, and that
model simply prepares its own images as before. Models with equal fingerprints get the same
uint8 arrays.

:class:`SharedPreparation` is what a ``run`` or ``sweep`` opens around its cells
(:func:`sharing`): it knows the preparers of all the sweep's models, so when an image is
decoded for one model it is prepared for every distinct fingerprint at once (each image is
decoded once per sweep while the arrays fit the memory limit), keeps the arrays in memory
(least recently used dropped beyond ``max_memory_bytes``) and writes them to the on-disk
:class:`~foilbench.store.prepared_cache.PreparedImageCache`, so a later sweep decodes nothing.
Outside :func:`sharing` the engine prepares images as it always did.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

DEFAULT_MEMORY_BYTES = 1024**3
READ_WHOLE_AT_MOST = 64 << 20  # a file read whole by check_pixels; a larger one is streamed
_PLAIN = (int, float, str, bool, type(None))
_UNSET = object()
_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("foilbench_shared_preparation",
                                                         default=_UNSET)
# the open sharing blocks of this process, newest last: what a thread that did not inherit
# the context (a pool thread evaluating a cell) sees. Sharing is content-addressed (transform
# fingerprint + image hash), so any open block gives the same pixels.
_OPEN: list = []
_OPEN_LOCK = threading.Lock()


def _plain(value: Any) -> Any:
    """A JSON-able form of a transform setting, or raise TypeError when it is not plain."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    raise TypeError(type(value).__name__)


def step_description(step: Any) -> dict | None:
    """``{"type": module.Class, settings...}`` of one transform step, or None when it holds
    something that is not a plain setting (so two equal descriptions transform alike)."""
    kind = type(step)
    if kind.__name__ == "function":  # a module-level function (open_clip's _convert_to_rgb)
        if "<" in step.__qualname__:  # a lambda or a closure: its behaviour is not named
            return None
        return {"type": f"{step.__module__}.{step.__qualname__}"}
    desc = {"type": f"{kind.__module__}.{kind.__qualname__}"}
    for name, value in sorted(vars(step).items()):
        if name.startswith("_") or name == "training":
            continue
        try:
            desc[name] = _plain(value)
        except TypeError:
            return None
    return desc


def head_fingerprint(steps: list, size_hint: str = "", source: str = "") -> str | None:
    """Fingerprint of a list of pixel transform steps (None: not fingerprintable); ``source``
    names what the steps receive (e.g. "own-mode": the decoded image unconverted)."""
    import PIL
    import torchvision

    described = []
    for step in steps:
        desc = step_description(step)
        if desc is None:
            return None
        described.append(desc)
    text = json.dumps({"steps": described, "pillow": PIL.__version__,
                       "torchvision": torchvision.__version__, "out": size_hint,
                       **({"in": source} if source else {})},
                      sort_keys=True)
    return "pixels-" + hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Preparer:
    """A model's preprocessing split in two: ``pixels(image) -> uint8 (H, W, 3) or None``
    (``image`` as decoded, in its own mode: each preparer converts as its model does)
    (None: this image is not shareable, prepare it the model's own way) and
    ``finish(uint8) -> tensor``; ``fingerprint`` names the pixel part."""

    fingerprint: str
    pixels: Callable[[Any], np.ndarray | None]
    finish: Callable[[np.ndarray], Any]


def preparer_of(adapter: Any) -> Preparer | None:
    """The adapter's :class:`Preparer` (its ``image_preparer()``), or None."""
    make = getattr(adapter, "image_preparer", None)
    return make() if callable(make) else None


class SharedPreparation:
    """Prepared uint8 images of one run or sweep, by (fingerprint, image hash)."""

    def __init__(self, preparers: list[Preparer] | None = None, disk: Any = None, *,
                 max_memory_bytes: int = DEFAULT_MEMORY_BYTES) -> None:
        self.preparers: dict[str, Preparer] = {}
        for p in preparers or []:
            self.register(p)
        self.disk = disk
        self.max_memory_bytes = max_memory_bytes
        self._memory: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._evicted = False  # memory has dropped an array: it cannot hold everything
        self._lock = threading.Lock()
        # image hash -> lock held while one thread checks it: two files with the same bytes,
        # checked on two validation threads at once, are decoded once
        self._checking: dict[str, threading.Lock] = {}
        self.counts = {"decoded": 0, "prepared": 0, "memory_hits": 0, "disk_hits": 0}
        self.check_cpu_seconds = 0.0  # CPU time of check_pixels, summed over its threads

    @classmethod
    def for_adapters(cls, adapters: list, disk: Any = None, **kwargs: Any) -> SharedPreparation:
        return cls([p for p in map(preparer_of, adapters) if p is not None], disk, **kwargs)

    def register(self, preparer: Preparer) -> None:
        self.preparers.setdefault(preparer.fingerprint, preparer)

    def pixels(self, fingerprint: str, image_hash: str,
               decode: Callable[[], Any]) -> np.ndarray | None:
        """The uint8 pixels of the image ``image_hash`` under ``fingerprint``: from memory,
        else from disk, else ``decode()`` once and prepared for every registered fingerprint
        still missing that image."""
        key = (fingerprint, image_hash)
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._memory.move_to_end(key)
                self.counts["memory_hits"] += 1
                return hit
        if self.disk is not None:
            hit = self.disk.get(fingerprint, image_hash)
            if hit is not None:
                self._remember(key, hit)
                self._count("disk_hits")
                return hit
        image = decode()
        self._count("decoded")
        return self._prepare_all(image_hash, image, [
            fp for fp in list(self.preparers)
            if fp == fingerprint or not self._has(fp, image_hash)]).get(fingerprint)

    def check_pixels(self, path: Path, opened: BinaryIO | None = None,
                     image: Any = None) -> bool:
        """Validation's pixel check done as the engine's decode (the run installs it with
        :func:`foilbench.data.images.pixels_checked_by`): the image decoded in full, in its
        own mode as the engine decodes it, and prepared for every registered fingerprint,
        kept here for the cells; True. A failure to decode raises, as PIL raises it, and
        validation reports the file. An image every fingerprint already holds (in memory, or
        on disk: pixels made from a full decode of these very bytes) is not decoded again.
        False (validation decodes it the reduced way) when nothing would keep the result: no
        preparer, or no disk cache and the memory full (it has dropped an array), so a cell
        would decode the image again anyway. ``opened``: the file as validation opened
        it for the header (:func:`foilbench.data.images.check_image`); its bytes, read once
        from the start (at most :data:`READ_WHOLE_AT_MOST`, else streamed as without it),
        are hashed and decoded from memory instead of opening the file twice more.
        ``image``: the PIL image validation opened on ``opened`` (header read, pixels not
        decoded), decoded here instead of parsing the header a second time; its ``load``
        seeks to the pixel data itself, so the read for the hash does not disturb it."""
        if not self.preparers or (self.disk is None and self._evicted):
            return False
        from foilbench.hashing import sha256_file, sha256_read

        started = time.thread_time()
        try:
            st = os.fstat(opened.fileno()) if opened is not None else None
            if opened is None or st is None or st.st_size > READ_WHOLE_AT_MOST:
                self._check(path, sha256_file(path), image=image)
            else:
                opened.seek(0)
                data = opened.read()
                self._check(path, sha256_read(st, data), data, image)
        finally:
            spent = time.thread_time() - started
            with self._lock:
                self.check_cpu_seconds += spent
        return True

    def summary(self) -> dict[str, float]:
        """What this preparation did, for a run's or sweep's outcome and its last console
        line: the counts, the number of distinct preprocessings and the CPU seconds of
        validation's decode-and-prepare."""
        with self._lock:
            return {**self.counts, "preprocessings": len(self.preparers),
                    "check_cpu_seconds": round(self.check_cpu_seconds, 3)}

    def _check(self, path: Path, image_hash: str, data: bytes | None = None,
               image: Any = None) -> None:
        """:meth:`_check_one` with the image's lock held (another thread checking a file
        with the same bytes is waited for, then this one finds the pixels kept)."""
        with self._lock:
            lock = self._checking.setdefault(image_hash, threading.Lock())
        with lock:
            self._check_one(path, image_hash, data, image)
        with self._lock:
            if self._checking.get(image_hash) is lock and not lock.locked():
                del self._checking[image_hash]  # a waiter still holds the object it needs

    def _check_one(self, path: Path, image_hash: str, data: bytes | None = None,
                   image: Any = None) -> None:
        """Decode the image once (``image``, already opened, else from ``data`` or the file)
        and prepare it for each fingerprint that holds it neither in memory nor on disk."""

        missing = []
        for fp in list(self.preparers):
            if self._has(fp, image_hash):
                continue
            hit = self.disk.get(fp, image_hash) if self.disk is not None else None
            if hit is None:
                missing.append(fp)
                continue
            self._remember((fp, image_hash), hit)
            self._count("disk_hits")
        if missing:
            if image is not None:
                image.load()  # the caller's image: it closes it
            else:
                image = _decoded(path, data)
            self._count("decoded")
            self._prepare_all(image_hash, image, missing)

    def _prepare_all(self, image_hash: str, image: Any, fingerprints: list[str]
                     ) -> dict[str, np.ndarray]:
        """``image`` prepared under each of ``fingerprints``, kept in memory and on disk;
        the shareable results by fingerprint."""
        out = {}
        for fp in fingerprints:
            arr = self.preparers[fp].pixels(image)
            self._count("prepared")
            if arr is None:
                continue
            self._remember((fp, image_hash), arr)
            if self.disk is not None:
                self.disk.put(fp, image_hash, arr)
            out[fp] = arr
        return out

    def _has(self, fingerprint: str, image_hash: str) -> bool:
        with self._lock:
            return (fingerprint, image_hash) in self._memory

    def _count(self, name: str) -> None:
        with self._lock:
            self.counts[name] += 1

    def _remember(self, key: tuple[str, str], arr: np.ndarray) -> None:
        with self._lock:
            if key in self._memory:
                return
            self._memory[key] = arr
            self._bytes += arr.nbytes
            while self._bytes > self.max_memory_bytes and self._memory:
                self._evicted = True
                _, old = self._memory.popitem(last=False)
                self._bytes -= old.nbytes


def _decoded(path: Path, data: bytes | None) -> Any:
    """The image at ``path`` (or in ``data``, its bytes) decoded in full, its file closed."""
    import io

    from PIL import Image

    with Image.open(path if data is None else io.BytesIO(data)) as image:
        image.load()
    return image


@dataclass(frozen=True)
class Bound:
    """One model's view of a :class:`SharedPreparation`: its preparer, registered there."""

    shared: SharedPreparation
    preparer: Preparer

    def load(self, image_hash: str, decode: Callable[[], Any]) -> Any | None:
        """The model's input tensor for the image, or None (not shareable: prepare it the
        model's own way)."""
        pixels = self.shared.pixels(self.preparer.fingerprint, image_hash, decode)
        return None if pixels is None else self.preparer.finish(pixels)

    def counts(self) -> dict[str, int]:
        with self.shared._lock:
            return dict(self.shared.counts)


def bind(adapter: Any, shared: SharedPreparation | None = None) -> Bound | None:
    """``adapter`` bound to ``shared`` (default: :func:`current`), or None when there is no
    sharing block or the adapter cannot share."""
    shared = current() if shared is None else shared
    prep = preparer_of(adapter) if shared is not None else None
    if shared is None or prep is None:
        return None
    shared.register(prep)
    return Bound(shared, prep)


@contextlib.contextmanager
def sharing(shared: SharedPreparation | None) -> Iterator[SharedPreparation | None]:
    """Make ``shared`` the preparation the engine uses inside the block (None: none)."""
    token = _ACTIVE.set(shared)
    if shared is not None:
        with _OPEN_LOCK:
            _OPEN.append(shared)
    try:
        yield shared
    finally:
        _ACTIVE.reset(token)
        if shared is not None:
            with _OPEN_LOCK:
                _OPEN.remove(shared)


def current() -> SharedPreparation | None:
    """The :class:`SharedPreparation` of the enclosing :func:`sharing` block (None inside
    ``sharing(None)``); in a thread that did not inherit the context, the newest block open
    in this process, if any."""
    found = _ACTIVE.get()
    if found is not _UNSET:
        return found
    with _OPEN_LOCK:
        return _OPEN[-1] if _OPEN else None


def for_run(adapters: list, settings: Any, notify: Callable[[str], None] | None = None
            ) -> SharedPreparation:
    """The shared preparation of a run or sweep: the models' preparers and, when the run uses
    the cache, the on-disk prepared-image cache beside the embedding cache (so Ray workers
    that open the configured shared cache folder open this one too)."""
    disk = None
    if getattr(settings, "use_cache", True):
        from foilbench.store.cache import EmbeddingCache
        from foilbench.store.prepared_cache import FOLDER, PreparedImageCache

        root = EmbeddingCache(getattr(settings, "cache_dir", None)).root / FOLDER
        disk = PreparedImageCache(root, notify=notify)
    return SharedPreparation.for_adapters(adapters, disk)


def summary_line(counts: dict[str, float] | None) -> str | None:
    """``images: 1,560 decoded once for 1 preprocessing (7.9 CPU s), 0 from the
    prepared-image cache``.

    >>> summary_line({"decoded": 3, "prepared": 3, "memory_hits": 6, "disk_hits": 1,
    ...               "preprocessings": 1, "check_cpu_seconds": 0.04})
    'images: 3 decoded once for 1 preprocessing (0.0 CPU s), 1 from the prepared-image cache'
    >>> summary_line(None) is None
    True
    """
    if not counts:
        return None
    n = int(counts.get("preprocessings", 0))
    return (f"images: {int(counts['decoded']):,} decoded once for {n} preprocessing"
            f"{'' if n == 1 else 's'} ({counts.get('check_cpu_seconds', 0.0):.1f} CPU s), "
            f"{int(counts['disk_hits']):,} from the prepared-image cache")


def shared_preparation(loaded: list, settings: Any, log: Callable[[str, str], None] | None
                       = None) -> contextlib.AbstractContextManager:
    """The :func:`sharing` block of a ``run`` or ``sweep`` over ``loaded`` ((spec, adapter)
    pairs). With no adapter that can share (API models, Ray runs that load on workers) it is
    an empty block; ``settings.share_preparation = False`` turns it off (the old path)."""
    adapters = [a for _, a in loaded]
    if not getattr(settings, "share_preparation", True) or not any(
            preparer_of(a) for a in adapters):
        return sharing(None)
    notify = (lambda msg: log("warning", msg)) if log else None
    return sharing(for_run(adapters, settings, notify))
