"""An open_clip model held in memory (a training loop's checkpoint) as a foilbench model.

``foilbench.from_open_clip(model, preprocess, tokenizer, name="my-clip")`` gives an adapter
that scores exactly as the ``openclip:`` spec path does on the same weights (the same
methods: :class:`~foilbench.models.openclip.adapter.OpenClipAdapter`'s image modes, text
trimming, class-token pooling and score heads; equal scores, tested), without building,
casting or moving the model: it runs on the device and in the dtype the model is in.

What differs from the spec path, and why:

- Fingerprint: the weights' state_dict hash taken at each evaluation
  (:mod:`foilbench.models.live`), with the transform, the tokenizer's ids for fixed probe
  texts, the activation, dtype and score head; scheme ``openclip-live``.
- QuickGELU: the model is already built, so its activation cannot be chosen here. It is
  recorded (fingerprint and extras), and ``quick_gelu=True/False`` (what the weights were
  trained with, when the caller knows) is checked against it: a mismatch is an error
  naming how to build the model (``force_quick_gelu=True`` or the ``-quickgelu``
  architecture), the mistake open_clip models built by hand most often make.
- ``logit_scale`` / ``logit_bias`` are read from the model at each use (they train too).
- Precision switching (``precision="bf16"``) is refused: it would cast the caller's model.
"""

from __future__ import annotations

from typing import Any

from foilbench.errors import ModelError
from foilbench.models.base import ModelInfo
from foilbench.models.fingerprint import make_fingerprint
from foilbench.models.live import (
    EvalMode,
    LiveNetwork,
    display_name,
    module_of,
    probe_sha256,
    stable_repr,
    weights_sha256,
)
from foilbench.models.openclip.adapter import IMAGE_INPUT, OpenClipAdapter
from foilbench.models.openclip.fast import tensor_tail, trim_blocker
from foilbench.models.openclip.pooled import image_blocker

SCORES = ("cosine", "logit")


def from_open_clip(model: Any, preprocess: Any, tokenizer: Any, *, name: str | None = None,
                   score: str = "cosine", batch_size: int = 32,
                   quick_gelu: bool | None = None) -> LiveOpenClip:
    """Wrap a live open_clip model (``open_clip.create_model_and_transforms`` gives the
    model and its eval ``preprocess``; ``open_clip.get_tokenizer(arch)`` the tokenizer).

    ``name`` labels results (default ``openclip-live:<ClassName>``); ``score`` is
    ``cosine`` or ``logit``; ``quick_gelu``: the activation the weights were trained with,
    checked against the model's when given (module docstring).
    """
    return LiveOpenClip(model, preprocess, tokenizer, name=name, score=score,
                        batch_size=batch_size, quick_gelu=quick_gelu)


class LiveOpenClip(LiveNetwork, OpenClipAdapter):
    """:class:`OpenClipAdapter` over a model the caller owns (module docstring)."""

    set_dtype = None  # type: ignore[assignment]  # precision passes would cast the caller's model

    def __init__(self, model: Any, preprocess: Any, tokenizer: Any, *, name: str | None,
                 score: str = "cosine", batch_size: int = 32,
                 quick_gelu: bool | None = None) -> None:
        module = module_of(model, "from_open_clip")
        for attr in ("encode_image", "encode_text", "visual", "logit_scale"):
            if not hasattr(module, attr):
                raise ModelError(f"from_open_clip: {type(module).__name__} has no {attr}; "
                                 "pass an open_clip CLIP model (for transformers models use "
                                 "from_hf)")
        if not callable(preprocess) or not callable(tokenizer):
            raise ModelError("from_open_clip: preprocess and tokenizer must be callables "
                             "(open_clip.create_model_and_transforms and get_tokenizer give "
                             "them)")
        if score not in SCORES:
            raise ModelError(f"from_open_clip: score={score!r}; choose cosine or logit")
        self._hold(module, batch_size, "from_open_clip")
        self.preprocess, self.tokenizer, self.score = preprocess, tokenizer, score
        self.activation = "quick_gelu" if any(type(m).__name__ == "QuickGELU"
                                              for m in module.modules()) else "gelu"
        if quick_gelu is not None and quick_gelu != (self.activation == "quick_gelu"):
            raise ModelError(
                f"from_open_clip: the weights were trained with "
                f"{'QuickGELU' if quick_gelu else 'GELU'} but the model uses "
                f"{'GELU' if quick_gelu else 'QuickGELU'}; build it with "
                f"force_quick_gelu={bool(quick_gelu)} (or the "
                f"{'-quickgelu' if quick_gelu else 'plain'} architecture) and load the "
                "weights again")
        self.has_bias = getattr(module, "logit_bias", None) is not None
        self.trim_blocker = trim_blocker(module)
        self.trims_text = self.trim_blocker is None
        self._trim_checked = False
        self.pool_blocker = image_blocker(module.visual)
        self._pool_checked = False
        self._tail = tensor_tail(preprocess)
        self._spec = display_name(name, f"openclip-live:{type(module).__name__}")
        self._mode = EvalMode(module)
        self._static = {
            "model_class": type(module).__name__,
            "activation": self.activation,
            "preprocess": stable_repr(preprocess),
            "image_input": IMAGE_INPUT,
            "tokenizer": type(tokenizer).__name__,
            "tokenizer_ids_sha256": probe_sha256(tokenizer),
            "context_length": getattr(tokenizer, "context_length", None),
            "dtype": self.dtype_name,
            "score": self._score_kind(),
        }
        self.refresh_fingerprint()

    def refresh_fingerprint(self) -> None:
        """Hash the weights as they are now (:mod:`foilbench.models.live`)."""
        self._parts = {**self._static, "weights_sha256": weights_sha256(self.model)}
        self._info = ModelInfo(spec=self._spec,
                               fingerprint=make_fingerprint("openclip-live", self._parts),
                               family=self.family, score_kind=self._score_kind(),
                               extras={**self._parts, "adapter": "from_open_clip"})
