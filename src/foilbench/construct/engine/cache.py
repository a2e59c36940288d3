"""The stage cache: every backend call a pipeline made, keyed by its content hash.

A construction run is a chain of pure calls (``call_key`` hashes the backend fingerprint, the
method and every argument), so a result stored under its key can stand in for the call on any
later run: a rerun repeats nothing and a run killed mid-stage resumes where it stopped.

Layout, under the pipeline's output folder::

    .construct/calls.jsonl        one JSON record per finished call (append-only)
    .construct/blobs/<key>.png    images (and edit masks) of image-valued results

A record also names its stage, role and backend, and ``bound_usd``: the dry run's bound for
one call of that backend (``cost_per_call_usd``), an upper bound kept for reference, never
spend. What a call cost is in the folder's spend ledger (:mod:`.ledger`), billed per request.

Crash safety: an image is written to a temporary file, fsynced and renamed into place *before*
its record is appended; the record line is flushed and fsynced before the call counts as done.
A process killed at any instant therefore leaves at worst a torn last line (skipped on load)
or an orphan blob (overwritten by the repeated call). Records hold plain JSON only.

Damage (a blob deleted or cut short, a record of an unknown type or shape, bytes that are not
UTF-8 JSON) is never fatal: :meth:`CallCache.lookup` reports the entry as a miss with a warning
(kept in :attr:`CallCache.damaged`), the engine repeats the call and the new record supersedes
the damaged one. Deleting the whole cache, and paying for every call again, is never needed.

PNG text chunks whose key starts with ``foilbench`` are kept (the world renderer stores the
scene an image shows there, so offline validators can read the truth back after a cache hit).
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, PngImagePlugin

from foilbench.construct.backends.base import Detection, EditResult, Unanswerable

CACHE_DIR = ".construct"
CALLS_FILE = "calls.jsonl"
BLOBS_DIR = "blobs"
INFO_PREFIX = "foilbench"


class CacheDamageWarning(UserWarning):
    """A call-cache entry could not be read; it is a miss (the call is made again if needed)."""


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
        #: one line per damaged entry met (torn or undecodable lines, unreadable results)
        self.damaged: list[str] = []
        self._newline = False  # a torn last line gets its newline before the next append
        if self.path.is_file():
            data = self.path.read_bytes()
            self._newline = bool(data) and not data.endswith(b"\n")
            lines = data.splitlines()
            for n, raw in enumerate(lines, 1):
                try:
                    record = json.loads(raw.decode("utf-8"))
                    if not isinstance(record["key"], str):
                        raise TypeError("key is not a string")
                    self._records[record["key"]] = record
                except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as e:
                    # an interrupted append (the last line: expected after a kill, silent)
                    # or bytes damaged on disk (warned): either way the call is redone
                    self.torn_lines += 1
                    if raw.strip() and n < len(lines):
                        self._damage(f"{self.path.name} line {n} unreadable "
                                     f"({type(e).__name__}), skipped")

    def __contains__(self, key: str) -> bool:
        return key in self._records

    def __len__(self) -> int:
        return len(self._records)

    def get(self, key: str) -> Any:
        """The stored result for ``key`` (KeyError when absent; a damaged entry raises)."""
        return self._decode(self._records[key])

    def lookup(self, key: str) -> tuple[bool, Any]:
        """``(True, result)`` for a readable entry, ``(False, None)`` for a miss. A damaged
        entry is a miss: it is forgotten (so the call is made again) with a warning."""
        record = self._records.get(key)
        if record is None:
            return False, None
        try:
            return True, self._decode(record)
        except (OSError, ValueError, TypeError, KeyError, SyntaxError, EOFError) as e:
            with self._lock:
                self._records.pop(key, None)
            self._damage(f"{key[:16]} ({record.get('stage', '?')}): {type(e).__name__}: "
                         f"{str(e)[:160]}")
            return False, None

    def _damage(self, what: str) -> None:
        self.damaged.append(what)
        warnings.warn(f"damaged call-cache entry in {self.root} (a miss: the call is made "
                      f"again if needed): {what}", CacheDamageWarning, stacklevel=3)

    def put(self, key: str, value: Any, meta: dict | None = None) -> None:
        """Store ``value`` durably (see the module docstring for the write order)."""
        record = {"key": key, **(meta or {}), **self._encode(key, value)}
        line = json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"
        with self._lock:
            with open(self.path, "a", encoding="utf-8") as f:
                if self._newline:  # else this record would be glued to the torn line
                    f.write("\n")
                    self._newline = False
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
