"""Backends for construction tests: counting wrappers (optionally killing the process at the
N-th call), a flaky text backend, and a tiny caption set. Importable by subprocesses too."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from PIL import Image

from foilbench.construct.backends.base import (
    DetectorBackend,
    EditBackend,
    ImageBackend,
    TextBackend,
    VQABackend,
    call_key,
)
from foilbench.construct.backends.registry import resolve_backend

METHOD = {"text": "complete", "image": "generate", "edit": "edit", "detector": "detect",
          "vqa": "answer"}
BASE = {"text": TextBackend, "image": ImageBackend, "edit": EditBackend,
        "detector": DetectorBackend, "vqa": VQABackend}


class Counter:
    """Appends one line per finished call (the call key) to a file; at call number
    ``kill_at`` (1-based, counted over all roles) the process SIGKILLs itself first."""

    def __init__(self, path: Path, kill_at: int | None = None) -> None:
        self.path, self.kill_at, self.n = Path(path), kill_at, 0

    def before(self) -> None:
        self.n += 1
        if self.kill_at is not None and self.n >= self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def done(self, key: str) -> None:
        with open(self.path, "a") as f:
            f.write(key + "\n")
            f.flush()
            os.fsync(f.fileno())


def counting(role: str, spec: str, counter: Counter):
    """A backend of ``role`` that wraps ``resolve_backend(role, spec)`` and counts calls."""
    inner = resolve_backend(role, spec)
    method = METHOD[role]

    def call(self, *args):
        counter.before()
        out = getattr(inner, method)(*args)
        counter.done(call_key(self, method, *args))
        return out

    cls = type(f"Counting{role.title()}", (BASE[role],), {
        "fingerprint": property(lambda self: inner.fingerprint),
        "reads_structure": getattr(inner, "reads_structure", False),
        method: call,
    })
    return cls()


def offline_backends(roles: dict[str, str], counter: Counter) -> dict:
    return {role: counting(role, spec, counter) for role, spec in roles.items()}


class Transient(ConnectionError):
    """An error that says a retry may succeed (the engine retries only these)."""

    retryable = True


class FlakyText(TextBackend):
    """Template answers, except: captions containing ``broken`` always fail, and every
    request fails on its first attempt (so a retry is needed); both errors declare themselves
    retryable, as only such errors are retried by the engine."""

    def __init__(self, broken: str = "giraffe") -> None:
        self.inner = resolve_backend("text", "template")
        self.broken, self.seen = broken, set()
        self.calls = 0

    @property
    def fingerprint(self) -> str:
        return "flaky:" + self.inner.fingerprint

    def complete(self, request):
        self.calls += 1
        task = request.task or {}
        if self.broken in str(task.get("caption", "")):
            raise Transient("server unavailable")
        key = call_key(self, "complete", request)
        if key not in self.seen:
            self.seen.add(key)
            raise Transient("first attempt times out")
        return self.inner.complete(request)


CAPTIONS = [
    "A man riding a brown horse next to a red barn.",
    "Two dogs playing with a ball on the grass.",
    "A white plate with a sandwich on a wooden table.",
    "A woman holding an umbrella near a bus.",
    "A cat sleeping on a black couch.",
    "A small boy eating a banana in the kitchen.",
    "A red car parked in front of a tall building.",
    "A green bench under a large tree.",
    "A giraffe standing behind a wooden fence.",
    "A laptop and a cup on a desk.",
]


def caption_set(root: Path) -> Path:
    """A COCO-style caption JSON over small solid images under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    images, anns = [], []
    for i, cap in enumerate(CAPTIONS):
        Image.new("RGB", (16, 16), (20 * i, 90, 200 - 15 * i)).save(root / f"im{i}.png")
        images.append({"id": i, "file_name": f"im{i}.png"})
        anns.append({"id": 100 + i, "image_id": i, "caption": cap})
    path = root / "captions.json"
    path.write_text(json.dumps({"images": images, "annotations": anns}))
    return path
