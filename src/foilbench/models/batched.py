"""The torch dual-encoder base: batching, L2 normalisation and the score head, once.

A subclass only says how one batch of images or texts becomes features
(:meth:`BatchedDualEncoder.image_features` / :meth:`~BatchedDualEncoder.text_features`); the
base runs them without gradients in chunks of ``batch_size``, L2-normalises the features
(unless the network already does, ``features_normalised``), returns float32 numpy arrays, and
scores embedding pairs with the configured head:

``cosine``   cos(i, c)
``logit``    exp(t) * cos(i, c) + b            (the model's own logit; b = 0 for CLIP)
``sigmoid``  sigmoid(exp(t) * cos(i, c) + b)   (SigLIP's match probability)

(see :mod:`foilbench.models.score_heads`). The engine already batches and asks for at most
``batch_size`` inputs per call (:func:`forward_batch_size`), so inside a run the chunking here
is a single pass; it only splits calls from elsewhere (training evaluation, dataset controls).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from PIL import Image

from foilbench.models.base import DualEncoder, cosine_pair_scores
from foilbench.models.score_heads import logit_pair_scores

SCORES = ("cosine", "logit", "sigmoid")


class BatchedDualEncoder(DualEncoder):
    """A dual encoder over a torch model. Subclasses set ``batch_size``, ``score`` and, for
    logit heads, ``logit_scale`` (already exponentiated) and ``logit_bias``."""

    batch_size: int = 32
    score: str = "cosine"
    logit_scale: float = 1.0
    logit_bias: float = 0.0
    embed_dim: int = 0  # width of an empty result
    features_normalised: ClassVar[bool] = False  # the network's output is already unit-norm

    @abstractmethod
    def image_features(self, images: list[Image.Image], offset: int) -> Any:
        """A torch tensor (n, d) for one batch; ``offset`` is the batch's first index in the
        call (for naming a bad image)."""

    @abstractmethod
    def text_features(self, texts: list[str], offset: int) -> Any:
        """A torch tensor (n, d) for one batch of texts."""

    def embed_images(self, images: list[Image.Image]) -> np.ndarray:
        return self._embed(images, self.image_features)

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts, self.text_features)

    def pair_scores(self, image_emb: np.ndarray, text_emb: np.ndarray) -> np.ndarray:
        if self.score == "cosine":
            return cosine_pair_scores(image_emb, text_emb)
        return logit_pair_scores(image_emb, text_emb, self.logit_scale, self.logit_bias,
                                 sigmoid=self.score == "sigmoid")

    def _embed(self, inputs: Sequence, features: Callable[[list, int], Any]) -> np.ndarray:
        import torch

        inputs = list(inputs)
        size = max(1, int(self.batch_size))
        out = []
        with torch.no_grad():
            for start in range(0, len(inputs), size):
                out.append(self._finish(features(inputs[start:start + size], start)))
        if not out:
            return np.zeros((0, self.embed_dim), np.float32)
        return np.concatenate(out)

    def _finish(self, feats) -> np.ndarray:
        import torch

        feats = feats.float()
        if not self.features_normalised:
            feats = torch.nn.functional.normalize(feats, dim=-1)
        return feats.cpu().numpy().astype(np.float32)


def forward_batch_size(adapter: Any, batch_size: int) -> int:
    """Inputs per forward call in the engine: the run's ``batch_size``, capped by the
    adapter's own (so a batched adapter never splits the engine's batches again)."""
    own = getattr(adapter, "batch_size", None) if isinstance(adapter, BatchedDualEncoder) else None
    return min(batch_size, own) if own else batch_size
