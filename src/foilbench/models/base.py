"""What a model adapter must provide.

Two families, told apart by ``adapter.family``:

``"dual"``       dual encoders (CLIP, SigLIP, the embedded models). The engine calls
                 ``embed_images`` / ``embed_texts`` once per unique input (content-hashed,
                 batched, cached) and scores with ``pair_scores`` on the embeddings.
``"pairwise"``   models that only score (image, text) pairs: generative VLMs (caption
                 log-likelihood, VQAScore) and API models. The engine calls
                 ``score_pairs(image_refs, texts)`` once per unique (image, text) pair, grouped
                 by image so an adapter can share the image prefix across that image's captions.

Every adapter has a ``fingerprint``: a string that changes whenever its scores could change
(weights hash or hub id + revision, preprocessing, dtype, score kind). The embedding cache and
the results store key on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from PIL import Image


@dataclass(frozen=True)
class ModelInfo:
    spec: str  # what the user typed, e.g. "openclip:ViT-B-32:laion2b_s34b_b79k"
    fingerprint: str
    family: str  # "dual" or "pairwise"
    score_kind: str  # "cosine", "logit", "loglik", "p_yes", "api_choice"
    extras: dict[str, Any] | None = None


@runtime_checkable
class DualEncoder(Protocol):
    family: str  # == "dual"

    @property
    def info(self) -> ModelInfo: ...

    def embed_images(self, images: list[Image.Image]) -> np.ndarray:
        """(n, d) float32 embeddings of RGB PIL images."""

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        """(n, d) float32 embeddings."""

    def pair_scores(self, image_emb: np.ndarray, text_emb: np.ndarray) -> np.ndarray:
        """Elementwise score of row k of image_emb with row k of text_emb, shape (n,)."""


@runtime_checkable
class PairwiseScorer(Protocol):
    family: str  # == "pairwise"

    @property
    def info(self) -> ModelInfo: ...

    def score_pairs(self, images: list[Image.Image], texts: list[list[str]]) -> list[np.ndarray]:
        """For image k, the scores of each caption in texts[k] (a float array per image)."""


def cosine_pair_scores(image_emb: np.ndarray, text_emb: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity (inputs need not be normalised)."""
    a = np.asarray(image_emb, dtype=np.float64)
    b = np.asarray(text_emb, dtype=np.float64)
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return np.einsum("nd,nd->n", a, b)


def to_rgb(image: Image.Image, name: str = "image", max_pixels: int = 8192 * 8192) -> Image.Image:
    """Convert any PIL mode (L, LA, P, CMYK, I;16, RGBA) to 8-bit RGB, or refuse huge images."""
    from foilbench.errors import ModelError

    if image.width * image.height > max_pixels:
        raise ModelError(f"{name}: image of {image.width}x{image.height} is too large "
                         f"(limit {max_pixels} pixels)")
    if image.mode == "RGB":
        return image
    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        arr = np.asarray(image, dtype=np.float64)
        hi = arr.max() if arr.size and arr.max() > 0 else 1.0
        arr = np.clip(arr / (65535.0 if hi > 255 else 255.0) * 255.0, 0, 255).astype(np.uint8)
        return Image.fromarray(arr).convert("RGB")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(bg, rgba).convert("RGB")
    return image.convert("RGB")
