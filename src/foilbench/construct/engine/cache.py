"""The stage cache: every backend call a pipeline made, keyed by its content hash.

A construction run is a chain of pure calls (``call_key`` hashes the backend fingerprint, the
method and every argument), so a result stored under its key can stand in for the call on any
later run: a rerun repeats nothing and a run killed mid-stage resumes where it stopped.

Layout, under the pipeline's output folder::

    .construct/calls.jsonl        one JSON record per finished call (append-only)
    .construct/blobs/<key>.png    images (and edit masks) of image-valued results

Crash safety: an image is written to a temporary file, fsynced and renamed into place *before*
its record is appended; the record line is flushed and fsynced before the call counts as done.
A process killed at any instant therefore leaves at worst a torn last line (skipped on load)
or an orphan blob (overwritten by the repeated call). Records hold plain JSON only.

PNG text chunks whose key starts with ``foilbench`` are kept (the world renderer stores the
scene an image shows there, so offline validators can read the truth back after a cache hit).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, PngImagePlugin

from foilbench.construct.backends.base import Detection, EditResult, Unanswerable

CACHE_DIR = ".construct"
CALLS_FILE = "calls.jsonl"
BLOBS_DIR = "blobs"
INFO_PREFIX = "foilbench"


def _fsync_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}-{threading.get_ident()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def png_with_info(image: Image.Image) -> bytes:
    """PNG bytes of ``image`` keeping its ``foilbench*`` text entries."""
    import io

    meta = PngImagePlugin.PngInfo()
    for k, v in image.info.items():
        if isinstance(k, str) and k.startswith(INFO_PREFIX) and isinstance(v, str):
            meta.add_text(k, v)
    buf = io.BytesIO()
    image.save(buf, format="PNG", pnginfo=meta, compress_level=6)
    return buf.getvalue()


class CallCache:
    """Thread-safe, append-only map from call key to result (see the module docstring)."""

    def __init__(self, out_dir: str | Path) -> None:
        self.root = Path(out_dir) / CACHE_DIR
        self.blobs = self.root / BLOBS_DIR
        self.blobs.mkdir(parents=True, exist_ok=True)
        self.path = self.root / CALLS_FILE
        self._lock = threading.Lock()
        self._records: dict[str, dict] = {}
        self.torn_lines = 0
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                    self._records[record["key"]] = record
                except (json.JSONDecodeError, KeyError, TypeError):
                    self.torn_lines += 1  # an interrupted append; the call is simply redone

    def __contains__(self, key: str) -> bool:
        return key in self._records

    def __len__(self) -> int:
        return len(self._records)

    def spent_usd(self) -> float:
        """What the stored calls cost, by the price each stated when it was made."""
        return sum(float(r.get("usd") or 0.0) for r in self._records.values())

    def get(self, key: str) -> Any:
        """The stored result for ``key`` (KeyError when absent)."""
        return self._decode(self._records[key])

    def put(self, key: str, value: Any, meta: dict | None = None) -> None:
        """Store ``value`` durably (see the module docstring for the write order)."""
        record = {"key": key, **(meta or {}), **self._encode(key, value)}
        line = json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"
        with self._lock:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line)
                f.flush()
                os.fsync(f.fileno())
            self._records[key] = record

    # -- encoding -------------------------------------------------------------------------
    def _blob(self, name: str, image: Image.Image) -> str:
        _fsync_write(self.blobs / name, png_with_info(image))
        return name

    def _encode(self, key: str, value: Any) -> dict:
        if isinstance(value, str):
            return {"type": "text", "value": value}
        if isinstance(value, Unanswerable):
            return {"type": "unanswerable", "value": value.reason}
        if isinstance(value, Image.Image):
            return {"type": "image", "blob": self._blob(f"{key}.png", value)}
        if isinstance(value, EditResult):
            out = {"type": "edit", "blob": self._blob(f"{key}.png", value.image), "mask": None}
            if value.mask is not None:
                mask = Image.fromarray(np.asarray(value.mask, bool).astype(np.uint8) * 255, "L")
                out["mask"] = self._blob(f"{key}.mask.png", mask)
            return out
        if isinstance(value, list) and all(isinstance(d, Detection) for d in value):
            return {"type": "detections",
                    "value": [[d.label, d.score, list(d.box)] for d in value]}
        raise TypeError(f"the stage cache cannot store a {type(value).__name__}")

    def _image(self, name: str) -> Image.Image:
        with Image.open(self.blobs / name) as im:
            im.load()
            info = {k: v for k, v in im.info.items() if str(k).startswith(INFO_PREFIX)}
            out = im.copy()
        out.info.update(info)
        return out

    def _decode(self, record: dict) -> Any:
        kind = record["type"]
        if kind == "text":
            return record["value"]
        if kind == "unanswerable":
            return Unanswerable(record["value"])
        if kind == "image":
            return self._image(record["blob"])
        if kind == "edit":
            mask = None
            if record.get("mask"):
                mask = np.asarray(self._image(record["mask"])) > 127
            return EditResult(self._image(record["blob"]), mask)
        if kind == "detections":
            return [Detection(label, float(score), tuple(box))
                    for label, score, box in record["value"]]
        raise ValueError(f"{self.path}: unknown record type {kind!r}")
