"""Pixel drift between a base and its foil, drawn for the reviewer, and the edit mask overlay.

Criterion (ii) of CompoSET's rubric ("no other object is added, removed, moved, or fully
occluded") is the one generators break most (App. B.4: "edits where the generator most often
introduces secondary changes"; App. C audits it separately). A drift heatmap makes secondary
changes visible at a glance:

    drift(p) = max_c |base(p, c) - foil(p, c)| / 255            (per pixel, channel maximum)

drawn as a transparent-to-hot colour overlay, alpha growing with drift, so unchanged pixels stay
see-through. The numbers shown beside it: the share of pixels with drift strictly above 10/255
(the threshold of CompoSET App. F, without its blur, so single-pixel drift is not hidden) over
the whole image and outside the edit mask; a foil whose changes all lie inside its mask has 0
outside. The foil is resized to the base's size (bilinear) when the two differ, which is said.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter

from foilbench.analysis.pixel_controls import AFFECTED_THRESHOLD

# Colour ramp of the heatmap: (position, RGB); deep violet -> magenta -> orange -> pale yellow.
_RAMP = ((0.0, (40, 10, 90)), (0.35, (170, 30, 140)), (0.7, (245, 120, 40)),
         (1.0, (255, 245, 160)))
MASK_RGBA = (0, 200, 255)


def _rgb(path: Path, size: tuple[int, int] | None = None) -> np.ndarray:
    with Image.open(path) as im:
        im = im.convert("RGB")
        if size is not None and im.size != size:
            im = im.resize(size, Image.BILINEAR)
        return np.asarray(im, dtype=np.int16)


def load_mask(path: Path | None, size: tuple[int, int]) -> np.ndarray | None:
    """Boolean mask (H, W) at ``size`` (nearest), or None when there is no mask."""
    if path is None:
        return None
    with Image.open(path) as m:
        m = m.convert("L")
        if m.size != size:
            m = m.resize(size, Image.NEAREST)
        return np.asarray(m) > 127


def drift_map(base: Path, foil: Path) -> tuple[np.ndarray, bool]:
    """Per-pixel channel-max |base - foil| in [0, 1], and whether the foil was resized."""
    with Image.open(base) as im:
        size = im.size
    with Image.open(foil) as im:
        resized = im.size != size
    a, b = _rgb(base), _rgb(foil, size)
    return np.abs(a - b).max(axis=2).astype(np.float32) / 255.0, resized


def drift_stats(drift: np.ndarray, mask: np.ndarray | None, resized: bool = False) -> dict:
    """Share of drifted pixels (> 10/255) overall and outside the mask (None without mask)."""
    changed = drift > AFFECTED_THRESHOLD
    out = {"changed_fraction": float(changed.mean()), "max_drift": float(drift.max()),
           "outside_mask_fraction": None, "outside_mask_pixels": None,
           "mask_fraction": None, "foil_resized": resized}
    if mask is not None:
        outside = changed & ~mask
        out.update(outside_mask_fraction=float(outside.mean()),
                   outside_mask_pixels=int(outside.sum()), mask_fraction=float(mask.mean()))
    return out


def heat_colours(values: np.ndarray) -> np.ndarray:
    """Map drift in [0, 1] to RGB through the ramp (linear between stops)."""
    pos = np.array([p for p, _ in _RAMP])
    cols = np.array([c for _, c in _RAMP], dtype=np.float32)
    v = np.clip(values, 0.0, 1.0)
    return np.stack([np.interp(v, pos, cols[:, k]) for k in range(3)], axis=-1).astype(np.uint8)


def heatmap_rgba(drift: np.ndarray) -> Image.Image:
    """Drift as an RGBA overlay: unchanged pixels transparent, stronger drift hotter and more
    opaque. Drift is shown on a square-root scale so faint secondary changes stay visible."""
    shown = np.sqrt(drift)
    rgba = np.zeros((*drift.shape, 4), dtype=np.uint8)
    rgba[..., :3] = heat_colours(shown)
    alpha = np.where(drift > 1 / 255, 90 + 165 * shown, 0)
    rgba[..., 3] = np.clip(alpha, 0, 255).astype(np.uint8)
    return Image.fromarray(rgba, "RGBA")


def mask_rgba(mask: np.ndarray, fill: int = 60) -> Image.Image:
    """The edit mask as a light translucent fill (alpha ``fill``) with an opaque outline."""
    m = Image.fromarray(mask.astype(np.uint8) * 255, "L")
    edge = (np.asarray(m.filter(ImageFilter.MaxFilter(3))) > 0) & ~mask
    rgba = np.zeros((*mask.shape, 4), dtype=np.uint8)
    rgba[..., :3] = MASK_RGBA
    rgba[..., 3] = np.where(edge, 255, np.where(mask, fill, 0)).astype(np.uint8)
    return Image.fromarray(rgba, "RGBA")


def png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()
