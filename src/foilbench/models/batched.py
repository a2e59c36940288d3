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

Two optional declarations let the engine spend CPU only where it changes the answer:

- ``trims_text``: ``text_features`` runs each batch at the token length of its longest text,
  and that is exact (a causal text tower pooled at the end-of-text token, as CLIP's: padding
  after the last real token can influence no earlier position; or a tower that masks padding
  keys, as the embedded models' do). The engine then orders the
  unique texts by length before batching, so each batch costs about its captions' length
  rather than the context length. Towers that attend both ways or pool over every position
  (SigLIP-style, mean pooling) keep the full length and leave this False. Because a trimmed
  batch of captions costs a fraction of a full-context one, such an adapter takes
  :data:`TRIMMED_TEXT_FACTOR` times its ``batch_size`` texts per call
  (:meth:`BatchedDualEncoder.text_batch_size`): fewer calls, the same features up to float32
  rounding. On one core, 64 instead of 32 trimmed SugarCrepe captions per call took 7% less
  text forward time (``bench/bench_text_batches.py``); the memory of a call stays below that
  of ``batch_size`` full-context texts whenever its longest text has at most half the
  context.
- ``prepare_image`` / ``prepared_features``: the per-image part of the pipeline (resize, crop,
  to tensor) split from the batched forward pass, so the engine can run it on prefetch threads
  while the model computes (see :mod:`foilbench.scoring.encode`). The default prepares
  nothing and hands the images to ``image_features``.

Settling near ties (:mod:`foilbench.scoring.settle`): an adapter whose feature functions read
``self.device`` and ``self.torch_dtype`` names its network in :meth:`torch_module`; the
engine can then recompute the inputs of a decision that float32 rounding could flip in
float64 (:meth:`float64_embeddings`, :mod:`foilbench.models.float64`). The default names no
network, and such an adapter's near ties stay counted, unsettled.
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
TRIMMED_TEXT_FACTOR = 2  # texts per call of a text-trimming adapter, in units of batch_size


class BatchedDualEncoder(DualEncoder):
    """A dual encoder over a torch model. Subclasses set ``batch_size``, ``score`` and, for
    logit heads, ``logit_scale`` (already exponentiated) and ``logit_bias``."""

    batch_size: int = 32
    score: str = "cosine"
    logit_scale: float = 1.0
    logit_bias: float = 0.0
    embed_dim: int = 0  # width of an empty result
    features_normalised: ClassVar[bool] = False  # the network's output is already unit-norm
    trims_text: bool = False  # text batches run exactly at their longest text's length

    def text_batch_size(self) -> int:
        """Texts per forward call: ``batch_size``, times :data:`TRIMMED_TEXT_FACTOR` when
        each batch runs at its longest text's length (``trims_text``)."""
        size = max(1, int(self.batch_size))
        return size * TRIMMED_TEXT_FACTOR if self.trims_text else size

    @abstractmethod
    def image_features(self, images: list[Image.Image], offset: int) -> Any:
        """A torch tensor (n, d) for one batch; ``offset`` is the batch's first index in the
        call (for naming a bad image)."""

    @abstractmethod
    def text_features(self, texts: list[str], offset: int) -> Any:
        """A torch tensor (n, d) for one batch of texts."""

    def prepare_image(self, image: Image.Image, index: int) -> Any:
        """One image as the network will take it (thread-safe; runs on a prefetch thread).
        The default keeps the image: :meth:`prepared_features` then calls
        :meth:`image_features`."""
        return image

    def prepared_features(self, prepared: list, offset: int) -> Any:
        """Features of a batch of :meth:`prepare_image` outputs."""
        return self.image_features(prepared, offset)

    def embed_images(self, images: list[Image.Image]) -> np.ndarray:
        return self._embed(images, self.image_features)

    def torch_module(self) -> Any:
        """The network the feature functions run, when they follow ``self.device`` and
        ``self.torch_dtype`` (so it can be recomputed in float64); None by default."""
        return None

    def float64_embeddings(self, prepared: list, texts: list[str]
                           ) -> tuple[np.ndarray, np.ndarray] | None:
        """Unit-norm float64 features of :meth:`prepare_image` outputs and texts, from this
        model cast to float64 on the CPU for the call; None where it cannot be
        (:mod:`foilbench.models.float64`)."""
        from foilbench.models.float64 import float64_embeddings

        return float64_embeddings(self, self.torch_module(), prepared, texts,
                                  self.prepared_features, self.text_features)

    def embed_prepared(self, prepared: list) -> np.ndarray:
        """:meth:`embed_images` for inputs already through :meth:`prepare_image`."""
        return self._embed(prepared, self.prepared_features)

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        size = self.text_batch_size()
        if not self.trims_text or len(texts) <= size:
            return self._embed(texts, self.text_features, size)
        # a long call from outside the engine: batch by length too, answer in the given order
        order = text_order(texts)
        emb = self._embed([texts[k] for k in order], self.text_features, size)
        out = np.empty_like(emb)
        out[order] = emb
        return out

    def pair_scores(self, image_emb: np.ndarray, text_emb: np.ndarray) -> np.ndarray:
        if self.score == "cosine":
            return cosine_pair_scores(image_emb, text_emb)
        return logit_pair_scores(image_emb, text_emb, self.logit_scale, self.logit_bias,
                                 sigmoid=self.score == "sigmoid")

    def _embed(self, inputs: Sequence, features: Callable[[list, int], Any],
               size: int | None = None) -> np.ndarray:
        import torch

        inputs = list(inputs)
        size = max(1, int(self.batch_size)) if size is None else size
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


def text_order(texts: Sequence[str]) -> np.ndarray:
    """Positions of ``texts`` from shortest to longest (characters, a cheap stand-in for
    tokens; stable). Only the cost depends on it: each batch is trimmed to its own longest
    text, whatever the order."""
    return np.argsort(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)),
                      kind="stable")


def forward_batch_size(adapter: Any, batch_size: int, *, texts: bool = False) -> int:
    """Inputs per forward call in the engine: the run's ``batch_size``, capped by the
    adapter's own (so a batched adapter never splits the engine's batches again); for
    ``texts``, by its :meth:`~BatchedDualEncoder.text_batch_size`."""
    if not isinstance(adapter, BatchedDualEncoder):
        return batch_size
    own = adapter.text_batch_size() if texts else getattr(adapter, "batch_size", None)
    return min(batch_size, own) if own else batch_size
