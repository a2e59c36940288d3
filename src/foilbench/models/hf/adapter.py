"""Hugging Face dual encoders (CLIP, SigLIP, SigLIP 2): ``hf:ORG/NAME`` or ``hf:/local/dir``.

Options after ``?``: ``score=cosine|logit|sigmoid``, ``batch=N`` and ``revision=REV`` (a hub
branch, tag or commit, also written ``hf:ORG/NAME@REV``; passed to every ``from_pretrained``).

Default score, the model's own: SigLIP-family models (those with a ``logit_bias``) are
scored by sigmoid(exp(t) * cos + b), the probability the model assigns to "this pair
matches" (Zhai et al. 2023, Eq. 1); CLIP-family models by cosine. The scale and bias are
read once from the model and kept, so ``pair_scores`` works on cached embeddings.

Text padding follows the model's training: SigLIP pads to the tokenizer's max length (its
text tower pools the last position), CLIP pads to the longest text in the batch. Padding to
the longest text is exact for CLIP (a causal tower, pooled at the end-of-text token, with the
padding masked), so a CLIP adapter declares ``trims_text`` and the engine batches texts of
similar length together; SigLIP keeps the full length (tested against max-length padding).
"""

from __future__ import annotations

from PIL import Image

from foilbench.errors import ModelError
from foilbench.models.base import ModelInfo, to_rgb
from foilbench.models.batched import BatchedDualEncoder
from foilbench.models.device import select_device, select_dtype
from foilbench.models.fingerprint import make_fingerprint
from foilbench.models.hf.loading import (
    LOAD_ERRORS,
    load_error,
    resolve_source,
    revision_kwargs,
    source_identity,
    split_revision,
)
from foilbench.models.spec_options import int_option, split_options

OPTIONS = {"score": ("cosine", "logit", "sigmoid"), "batch": None, "revision": None}


def from_spec(rest: str, device: str = "auto", dtype: str = "float32") -> HFDualEncoder:
    body, opts = split_options(rest, OPTIONS)
    body, revision = split_revision(body, opts)
    return HFDualEncoder(f"hf:{rest}", body, device=device, dtype=dtype,
                         score=opts.get("score"), batch_size=int_option(opts, "batch", 32),
                         revision=revision)


def _features(output):
    """transformers 4 returns a tensor, 5 an output object whose pooler_output is projected."""
    return output if hasattr(output, "dim") else output.pooler_output


class HFDualEncoder(BatchedDualEncoder):
    """A transformers dual encoder; batching, normalisation and the score head come from
    :class:`~foilbench.models.batched.BatchedDualEncoder`."""

    def __init__(self, spec: str, target: str, device: str = "auto", dtype: str = "float32",
                 score: str | None = None, batch_size: int = 32,
                 revision: str | None = None) -> None:
        import torch
        from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

        source, is_local = resolve_source(target)
        self.device = select_device(device)
        self.torch_dtype = select_dtype(dtype, self.device)
        self.batch_size = batch_size
        try:
            rev = revision_kwargs(revision)
            model = AutoModel.from_pretrained(source, dtype=self.torch_dtype, **rev)
            self.tokenizer = AutoTokenizer.from_pretrained(source, **rev)
            self.image_processor = AutoImageProcessor.from_pretrained(source, **rev)
        except (OSError, ValueError, *LOAD_ERRORS) as e:
            raise load_error(target, e) from None
        if not (hasattr(model, "get_image_features") and hasattr(model, "get_text_features")):
            raise ModelError(f"{target}: {type(model).__name__} is not a dual encoder "
                             "(no get_image_features/get_text_features); for generative models "
                             "use hf-vlm:")
        self.model = model.to(self.device).eval()
        with torch.no_grad():
            self.logit_scale = float(model.logit_scale.exp().item())
            bias = getattr(model, "logit_bias", None)
            self.logit_bias = float(bias.item()) if bias is not None else 0.0
        self.is_sigmoid_model = bias is not None
        self.score = score or ("sigmoid" if self.is_sigmoid_model else "cosine")
        self.text_padding = "max_length" if self.is_sigmoid_model else "longest"
        self.trims_text = self.text_padding == "longest"
        parts = {
            **source_identity(source, is_local, model.config, revision),
            "model_class": type(model).__name__,
            "image_processor": self.image_processor.to_dict(),
            "tokenizer": type(self.tokenizer).__name__,
            "text_padding": self.text_padding,
            "dtype": dtype,
            "score": self.score,
        }
        self._info = ModelInfo(spec=spec, fingerprint=make_fingerprint("hf", parts),
                               family=self.family, score_kind=self.score,
                               extras={k: parts[k] for k in parts if k != "image_processor"})

    @property
    def info(self) -> ModelInfo:
        return self._info

    def torch_module(self):
        """The transformers model (its feature calls follow ``device``/``torch_dtype``)."""
        return self.model

    def image_preparer(self):
        """The shareable split of :meth:`prepare_image` (:mod:`foilbench.models.hf.prepare`)."""
        from foilbench.models.hf.prepare import hf_preparer
        from foilbench.scoring.prepared import Preparer

        prep = hf_preparer(self.image_processor)
        if prep is None:
            return None
        # shared images arrive decoded in their own mode: the same RGB as prepare_image's
        return Preparer(prep.fingerprint, lambda image: prep.pixels(to_rgb(
            image, name=getattr(image, "filename", "") or "image")), prep.finish)

    def prepare_image(self, image: Image.Image, index: int):
        """One image through the processor (on a prefetch thread) where the processor treats
        images one by one; else the image, for the batch call."""
        from foilbench.models.hf.prepare import one_image, splittable

        if not splittable(self.image_processor):
            return image
        return one_image(self.image_processor,
                         to_rgb(image, name=getattr(image, "filename", "") or f"image #{index}"))

    def prepared_features(self, prepared: list, offset: int):
        import torch

        if not prepared or not all(isinstance(x, torch.Tensor) for x in prepared):
            return self.image_features(prepared, offset)
        pixels = torch.stack(prepared).to(self.device, self.torch_dtype)
        return _features(self.model.get_image_features(pixel_values=pixels))

    def image_features(self, images: list[Image.Image], offset: int):
        chunk = [to_rgb(im, name=getattr(im, "filename", "") or f"image #{offset + k}")
                 for k, im in enumerate(images)]
        enc = self.image_processor(images=chunk, return_tensors="pt")
        # every processor output goes in: SigLIP 2 adds pixel_attention_mask, spatial_shapes
        kwargs = {k: v.to(self.device, self.torch_dtype) if v.is_floating_point()
                  else v.to(self.device) for k, v in enc.items()}
        return _features(self.model.get_image_features(**kwargs))

    def text_features(self, texts: list[str], offset: int):
        enc = self.tokenizer(list(texts), padding=self.text_padding, truncation=True,
                             return_tensors="pt")
        kwargs = {"input_ids": enc["input_ids"].to(self.device)}
        if "attention_mask" in enc and not self.is_sigmoid_model:
            kwargs["attention_mask"] = enc["attention_mask"].to(self.device)
        return _features(self.model.get_text_features(**kwargs))
