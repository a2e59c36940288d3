"""Image preprocessing shared by training and inference of the embedded models.

One function path for both, so the training cache and the adapter see identical pixels:
any PIL mode -> RGB -> square resize (PIL bilinear, which low-pass filters when shrinking)
-> uint8 array -> floats in [-1, 1]. No crop and no flip: the world's images are square, and
a flip would swap "left" and "right".
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from foilbench.models.base import to_rgb

PREPROCESS_VERSION = "rgb-resize-bilinear-square-[-1,1]-v1"


def image_to_array(image: Image.Image, size: int, name: str = "image") -> np.ndarray:
    """(size, size, 3) uint8 pixels of ``image`` as the embedded models see them."""
    rgb = to_rgb(image, name=name)
    if rgb.size != (size, size):
        rgb = rgb.resize((size, size), Image.Resampling.BILINEAR)
    return np.asarray(rgb, dtype=np.uint8)


def arrays_to_tensor(pixels: np.ndarray):
    """(n, S, S, 3) uint8 -> (n, 3, S, S) float32 torch tensor in [-1, 1]."""
    import torch

    x = torch.from_numpy(np.ascontiguousarray(pixels)).permute(0, 3, 1, 2).float()
    return x / 127.5 - 1.0
