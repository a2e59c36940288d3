"""Per-image preparation for Hugging Face image processors, split for sharing.

The slow (numpy + PIL) ``CLIPImageProcessor`` and ``SiglipImageProcessor`` handle each image
of a batch on its own (convert to RGB, resize, centre crop, rescale, normalise, in that
order), so the engine can prepare images one by one on its prefetch threads, and the part
up to the crop (uint8, rescale and normalise switched off) can be shared by every model whose
processor has the same settings (:mod:`foilbench.scoring.prepared`). The tail runs the same
processor on those uint8 pixels with resize and crop switched off: the same numpy operations
on the same values, so the same bits (tested). Other processors (the torchvision "fast"
ones, SigLIP 2's variable patch grid with its attention mask) keep the batch call.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

SPLITTABLE = ("CLIPImageProcessor", "SiglipImageProcessor")
TAIL_KEYS = ("do_rescale", "rescale_factor", "do_normalize", "image_mean", "image_std",
             "image_processor_type", "processor_class", "_processor_class")


def splittable(processor: Any) -> bool:
    return type(processor).__name__ in SPLITTABLE


def one_image(processor: Any, image: Any) -> Any:
    """The (3, H, W) float32 tensor the processor makes of one RGB image."""
    return processor(images=[image], return_tensors="pt")["pixel_values"][0]


def hf_preparer(processor: Any):
    """A :class:`~foilbench.scoring.prepared.Preparer` for a splittable processor, else None."""
    if not splittable(processor):
        return None
    import transformers

    from foilbench.scoring.prepared import Preparer

    head = {k: v for k, v in processor.to_dict().items() if k not in TAIL_KEYS}
    text = json.dumps({"class": type(processor).__name__, "settings": head,
                       "transformers": transformers.__version__}, sort_keys=True, default=str)
    fingerprint = "hf-pixels-" + hashlib.sha256(text.encode()).hexdigest()

    def pixels(image: Any) -> np.ndarray | None:
        raw = processor(images=[image], do_rescale=False, do_normalize=False,
                        return_tensors="np")["pixel_values"][0]
        if raw.dtype != np.uint8 or raw.ndim != 3 or raw.shape[0] != 3:
            return None
        return np.ascontiguousarray(raw.transpose(1, 2, 0))  # (H, W, 3), as the cache keeps

    def finish(arr: np.ndarray) -> Any:
        return processor(images=[arr], do_resize=False, do_center_crop=False,
                         input_data_format="channels_last", return_tensors="pt")[
            "pixel_values"][0]

    return Preparer(fingerprint, pixels, finish)
