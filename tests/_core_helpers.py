"""Small builders shared by the core tests: benchmark folders and fake adapters."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from foilbench.models.base import DualEncoder, ModelInfo, PairwiseScorer

COLOURS = {"red": (255, 0, 0), "green": (0, 255, 0), "blue": (0, 0, 255)}


def solid(path: Path, colour: str, size: int = 8) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (size, size), COLOURS[colour]).save(path)
    return path.name


def write_folder(root: Path, kind: str, items: pd.DataFrame, **manifest) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    items.to_parquet(root / "items.parquet", index=False)
    (root / "manifest.json").write_text(json.dumps({"name": root.name, "kind": kind, **manifest}))
    return root


def colour_pair_folder(root: Path) -> Path:
    """4 pair items over 2 scenes; captions name the image's colour."""
    for c in COLOURS:
        solid(root / f"{c}.png", c)
    rows = [
        ("a", "red", "green", "s1"), ("b", "red", "blue", "s1"),
        ("c", "green", "blue", "s2"), ("d", "blue", "red", "s2"),
    ]
    items = pd.DataFrame([{"item_id": i, "image_base": f"{b}.png", "image_foil": f"{f}.png",
                           "caption_base": f"a {b} square", "caption_foil": f"a {f} square",
                           "scene_id": s, "edit_type": "modify_color"} for i, b, f, s in rows])
    return write_folder(root, "pair", items)


class ColourEncoder(DualEncoder):
    """A dual encoder with known scores: image -> mean RGB / 255; text -> one-hot of the colour
    word it contains (zero vector when none). Score = dot product, so s(c, i) is the amount of
    the caption's colour in the image. Counts every forward call and input."""

    def __init__(self, fingerprint: str = "colour-v1", fail_after_image_batches: int | None = None):
        self._info = ModelInfo(spec="colour", fingerprint=fingerprint, family="dual",
                               score_kind="dot")
        self.image_calls = self.text_calls = self.images_seen = self.texts_seen = 0
        self.fail_after = fail_after_image_batches

    @property
    def info(self) -> ModelInfo:
        return self._info

    def embed_images(self, images):
        if self.fail_after is not None and self.image_calls >= self.fail_after:
            raise KeyboardInterrupt("simulated kill")
        self.image_calls += 1
        self.images_seen += len(images)
        return np.stack([np.asarray(im, dtype=np.float32).reshape(-1, 3).mean(0) / 255
                         for im in images])

    def embed_texts(self, texts):
        self.text_calls += 1
        self.texts_seen += len(texts)
        names = list(COLOURS)
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for row, text in enumerate(texts):
            for k, name in enumerate(names):
                if name in text.split():
                    out[row, k] = 1.0
        return out

    def pair_scores(self, image_emb, text_emb):
        return np.einsum("nd,nd->n", image_emb, text_emb)


class ColourPairwise(PairwiseScorer):
    """The same scores as :class:`ColourEncoder`, through ``score_pairs``."""

    def __init__(self):
        self.dual = ColourEncoder(fingerprint="colour-pairwise-v1")
        self._info = ModelInfo(spec="colour-pw", fingerprint="colour-pairwise-v1",
                               family="pairwise", score_kind="dot")
        self.pairs_seen = 0

    @property
    def info(self) -> ModelInfo:
        return self._info

    def score_pairs(self, images, texts):
        out = []
        for im, caps in zip(images, texts, strict=True):
            self.pairs_seen += len(caps)
            emb = self.dual.embed_images([im])
            out.append(self.dual.embed_texts(caps) @ emb[0])
        return out
