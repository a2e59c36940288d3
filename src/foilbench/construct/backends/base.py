"""The contract every construction backend keeps.

A pipeline stage is a pure function of its inputs and a backend, so a backend must say who it
is (``fingerprint``: spec plus weights or model version) and what a call costs
(``cost_per_call_usd``, for the spend estimate before a run). Requests are frozen dataclasses:
``call_key`` hashes a request with the backend fingerprint, which is what the stage cache keys
on (a rerun or a resumed run repeats no call).

Offline backends (``template`` for text, ``world`` for images and edits) take the same requests;
the world backends read the structured ``scene`` / ``edit`` fields that generative backends
ignore, so one pipeline runs against a provider, a local model or the procedural world.
"""

from __future__ import annotations

import dataclasses
import io
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from PIL import Image

from foilbench.errors import ModelError
from foilbench.hashing import sha256_bytes, sha256_text

ROLES = ("text", "image", "edit", "detector", "vqa")
#: field metadata: the field enters ``call_key`` only when its value is not None
KEY_WHEN_SET = "key_when_set"


class Backend(ABC):
    """One model (or rule set) behind one role."""

    role: ClassVar[str]
    #: Expected price of one call, used for the estimate printed before a stage starts.
    cost_per_call_usd: float = 0.0
    #: Calls that may be in flight at once (API backends: within the provider's rate limits).
    max_concurrency: int = 1

    @property
    @abstractmethod
    def fingerprint(self) -> str:
        """Stable identity: spec and weights hash / model version. Part of every cache key."""

    def describe(self) -> dict[str, Any]:
        """What goes into a construction manifest's provenance (with the spec the user typed,
        which :func:`~foilbench.construct.backends.registry.resolve_backend` records)."""
        out = {"role": self.role, "fingerprint": self.fingerprint,
               "class": type(self).__qualname__}
        if getattr(self, "spec", None):
            out["spec"] = self.spec
        return out


@dataclass(frozen=True)
class TextRequest:
    prompt: str
    system: str = ""
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int = 0
    #: ``name@version`` of the packaged prompt file the prompt was rendered from.
    prompt_id: str = ""
    #: Structured inputs for the ``template`` backend (ignored by LLMs), e.g. a concept.
    task: Any = None
    #: Images shown with the prompt (CompoSET steps 3-4 caption from the rendered base
    #: image). Not part of ``==``/hash; ``call_key`` hashes them by their pixels. Send them
    #: only to a backend whose ``accepts_images`` is true.
    images: tuple[Image.Image, ...] = field(default=(), compare=False)
    #: Nucleus sampling mass (Auto-Comp App. A.6: "top_p 0.9"); None: the backend's default.
    #: Enters ``call_key`` only when set, so every request made before the field existed
    #: keeps its key (and its cached, possibly paid, reply).
    top_p: float | None = field(default=None, metadata={KEY_WHEN_SET: True})


@dataclass(frozen=True)
class ImageRequest:
    prompt: str
    seed: int = 0
    size: tuple[int, int] = (512, 512)
    #: Structured scene for the ``world`` backend (ignored by generative backends).
    scene: Any = None


@dataclass(frozen=True)
class EditRequest:
    image: Image.Image = field(compare=False)
    instruction: str
    seed: int = 0
    #: Boolean H x W region the edit may touch (inpainting backends use it).
    mask: np.ndarray | None = field(default=None, compare=False)
    #: Structured edit for the ``world`` backend (ignored by generative backends).
    edit: Any = None


@dataclass(frozen=True)
class EditResult:
    image: Image.Image
    #: The region the backend changed when it knows it exactly (``world``); else None.
    mask: np.ndarray | None = None


@dataclass(frozen=True)
class Detection:
    label: str
    score: float
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels


class TextBackend(Backend):
    role = "text"
    #: Whether ``complete`` reads ``TextRequest.images`` (vision-language API models) or
    #: answers from the structured task (``template``). A pipeline attaches images only
    #: when this is true; a text-only backend refuses a request carrying them.
    accepts_images: bool = False

    @abstractmethod
    def complete(self, request: TextRequest) -> str:
        """The model's reply text."""


class ImageBackend(Backend):
    role = "image"

    @abstractmethod
    def generate(self, request: ImageRequest) -> Image.Image:
        """One RGB image for the request."""


class EditBackend(Backend):
    role = "edit"

    @abstractmethod
    def edit(self, request: EditRequest) -> EditResult:
        """The edited image (same size as the input)."""


class DetectorBackend(Backend):
    role = "detector"

    @abstractmethod
    def detect(self, image: Image.Image, labels: Sequence[str],
               threshold: float = 0.1) -> list[Detection]:
        """Open-vocabulary detections of ``labels`` scoring at least ``threshold``."""


class UnanswerableError(ModelError):
    """The model's answer names none of the choices, several, or ties between them. An
    answer, not a failure: the stage engine records it (:class:`Unanswerable`) as a failed
    check instead of retrying the call."""

    retryable = False


@dataclass(frozen=True)
class Unanswerable:
    """A VQA call whose answer named no single choice (the reason in words)."""

    reason: str


class VQABackend(Backend):
    role = "vqa"

    @abstractmethod
    def answer(self, image: Image.Image, question: str, choices: Sequence[str]) -> str:
        """One of ``choices``: the answer constrained to the pipeline's vocabulary."""


def _canonical(value: Any) -> Any:
    if isinstance(value, Image.Image):
        buf = io.BytesIO()
        value.save(buf, format="PNG")
        return {"png_sha256": sha256_bytes(buf.getvalue())}
    if isinstance(value, np.ndarray):
        arr = np.ascontiguousarray(value)
        return {"array_sha256": sha256_bytes(arr.tobytes()),
                "shape": list(arr.shape), "dtype": str(arr.dtype)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not (f.metadata.get(KEY_WHEN_SET) and getattr(value, f.name) is None)}
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def call_key(backend: Backend, method: str, *args: Any) -> str:
    """Content hash of one call: backend fingerprint, method and every argument (images and
    masks by their bytes, dataclasses field by field, including fields excluded from ``==``;
    a field marked :data:`KEY_WHEN_SET` only when it is set)."""
    payload = {"backend": backend.fingerprint, "method": method,
               "args": [_canonical(a) for a in args]}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=repr)
    return sha256_text(text)
