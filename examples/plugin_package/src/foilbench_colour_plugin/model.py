"""``colour-mean``: a dual encoder that knows colours and nothing else.

An image is embedded as its mean RGB colour; a text as the RGB of the colour words it
names (their mean), so "a red circle" matches a red image. It shows the whole adapter
contract of :class:`foilbench.models.base.DualEncoder` in a few lines.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from foilbench.models.base import DualEncoder, ModelInfo, cosine_pair_scores

COLOURS = {"red": (1.0, 0.0, 0.0), "green": (0.0, 1.0, 0.0), "blue": (0.0, 0.0, 1.0),
           "yellow": (1.0, 1.0, 0.0)}
GREY = (1.0, 1.0, 1.0)  # a text naming no colour: equally like every image


class ColourMeanEncoder(DualEncoder):
    """Mean RGB of an image vs the RGB of a text's colour words, scored by cosine."""

    def __init__(self) -> None:
        # the fingerprint keys the embedding cache: change it whenever scores could change
        self._info = ModelInfo(spec="colour-mean", fingerprint="colour-mean:v1",
                               family=self.family, score_kind="cosine")

    @property
    def info(self) -> ModelInfo:
        return self._info

    def embed_images(self, images: list[Image.Image]) -> np.ndarray:
        rows = [np.asarray(im.convert("RGB"), dtype=np.float32).reshape(-1, 3).mean(axis=0)
                / 255.0 for im in images]
        centred = np.array(rows, dtype=np.float32).reshape(-1, 3)
        return centred - centred.mean(axis=1, keepdims=True) + 1e-3  # hue, not brightness

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            named = [COLOURS[w] for w in text.lower().split() if w in COLOURS]
            rgb = np.mean(named, axis=0) if named else np.array(GREY)
            rows.append(rgb - np.mean(rgb) + 1e-3)
        return np.array(rows, dtype=np.float32).reshape(-1, 3)

    def pair_scores(self, image_emb: np.ndarray, text_emb: np.ndarray) -> np.ndarray:
        return cosine_pair_scores(image_emb, text_emb)


def build(device: str = "auto", dtype: str = "float32") -> ColourMeanEncoder:
    """The entry point's factory (numpy only, so device and dtype change nothing)."""
    return ColourMeanEncoder()
