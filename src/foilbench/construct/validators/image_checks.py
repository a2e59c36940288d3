"""Pixel checks of generated images: CompoSET's drift outside the edit region and Auto-Comp's
Minimal-background whiteness.

Pixel drift (CompoSET App. C, "Generator drift audit": "To bound how often the image-generation
prompt leaks unintended changes into the foil ..."; the paper audits drift with a VLM judge and
a manual check, and measures pixel change per pair in App. F.1 as the "fraction of pixels with
channel-max difference above 10/255 after sigma=1.0 Gaussian blur"). We combine the two: a
pixel *changed* when its blurred channel-max absolute difference exceeds 10/255 (strict), and
the drift of a pair is the share of changed pixels among those outside the edit mask grown by
the blur radius (4 sigma, so the blur of an in-mask change is not counted as drift). A perfect
single edit has drift 0; the world editor's foils do by construction. The threshold a pipeline
applies to it is the pipeline's choice (``composet``: 0.01), the paper gives none.

Background whiteness (Auto-Comp App. A.6): "we used a grayscale brightness threshold of 190
and required at least 70% of non-object pixels to meet this threshold". Object pixels are the
detector's boxes (Auto-Comp masks with SAM2 segments inside the boxes; boxes are the coarser,
stricter-for-objects choice: more of the object's surroundings is excluded). Grayscale is
ITU-R 601 luma (PIL's ``L``); "meet" is read as >= 190.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from PIL import Image
from scipy.ndimage import binary_dilation, gaussian_filter

CHANGE_THRESHOLD = 10 / 255
BLUR_SIGMA = 1.0
WHITE_LEVEL = 190
WHITE_SHARE = 0.70


def _rgb(image: Image.Image | np.ndarray) -> np.ndarray:
    if isinstance(image, Image.Image):
        image = np.asarray(image.convert("RGB"))
    arr = np.asarray(image, dtype=np.float64)
    return arr / 255.0 if arr.max(initial=0) > 1.0 else arr


def changed_pixels(base: Image.Image | np.ndarray, foil: Image.Image | np.ndarray,
                   sigma: float = BLUR_SIGMA,
                   threshold: float = CHANGE_THRESHOLD) -> np.ndarray:
    """H x W bool: blurred channel-max |base - foil| > ``threshold`` (the drift heatmap)."""
    a, b = _rgb(base), _rgb(foil)
    if a.shape != b.shape:
        raise ValueError(f"base and foil differ in size: {a.shape[:2]} vs {b.shape[:2]}")
    d = gaussian_filter(a - b, sigma=(sigma, sigma, 0)) if sigma > 0 else a - b
    return np.abs(d).max(axis=2) > threshold


def pixel_drift(base: Image.Image | np.ndarray, foil: Image.Image | np.ndarray,
                mask: np.ndarray, sigma: float = BLUR_SIGMA,
                threshold: float = CHANGE_THRESHOLD) -> float:
    """Share of changed pixels outside ``mask`` (grown by 4 sigma); 0.0 when the grown mask
    covers the whole image. See the module docstring.

    >>> import numpy as np
    >>> a = np.zeros((8, 8, 3)); b = a.copy(); b[0, 0] = 1.0
    >>> m = np.zeros((8, 8), bool); m[0, 0] = True
    >>> pixel_drift(a, b, m, sigma=0)
    0.0
    >>> pixel_drift(a, b, np.zeros((8, 8), bool), sigma=0)
    0.015625
    """
    changed = changed_pixels(base, foil, sigma, threshold)
    mask = np.asarray(mask, bool)
    if mask.shape != changed.shape:
        raise ValueError(f"mask {mask.shape} does not match the images {changed.shape}")
    radius = int(4.0 * sigma + 0.5)
    if radius > 0 and mask.any():
        mask = binary_dilation(mask, iterations=radius)
    outside = ~mask
    n = int(outside.sum())
    return float((changed & outside).sum() / n) if n else 0.0


def boxes_mask(shape: Sequence[int], boxes: Iterable[Sequence[float]]) -> np.ndarray:
    """H x W bool covering every (x0, y0, x1, y1) box (pixel coordinates, clipped)."""
    h, w = int(shape[0]), int(shape[1])
    out = np.zeros((h, w), bool)
    for x0, y0, x1, y1 in boxes:
        c0, r0 = max(int(np.floor(x0)), 0), max(int(np.floor(y0)), 0)
        c1, r1 = min(int(np.ceil(x1)), w), min(int(np.ceil(y1)), h)
        if c1 > c0 and r1 > r0:
            out[r0:r1, c0:c1] = True
    return out


def background_whiteness(image: Image.Image, boxes: Iterable[Sequence[float]],
                         level: int = WHITE_LEVEL) -> float:
    """Share of non-box pixels whose grayscale is >= ``level`` (1.0 if boxes cover all).

    >>> from PIL import Image
    >>> background_whiteness(Image.new("RGB", (10, 10), "white"), [(0, 0, 5, 10)])
    1.0
    """
    gray = np.asarray(image.convert("L"))
    outside = ~boxes_mask(gray.shape, boxes)
    n = int(outside.sum())
    return float((gray[outside] >= level).sum() / n) if n else 1.0


def is_white_background(image: Image.Image, boxes: Iterable[Sequence[float]],
                        level: int = WHITE_LEVEL, share: float = WHITE_SHARE) -> bool:
    """Auto-Comp's pass rule: whiteness >= ``share`` (70%)."""
    return background_whiteness(image, boxes, level) >= share
