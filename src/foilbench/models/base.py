"""What a model adapter must provide: one abstract base class per family.

The engine dispatches on the class (``isinstance``), never on a string:

:class:`DualEncoder`     dual encoders (CLIP, SigLIP, the embedded models). The engine calls
                         ``embed_images`` / ``embed_texts`` once per unique input
                         (content-hashed, batched, cached) and scores with ``pair_scores`` on
                         the embeddings. Torch-backed ones subclass
                         :class:`foilbench.models.batched.BatchedDualEncoder`.
:class:`PairwiseScorer`  models that only score (image, text) pairs: generative VLMs (caption
                         log-likelihood, VQAScore). The engine calls ``score_pairs(images,
                         texts)`` once per unique (image, text) pair, grouped by image so an
                         adapter can share the image prefix across that image's captions.
:class:`ApiChoiceModel`  API models that answer two-option choices (``choose_caption``,
                         ``choose_image``), run by :mod:`foilbench.scoring.api_protocol`.

Each class keeps a ``family`` string ("dual", "pairwise", "api_choice"), stored with results
(``ModelInfo.family``). A class that only sets ``family`` without subclassing still works
through :func:`family_of`, with a DeprecationWarning.

Every adapter has a ``fingerprint``: a string that changes whenever its scores could change
(weights hash or hub id + revision, preprocessing, dtype, score kind). The embedding cache and
the results store key on it.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from PIL import Image


@dataclass(frozen=True)
class ModelInfo:
    """What is stored with every result about the model that produced it.

    Attributes:
        spec: What the user typed, e.g. ``openclip:ViT-B-32:laion2b_s34b_b79k``.
        fingerprint: Changes whenever the scores could change (weights, preprocessing,
            dtype, score kind); keys the embedding cache and the results store.
        family: ``"dual"``, ``"pairwise"`` or ``"api_choice"`` (the base class's).
        score_kind: ``"cosine"``, ``"logit"``, ``"loglik"``, ``"p_yes"`` or ``"api_choice"``.
        extras: Free details shown in reports (adapter name, revision, ...).
    """

    spec: str  # what the user typed, e.g. "openclip:ViT-B-32:laion2b_s34b_b79k"
    fingerprint: str
    family: str  # "dual", "pairwise" or "api_choice"
    score_kind: str  # "cosine", "logit", "loglik", "p_yes", "api_choice"
    extras: dict[str, Any] | None = None


class ModelAdapter(ABC):
    """Anything the engine can evaluate: it has ``info`` (a :class:`ModelInfo`)."""

    family: ClassVar[str]
    info: ModelInfo  # a property in most adapters


class DualEncoder(ModelAdapter):
    """Embeds images and texts separately; scores pairs of embeddings."""

    family = "dual"

    @abstractmethod
    def embed_images(self, images: list[Image.Image]) -> np.ndarray:
        """Embed images (called once per unique image, in batches).

        Args:
            images: RGB PIL images.

        Returns:
            ``(n, d)`` float32 embeddings, row k for ``images[k]``.
        """

    @abstractmethod
    def embed_texts(self, texts: list[str]) -> np.ndarray:
        """Embed texts (called once per unique text, in batches).

        Args:
            texts: Captions.

        Returns:
            ``(n, d)`` float32 embeddings, row k for ``texts[k]``.
        """

    @abstractmethod
    def pair_scores(self, image_emb: np.ndarray, text_emb: np.ndarray) -> np.ndarray:
        """Score image k with text k; higher means a better match (ties are failures).

        Args:
            image_emb: ``(n, d)`` rows of :meth:`embed_images`.
            text_emb: ``(n, d)`` rows of :meth:`embed_texts`.

        Returns:
            ``(n,)`` scores, row k of ``image_emb`` with row k of ``text_emb``.
        """


class PairwiseScorer(ModelAdapter):
    """Scores (image, caption) pairs directly (generative VLMs)."""

    family = "pairwise"

    @abstractmethod
    def score_pairs(self, images: list[Image.Image], texts: list[list[str]]) -> list[np.ndarray]:
        """Score each image with its captions (grouped so an image's prefix can be shared).

        Args:
            images: RGB PIL images.
            texts: ``texts[k]`` are the captions to score with ``images[k]``.

        Returns:
            One float array per image: the score of each caption in ``texts[k]``.
        """


class ApiChoiceModel(ModelAdapter):
    """Answers two-option questions: the index (0 or 1) of the chosen option, or None when the
    answer could not be parsed."""

    family = "api_choice"

    @abstractmethod
    def choose_caption(self, image: Image.Image, captions: list[str]) -> int | None:
        """Which of the two captions fits ``image``.

        Args:
            image: An RGB PIL image.
            captions: Two captions, in the order to present them.

        Returns:
            0 or 1, or None when the answer could not be parsed (a failure).
        """

    @abstractmethod
    def choose_image(self, images: list[Image.Image], caption: str) -> int | None:
        """Which of the two images fits ``caption``.

        Args:
            images: Two RGB PIL images, in the order to present them.
            caption: The caption.

        Returns:
            0 or 1, or None when the answer could not be parsed (a failure).
        """


FAMILIES: tuple[type[ModelAdapter], ...] = (DualEncoder, PairwiseScorer, ApiChoiceModel)


def family_of(adapter: Any) -> type[ModelAdapter]:
    """The family base class ``adapter`` belongs to.

    Adapters subclass one of :data:`FAMILIES`. An object that only sets the old ``family``
    string ("dual", "pairwise", "api_choice") is accepted with a DeprecationWarning; anything
    else raises a :class:`~foilbench.errors.ModelError`.
    """
    from foilbench.errors import ModelError

    for family in FAMILIES:
        if isinstance(adapter, family):
            return family
    legacy = getattr(adapter, "family", None)
    by_name = {f.family: f for f in FAMILIES}
    if isinstance(legacy, str) and legacy in by_name:
        base = by_name[legacy]
        warnings.warn(f"{type(adapter).__name__} sets family = {legacy!r} without subclassing "
                      f"foilbench.models.base.{base.__name__}; subclass it (the family string "
                      "alone is deprecated)", DeprecationWarning, stacklevel=3)
        return base
    raise ModelError(f"adapter {type(adapter).__name__} has family {legacy!r}; expected "
                     "'dual', 'pairwise' or 'api_choice' (subclass DualEncoder, PairwiseScorer "
                     "or ApiChoiceModel from foilbench.models.base)")


def cosine_pair_scores(image_emb: np.ndarray, text_emb: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity (inputs need not be normalised).

    Args:
        image_emb: ``(n, d)`` embeddings.
        text_emb: ``(n, d)`` embeddings.

    Returns:
        ``(n,)`` float64 cosines of row k with row k.
    """
    a = np.asarray(image_emb, dtype=np.float64)
    b = np.asarray(text_emb, dtype=np.float64)
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return np.einsum("nd,nd->n", a, b)


def to_rgb(image: Image.Image, name: str = "image", max_pixels: int | None = None) -> Image.Image:
    """Convert any PIL mode (L, LA, P, CMYK, I;16, RGBA) to 8-bit RGB, or refuse huge images
    (``max_pixels`` defaults to :func:`foilbench.limits.max_image_pixels`, the limit validation
    applies from the header).

    RGBA, LA, PA and palette images with a transparent index are composited on white, as
    transformers' ``image_transforms.convert_to_rgb`` does before its processors resize
    (pixel-equal, tested); every adapter but open_clip's gets its images this way (open_clip
    converts after its own resize and crop: ``scoring/encode.image_decoder``). Not followed:
    transformers also composites an L or RGB image that carries a ``transparency`` colour key
    (a tRNS chunk); here those convert plainly. 16-bit and float images are scaled to 8 bits.
    """
    from foilbench.errors import ModelError
    from foilbench.limits import max_image_pixels

    max_pixels = max_image_pixels() if max_pixels is None else max_pixels
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


class CallableDualEncoder(DualEncoder):
    """A dual encoder made of two functions, for a model held in memory::

        model = CallableDualEncoder(embed_images=my_image_fn, embed_texts=my_text_fn,
                                    name="my-clip-step-1200")

    ``embed_images(list of PIL RGB images) -> (n, d)`` and ``embed_texts(list of str) ->
    (n, d)``; scores are cosine unless ``pair_scores`` (a function of the two embedding
    arrays, row-wise) is given. ``name`` is the spec stored with results and the embedding
    cache key: give a new name (or ``version``) whenever the functions change, or evaluate
    without a cache (the default of :func:`foilbench.evaluation.evaluate_run`).
    """

    def __init__(self, embed_images, embed_texts, *, name: str, version: str = "1",
                 pair_scores=None, score_kind: str = "cosine") -> None:
        from foilbench.errors import ModelError

        for label, fn in (("embed_images", embed_images), ("embed_texts", embed_texts)):
            if not callable(fn):
                raise ModelError(f"CallableDualEncoder: {label} must be a function, got "
                                 f"{type(fn).__name__}")
        if not isinstance(name, str) or not name.strip():
            raise ModelError("CallableDualEncoder needs a non-empty name= (it labels the "
                             "results and keys the embedding cache)")
        self._images, self._texts, self._pair = embed_images, embed_texts, pair_scores
        self._info = ModelInfo(spec=name, fingerprint=f"callables:{name}:{version}",
                               family=self.family,
                               score_kind=score_kind if pair_scores else "cosine",
                               extras={"adapter": "CallableDualEncoder", "version": version})

    @property
    def info(self) -> ModelInfo:
        return self._info

    def embed_images(self, images: list[Image.Image]) -> np.ndarray:
        return self._checked(self._images(list(images)), len(images), "embed_images")

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        return self._checked(self._texts(list(texts)), len(texts), "embed_texts")

    def pair_scores(self, image_emb: np.ndarray, text_emb: np.ndarray) -> np.ndarray:
        if self._pair is None:
            return cosine_pair_scores(image_emb, text_emb)
        return self._checked(self._pair(image_emb, text_emb), len(image_emb), "pair_scores",
                             ndim=1)

    def _checked(self, out, n: int, what: str, ndim: int = 2) -> np.ndarray:
        """The function's output as a float array of the promised shape, or a clear error."""
        from foilbench.errors import ModelError

        arr = np.asarray(out.detach().cpu().numpy() if hasattr(out, "detach") else out,
                         dtype=np.float32)
        if arr.ndim != ndim or arr.shape[0] != n:
            want = f"({n}, d)" if ndim == 2 else f"({n},)"
            raise ModelError(f"{self._info.spec}: {what} returned shape {arr.shape} for {n} "
                             f"input(s); expected {want}")
        if not np.isfinite(arr).all():
            raise ModelError(f"{self._info.spec}: {what} returned NaN or infinite values")
        return arr
