"""``tiny-random``: a deterministic random-feature dual encoder (a smoke-test model only).

Image embedding = (16x16 RGB thumbnail in [0, 1], centred) @ P_img; text embedding = (counts of
hashed word unigrams and bigrams) @ P_txt, with P_img and P_txt drawn once from a seeded normal
generator. Scores are cosine. It needs no weights, runs anywhere in milliseconds and scores near
chance; its fingerprint is a hash of the projections, so cached embeddings stay valid exactly as
long as the model is unchanged.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
from PIL import Image

from foilbench.errors import ModelError
from foilbench.models.base import DualEncoder, ModelInfo, cosine_pair_scores
from foilbench.models.device import DTYPES, select_device

THUMB = 16
TEXT_BUCKETS = 2048
_WORD = re.compile(r"[a-z0-9]+")


def _bucket(token: str) -> int:
    """Stable across processes (unlike ``hash``): first 4 bytes of blake2b."""
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little") % (
        TEXT_BUCKETS
    )


class TinyRandomEncoder(DualEncoder):
    """Random projections of thumbnails and hashed word counts (see the module docstring)."""

    def __init__(self, dim: int = 64, seed: int = 0, spec: str = "tiny-random",
                 device: str = "cpu") -> None:
        rng = np.random.default_rng(seed)
        self.dim = dim
        self.device = device
        self.image_proj = rng.standard_normal((THUMB * THUMB * 3, dim)).astype(np.float32)
        self.text_proj = rng.standard_normal((TEXT_BUCKETS, dim)).astype(np.float32)
        digest = hashlib.sha256(self.image_proj.tobytes() + self.text_proj.tobytes()).hexdigest()
        self._info = ModelInfo(spec=spec, fingerprint=f"tiny-random:v1:d{dim}:s{seed}:{digest[:16]}",
                               family=self.family, score_kind="cosine",
                               extras={"note": "random features; near chance by design"})

    @property
    def info(self) -> ModelInfo:
        return self._info

    def embed_images(self, images: list[Image.Image]) -> np.ndarray:
        if not images:
            return np.zeros((0, self.dim), dtype=np.float32)
        thumbs = np.stack([
            np.asarray(im.convert("RGB").resize((THUMB, THUMB), Image.BILINEAR), dtype=np.float32)
            .reshape(-1) / 255.0
            for im in images
        ])
        return (thumbs - 0.5) @ self.image_proj

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        counts = np.zeros((len(texts), TEXT_BUCKETS), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for token in words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]:
                counts[row, _bucket(token)] += 1.0
        return counts @ self.text_proj

    def pair_scores(self, image_emb: np.ndarray, text_emb: np.ndarray) -> np.ndarray:
        return cosine_pair_scores(image_emb, text_emb)


def build_tiny_random(device: str = "auto", dtype: str = "float32") -> TinyRandomEncoder:
    """Registry factory for ``tiny-random``. Runs in numpy on the CPU whatever ``device`` says
    (the device is still validated so a bad ``--device`` fails the same way for every model)."""
    if dtype not in DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    select_device(device)
    return TinyRandomEncoder()
