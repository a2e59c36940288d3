"""Open-vocabulary detection validator: ``hf-det:/local/dir`` (transformers zero-shot detectors).

Auto-Comp checks every generated image for the presence and count of its concept's objects
with an open-vocabulary detector (§3, App. A.6: GroundingDINO); CompoSET's automatic
verification checks counts before human QC (App. C). Any model ``AutoModelForZeroShot
ObjectDetection`` loads from a folder works, with ``AutoProcessor``:

- OWL-ViT / OWLv2: one query per label; a box gets the label of its best-scoring query and
  that query's sigmoid score. OWLv2 predicts boxes on the image padded to a square at the
  bottom and right, so its boxes are scaled by the longer side and clipped to the image.
- Grounding DINO (and other models whose processor reads phrases back from the text): the
  labels are joined as ``"a. b. c."``; a box's phrase (its tokens scoring above
  ``text_threshold``, default 0.3 as Auto-Comp App. A.6 sets it: "box_threshold=0.4 and
  text_threshold=0.3"; Grounding DINO's release uses 0.25) is mapped back to the label
  it equals, or else the label sharing the most words with it; a box whose phrase matches no
  label (or two equally) is dropped.

A detection is kept when its score is at least ``threshold`` (the processors keep ``score >
threshold``; we pass the next float32 below it). Boxes are ``(x0, y0, x1, y1)`` in pixels.
Options: ``nms=F`` (IoU above which a lower-scoring box of the same label is suppressed,
default off: counting validators may want it, e.g. ``nms=0.5``), ``text_threshold=F``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image

from foilbench.construct.backends.api_common import check_options
from foilbench.construct.backends.base import Detection, DetectorBackend
from foilbench.construct.backends.local_dir import dir_identity, require_dir
from foilbench.errors import ModelError
from foilbench.models.device import select_device, select_dtype
from foilbench.models.fingerprint import make_fingerprint
from foilbench.models.spec_options import split_options

OWL_TYPES = ("owlvit", "owlv2")
TEXT_THRESHOLD = 0.3  # Auto-Comp App. A.6


def from_spec(rest: str, **options: Any) -> HFDetector:
    check_options(f"hf-det:{rest}", options)
    body, opts = split_options(rest, {"nms": None, "text_threshold": None})
    numbers = {}
    for name in opts:
        try:
            numbers[name] = float(opts[name])
        except ValueError:
            raise ModelError(f"hf-det:{rest}: {name}={opts[name]!r} must be a number") from None
    return HFDetector(f"hf-det:{rest}", body, device=options.get("device") or "auto",
                      dtype=options.get("dtype") or "float32", nms=numbers.get("nms"),
                      text_threshold=numbers.get("text_threshold", TEXT_THRESHOLD))


def _below(threshold: float) -> float:
    """The float32 just below ``threshold``: ``score > _below(t)`` is ``score >= t``."""
    return float(np.nextafter(np.float32(threshold), np.float32(-np.inf)))


def _words(text: str) -> set[str]:
    return set(text.lower().replace(".", " ").split())


def match_phrase(phrase: str, labels: Sequence[str]) -> str | None:
    """The label a detector's phrase names: equal (case aside), else most shared words."""
    norm = " ".join(phrase.lower().split())
    for label in labels:
        if " ".join(label.lower().split()) == norm:
            return label
    overlap = [(len(_words(phrase) & _words(label)), label) for label in labels]
    best = max((n for n, _ in overlap), default=0)
    winners = [label for n, label in overlap if n == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def _iou(a: tuple, b: tuple) -> float:
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def suppress(dets: list[Detection], iou: float) -> list[Detection]:
    """Greedy per-label non-maximum suppression (highest score first)."""
    kept: list[Detection] = []
    for d in sorted(dets, key=lambda d: -d.score):
        if all(k.label != d.label or _iou(k.box, d.box) <= iou for k in kept):
            kept.append(d)
    return kept


class HFDetector(DetectorBackend):
    def __init__(self, spec: str, target: str, device: str = "auto", dtype: str = "float32",
                 nms: float | None = None, text_threshold: float = 0.3) -> None:
        from transformers import AutoConfig, AutoModelForZeroShotObjectDetection, AutoProcessor

        folder = require_dir(target, "hf-det")
        self.spec, self.nms, self.text_threshold = spec, nms, text_threshold
        self.device = select_device(device)
        self.torch_dtype = select_dtype(dtype, self.device)
        try:
            self.model_type = AutoConfig.from_pretrained(str(folder)).model_type
            model = AutoModelForZeroShotObjectDetection.from_pretrained(
                str(folder), dtype=self.torch_dtype)
            self.processor = AutoProcessor.from_pretrained(str(folder))
        except (OSError, ValueError, KeyError) as e:
            raise ModelError(f"hf-det: could not load a zero-shot detector from {folder}: {e}"
                             ) from None
        self.model = model.to(self.device).eval()
        self._lock = threading.Lock()
        self._fingerprint = make_fingerprint("hf-det", {
            **dir_identity(folder), "model_class": type(model).__name__, "dtype": dtype,
            "nms": nms, "text_threshold": text_threshold})

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "spec": self.spec, "model_type": self.model_type,
                "nms": self.nms}

    def _inputs(self, image: Image.Image, text: Any) -> dict:
        enc = self.processor(text=text, images=image, return_tensors="pt")
        out = {}
        for key, value in enc.items():
            value = value.to(self.device)
            out[key] = value.to(self.torch_dtype) if value.is_floating_point() else value
        return out

    def detect(self, image: Image.Image, labels: Sequence[str],
               threshold: float = 0.1) -> list[Detection]:
        import torch

        labels = [str(label) for label in labels]
        if not labels or any(not label.strip() for label in labels):
            raise ModelError(f"{self.spec}: detection needs non-empty labels, got {labels!r}")
        image = image.convert("RGB")
        w, h = image.size
        owl = self.model_type in OWL_TYPES
        side = max(w, h) if self.model_type == "owlv2" else None
        target = [(side, side)] if side else [(h, w)]
        with self._lock, torch.no_grad():
            inputs = self._inputs(image, [labels] if owl else [". ".join(
                label.strip().lower() for label in labels) + "."])
            outputs = self.model(**inputs)
            if owl:
                res = self.processor.post_process_grounded_object_detection(
                    outputs, threshold=_below(threshold), target_sizes=target,
                    text_labels=[labels])[0]
            else:
                res = self.processor.post_process_grounded_object_detection(
                    outputs, input_ids=inputs.get("input_ids"), threshold=_below(threshold),
                    text_threshold=self.text_threshold, target_sizes=target)[0]
        dets = []
        for k, (score, box) in enumerate(zip(res["scores"].tolist(), res["boxes"].tolist(),
                                             strict=True)):
            label = res["text_labels"][k] if owl else match_phrase(res["text_labels"][k],
                                                                   labels)
            if label is None:
                continue
            x0, y0, x1, y1 = (min(max(v, 0.0), lim) for v, lim in zip(box, (w, h, w, h),
                                                                      strict=True))
            dets.append(Detection(label, float(score), (x0, y0, x1, y1)))
        dets.sort(key=lambda d: -d.score)
        return suppress(dets, self.nms) if self.nms is not None else dets
