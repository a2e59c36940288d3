"""A transformers dual encoder held in memory (CLIP, SigLIP) as a foilbench model.

``foilbench.from_hf(model, processor, name="my-clip")`` gives an adapter that scores as the
``hf:`` spec path does on the same weights (the same methods:
:class:`~foilbench.models.hf.adapter.HFDualEncoder`'s RGB conversion, processor split, text
padding and default score head; equal scores, tested), on the device and in the dtype the
model is in. ``processor`` is a ``CLIPProcessor``-like object with ``image_processor`` and
``tokenizer`` (or give ``image_processor=`` and ``tokenizer=`` instead).

Fingerprint, evaluation mode and the refused precision switch: as for open_clip
(:mod:`foilbench.models.live_openclip`, :mod:`foilbench.models.live`); scheme ``hf-live``.
"""

from __future__ import annotations

from typing import Any

from foilbench.errors import ModelError
from foilbench.models.base import ModelInfo
from foilbench.models.fingerprint import make_fingerprint
from foilbench.models.hf.adapter import HFDualEncoder
from foilbench.models.live import (
    EvalMode,
    LiveNetwork,
    display_name,
    module_of,
    probe_sha256,
    weights_sha256,
)

SCORES = ("cosine", "logit", "sigmoid")


def from_hf(model: Any, processor: Any = None, *, name: str | None = None,
            image_processor: Any = None, tokenizer: Any = None, score: str | None = None,
            batch_size: int = 32) -> LiveHF:
    """Wrap a live transformers dual encoder (see the module docstring). ``score``: the
    model's own by default (sigmoid for SigLIP-style models with a ``logit_bias``, else
    cosine)."""
    image_processor = image_processor or getattr(processor, "image_processor", None)
    tokenizer = tokenizer or getattr(processor, "tokenizer", None)
    if image_processor is None or tokenizer is None:
        raise ModelError("from_hf needs a processor with image_processor and tokenizer (a "
                         "CLIPProcessor), or image_processor= and tokenizer=")
    return LiveHF(model, image_processor, tokenizer, name=name, score=score,
                  batch_size=batch_size)


class LiveHF(LiveNetwork, HFDualEncoder):
    """:class:`HFDualEncoder` over a model the caller owns."""

    set_dtype = None  # precision passes would cast the caller's model

    def __init__(self, model: Any, image_processor: Any, tokenizer: Any, *,
                 name: str | None, score: str | None = None, batch_size: int = 32) -> None:
        module = module_of(model, "from_hf")
        if not (hasattr(module, "get_image_features") and hasattr(module, "get_text_features")):
            raise ModelError(f"from_hf: {type(module).__name__} is not a dual encoder (no "
                             "get_image_features/get_text_features)")
        if score is not None and score not in SCORES:
            raise ModelError(f"from_hf: score={score!r}; choose one of {', '.join(SCORES)}")
        self._hold(module, batch_size, "from_hf")
        self.image_processor, self.tokenizer = image_processor, tokenizer
        self.is_sigmoid_model = getattr(module, "logit_bias", None) is not None
        self.score = score or ("sigmoid" if self.is_sigmoid_model else "cosine")
        self.text_padding = "max_length" if self.is_sigmoid_model else "longest"
        self.trims_text = self.text_padding == "longest"
        self._spec = display_name(name, f"hf-live:{type(module).__name__}")
        self._mode = EvalMode(module)
        self._static = {
            "model_class": type(module).__name__,
            "image_processor": image_processor.to_dict()
            if hasattr(image_processor, "to_dict") else repr(image_processor),
            "tokenizer": type(tokenizer).__name__,
            "tokenizer_ids_sha256": probe_sha256(
                lambda t: tokenizer(t, padding=self.text_padding, truncation=True)),
            "text_padding": self.text_padding,
            "dtype": self.dtype_name,
            "score": self.score,
        }
        self.refresh_fingerprint()

    def refresh_fingerprint(self) -> None:
        """Hash the weights as they are now (:mod:`foilbench.models.live`)."""
        parts = {**self._static, "weights_sha256": weights_sha256(self.model)}
        self._info = ModelInfo(spec=self._spec, fingerprint=make_fingerprint("hf-live", parts),
                               family=self.family, score_kind=self.score,
                               extras={**{k: v for k, v in parts.items()
                                          if k != "image_processor"}, "adapter": "from_hf"})
