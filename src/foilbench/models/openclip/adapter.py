"""open_clip dual encoders: ``openclip:ARCH:TAG``, ``openclip:ARCH:/weights.pt|.safetensors``,
``openclip:hf-hub:ORG/NAME`` and ``openclip:/path/config.json[:/path/weights]``.

Options after ``?``: ``score=cosine|logit`` (logit = the model's own exp(t)*cos (+ bias for
SigLIP-style models)) and ``batch=N``.

QuickGELU rules and what a spec names: :mod:`foilbench.models.openclip.spec`.

Image modes. open_clip's eval transform (``open_clip.transform.image_transform``) resizes and
crops the image *in its own mode* and only then calls ``convert("RGB")``
(``MaybeConvertMode``): a palette image is resized with nearest neighbour (PIL resizes "P"
images so), an RGBA image is resized with premultiplied alpha and then loses its alpha channel
(fully transparent areas become black, not white). 8-bit images therefore go to that transform
untouched: the engine decodes them in their own mode for this adapter
(``own_mode_images``, :func:`foilbench.scoring.encode.image_decoder`), and the sweep's shared
pixels are made the same way, so an open_clip model sees what ``transform(Image.open(path))``
gives, as in SugarCrepe's ``main_eval.py``. (CompoSET's ``VLMScorer`` calls
``Image.open(path).convert("RGB")`` first, which drops alpha before the resize; the two agree
on every RGB file.) Other adapters get :func:`foilbench.scoring.encode.open_rgb`'s RGB, with
transparency composited on white as transformers' ``convert_to_rgb`` does. The one
departure, a decision: 16-bit and float images (``I;16``, ``I``, ``F``) are scaled to 8 bits
first (:func:`foilbench.models.base.to_rgb`), because open_clip's plain ``convert`` clips every
value above 255 to white.

Speed (:mod:`foilbench.models.openclip.fast`): text batches run at their longest caption's
token length where that is exact (``trims_text``), and images are prepared (resize, crop,
tensor) apart from the forward pass so the engine can do it on prefetch threads; both give
the same embeddings as open_clip's own calls (within float rounding for the text, tested).
"""

from __future__ import annotations

import logging
import pickle  # only for its exception type: weights load with weights_only=True
import warnings
from contextlib import nullcontext
from pathlib import Path

from PIL import Image

from foilbench.errors import ModelError
from foilbench.limits import max_image_pixels
from foilbench.models.base import ModelInfo, to_rgb
from foilbench.models.batched import BatchedDualEncoder
from foilbench.models.device import select_device, select_dtype
from foilbench.models.fingerprint import (
    file_sha256,
    make_fingerprint,
    require_file,
    require_weights,
    version_change,
)
from foilbench.models.openclip.fast import (
    encode_text_trimmed,
    tensor_tail,
    to_normalised_tensor,
    trim_blocker,
)
from foilbench.models.openclip.importer import import_open_clip
from foilbench.models.openclip.no_init import random_fills_skipped, skips_init
from foilbench.models.openclip.pooled import encode_image_pooled, image_blocker
from foilbench.models.openclip.spec import (
    looks_like_path,
    needs_packages,
    quickgelu_for_tag,
    register_json_config,
    unknown_arch,
)
from foilbench.models.openclip.tokens import shared_tokenizer
from foilbench.models.spec_options import int_option, split_options
from foilbench.models.weight_errors import (
    is_weights_only_refusal,
    mismatch_error,
    safetensors_errors,
    weights_error,
)
from foilbench.versions import package_version

log = logging.getLogger(__name__)

TRIM_CHECK_ATOL = 1e-5  # trimmed vs full-length text features on the first batch
OPTIONS = {"score": ("cosine", "logit"), "batch": None}


def from_spec(rest: str, device: str = "auto", dtype: str = "float32") -> OpenClipAdapter:
    """Build an adapter from the text after ``openclip:`` (see the module docstring)."""
    body, opts = split_options(rest, OPTIONS)
    import_open_clip(*needs_packages(body))
    kwargs = {"score": opts.get("score", "cosine"), "batch_size": int_option(opts, "batch", 32)}
    if body.startswith("hf-hub:"):
        return OpenClipAdapter(f"openclip:{rest}", body, None, source={"hub": body[7:]},
                               device=device, dtype=dtype, **kwargs)
    first, _, second = body.partition(":")
    if first.endswith(".json"):
        config = require_file(first, "open_clip config")
        arch = register_json_config(config)
        weights = require_weights(second) if second else None
        if weights is None:
            warnings.warn(f"{config}: no weights given, the model is randomly initialised",
                          stacklevel=2)
        return OpenClipAdapter(f"openclip:{rest}", arch, weights, source={"config": str(config)},
                               device=device, dtype=dtype, **kwargs)
    if not first or not second:
        raise ModelError(f"openclip spec {body!r} must be ARCH:TAG, ARCH:/path/weights, "
                         "hf-hub:ORG/NAME or /path/config.json[:/path/weights]")
    if looks_like_path(second):
        weights = require_weights(second)
        return OpenClipAdapter(f"openclip:{rest}", first, weights, source={}, device=device,
                               dtype=dtype, **kwargs)
    arch, force_qg, warning = quickgelu_for_tag(first, second)
    if warning:
        warnings.warn(warning, stacklevel=2)
        log.warning(warning)
    return OpenClipAdapter(f"openclip:{rest}", arch, None, source={"tag": second},
                           force_quick_gelu=force_qg, device=device, dtype=dtype, **kwargs)


class OpenClipAdapter(BatchedDualEncoder):
    """A dual encoder over an open_clip model; embeddings are L2-normalised float32 (batching,
    normalisation and the score head: :class:`~foilbench.models.batched.BatchedDualEncoder`)."""

    # the engine hands this adapter images in their own mode (scoring/encode.image_decoder):
    # open_clip's transform converts to RGB itself, after resize and crop
    own_mode_images = True

    def __init__(self, spec: str, arch: str, weights: Path | None, source: dict,
                 device: str = "auto", dtype: str = "float32", score: str = "cosine",
                 batch_size: int = 32, force_quick_gelu: bool = False) -> None:
        import open_clip
        import torch

        self.device = select_device(device)
        self.torch_dtype = select_dtype(dtype, self.device)
        self.batch_size = batch_size
        self.score = score
        is_hub = "hub" in source
        if not is_hub and open_clip.get_model_config(arch) is None:
            raise ModelError(unknown_arch(arch))
        if weights is not None and "openai" in weights.name.lower() and not (
            force_quick_gelu or open_clip.get_model_config(arch).get("quick_gelu", False)
        ):
            msg = (f"{weights}: the file name suggests OpenAI weights (trained with QuickGELU) "
                   f"but {arch!r} uses GELU; name {arch}-quickgelu if that is so")
            warnings.warn(msg, stacklevel=3)
            log.warning(msg)
        pretrained = source.get("tag") or (str(weights) if weights else None)
        # a local file overwrites every weight: no random initialisation first (no_init.py)
        quick = random_fills_skipped() if skips_init(open_clip, arch, weights) else nullcontext()
        try:
            with quick:
                model, _, preprocess = open_clip.create_model_and_transforms(
                    arch, pretrained=pretrained, device=self.device,
                    force_quick_gelu=force_quick_gelu, weights_only=True)
        except (RuntimeError, KeyError, ValueError, OSError, pickle.UnpicklingError,
                AssertionError, *safetensors_errors()) as e:
            if weights is not None and (is_weights_only_refusal(e)
                                        or isinstance(e, safetensors_errors())):
                raise weights_error(weights, e, f"weights for {arch!r}") from None
            misfit = mismatch_error(weights or source.get("tag") or arch, arch, e,
                                    source.get("config"))
            if misfit is not None:
                raise misfit from None
            where = f" from {weights}" if weights else ""
            raise ModelError(f"open_clip could not build {arch!r}{where}: {e}") from None
        self.model = model.to(self.torch_dtype).eval()
        self.preprocess = preprocess
        # one tokenizer per architecture and config in the process, its captions encoded
        # once for all models with this BPE (models/openclip/tokens.py)
        self.tokenizer = shared_tokenizer(arch)
        with torch.no_grad():
            self.logit_scale = float(model.logit_scale.exp().item())
            bias = getattr(model, "logit_bias", None)
            self.logit_bias = float(bias.item()) if bias is not None else 0.0
        self.has_bias = bias is not None
        self.trim_blocker = trim_blocker(model)
        self.trims_text = self.trim_blocker is None
        self._trim_checked = False
        # the last image layer at the class token only (models/openclip/pooled.py)
        self.pool_blocker = image_blocker(model.visual)
        self._pool_checked = False
        self._tail = tensor_tail(preprocess)
        quick = any(type(m).__name__ == "QuickGELU" for m in model.modules())
        weights = weights or _downloaded_weights(arch, source)
        parts = {
            "arch": arch,
            "activation": "quick_gelu" if quick else "gelu",
            "weights_sha256": file_sha256(weights) if weights else None,
            "hub_id": source.get("hub"),
            "tag": source.get("tag"),
            "tag_source": (open_clip.get_pretrained_cfg(arch, source["tag"]).get("hf_hub")
                           or open_clip.get_pretrained_cfg(arch, source["tag"]).get("url"))
            if "tag" in source else None,
            "preprocess": repr(preprocess),
            # images reach the transform in their own mode (palette, RGBA: see the module
            # docstring); before this entry the engine composited them on white first, so
            # embeddings cached under the old fingerprint are not reused
            "image_input": IMAGE_INPUT,
            "context_length": getattr(self.tokenizer, "context_length", None),
            "dtype": dtype,
            "score": self._score_kind(),
            # open_clip's own code (transforms, towers) can change the embeddings of the same
            # weights: an upgrade keys the cache anew, once, and says so
            "open_clip": package_version("open_clip_torch"),
        }
        changed = version_change("openclip", parts, "open_clip")
        if changed is not None:
            msg = (f"{spec}: open_clip changed from {changed[0]} to {changed[1]} since this "
                   "model's embeddings were last computed; they are computed again once")
            warnings.warn(msg, stacklevel=3)
            log.warning(msg)
        self.dtype_name = dtype
        self._spec, self._parts = spec, parts
        self._info = ModelInfo(spec=spec, fingerprint=make_fingerprint("openclip", parts),
                               family=self.family, score_kind=self._score_kind(), extras=parts)

    def fingerprint_for(self, dtype: str) -> str:
        """The fingerprint this model has once :meth:`set_dtype` ``(dtype)`` ran."""
        return make_fingerprint("openclip", {**self._parts, "dtype": dtype})

    def set_dtype(self, dtype: str) -> None:
        """Cast the model to ``dtype`` (a :data:`~foilbench.models.device.DTYPES` name); the
        fingerprint follows, so embeddings of two dtypes never mix in the cache
        (:mod:`foilbench.scoring.precision`)."""
        self.torch_dtype = select_dtype(dtype, self.device)
        self.model = self.model.to(self.torch_dtype)
        self.dtype_name = dtype
        self._parts = {**self._parts, "dtype": dtype}
        self._info = ModelInfo(spec=self._spec, fingerprint=self.fingerprint_for(dtype),
                               family=self.family, score_kind=self._score_kind(),
                               extras=self._parts)

    def _score_kind(self) -> str:
        return "cosine" if self.score == "cosine" else "logit"

    def torch_module(self):
        """The open_clip model (its feature calls follow ``device``/``torch_dtype``)."""
        return self.model

    @property
    def info(self) -> ModelInfo:
        return self._info

    def prepare_image(self, image: Image.Image, index: int):
        """The pixel tensor open_clip's transform would give (bit-identical, tested)."""
        image = _named_rgb(image, index)
        if self._tail is not None:
            head, mean, std = self._tail
            small = head(image)
            if getattr(small, "mode", None) == "RGB" and len(mean) in (1, 3) \
                    and len(std) in (1, 3):
                return to_normalised_tensor(small, mean, std)
        return self.preprocess(image)

    def image_preparer(self):
        """The shareable split of :meth:`prepare_image` (:mod:`foilbench.scoring.prepared`):
        uint8 pixels after resize/crop/convert, keyed by their fingerprint, and the tensor
        tail; None when the transform does not end in ToTensor + Normalize or a step cannot
        be fingerprinted."""
        if self._tail is None:
            return None
        from foilbench.scoring.prepared import Preparer, head_fingerprint

        head, mean, std = self._tail
        if len(mean) not in (1, 3) or len(std) not in (1, 3):
            return None
        fp = head_fingerprint(list(self.preprocess.transforms)[:-2], source=IMAGE_INPUT)
        if fp is None:
            return None
        return Preparer(fp, lambda image: _rgb_pixels(head(_named_rgb(image, 0))),
                        lambda pixels: to_normalised_tensor(pixels, mean, std))

    def prepared_features(self, prepared: list, offset: int):
        import torch

        pixels = torch.stack(prepared)
        if str(self.device).startswith("cuda"):  # page-locked: the copy overlaps the GPU
            pixels = pixels.pin_memory().to(self.device, non_blocking=True)
        pixels = pixels.to(self.device, self.torch_dtype)
        if self.pool_blocker is not None:
            return self.model.encode_image(pixels)
        feats = encode_image_pooled(self.model, pixels)
        if not self._pool_checked and not self._pool_agrees(pixels, feats):
            return self.model.encode_image(pixels)
        return feats

    def _pool_agrees(self, pixels, pooled) -> bool:
        """Compare with open_clip's own call once; on a difference stop pooling early."""
        self._pool_checked = True
        self.pool_blocker = self._disagreement(
            self.model.encode_image(pixels[:4]), pooled[:4],
            "class-token-only and full last-layer image features differed",
            "encoding images with open_clip's full forward")
        return self.pool_blocker is None

    def image_features(self, images: list[Image.Image], offset: int):
        return self.prepared_features(
            [self.prepare_image(im, offset + k) for k, im in enumerate(images)], offset)

    def text_features(self, texts: list[str], offset: int):
        tokens = self.tokenizer(list(texts)).to(self.device)
        if not self.trims_text:
            return self.model.encode_text(tokens)
        feats = encode_text_trimmed(self.model, tokens)
        if not self._trim_checked and not self._trim_agrees(tokens, feats):
            return self.model.encode_text(tokens)
        return feats

    def _trim_agrees(self, tokens, trimmed) -> bool:
        """Compare with open_clip's full-length call once; on a difference stop trimming."""
        self._trim_checked = True
        self.trim_blocker = self._disagreement(
            self.model.encode_text(tokens[:4]), trimmed[:4],
            "trimmed and full-length text features differed", "encoding texts at full length")
        self.trims_text = self.trim_blocker is None
        return self.trims_text

    def _disagreement(self, full, fast, what: str, fallback: str) -> str | None:
        """None when a shortcut's first rows agree with open_clip's own call; else ``what``,
        logged with the ``fallback`` the adapter takes from then on."""
        if _features_agree(full, fast):
            return None
        log.warning("%s: %s; %s", self._info.spec, what, fallback)
        return what


def _features_agree(full, fast) -> bool:
    """The shortcut's features equal open_clip's own, once L2-normalised, within
    :data:`TRIM_CHECK_ATOL`."""
    import torch

    a = torch.nn.functional.normalize(full.float(), dim=-1)
    b = torch.nn.functional.normalize(fast.float(), dim=-1)
    return bool(torch.allclose(a, b, atol=TRIM_CHECK_ATOL, rtol=0))


def _downloaded_weights(arch: str, source: dict) -> Path | None:
    """The local file open_clip just downloaded for a hub tag or hf-hub id (already cached,
    so this makes no request), so hub models are fingerprinted by their weights' hash too."""
    from open_clip import pretrained as ocp

    try:
        if "tag" in source:
            path = ocp.download_pretrained(ocp.get_pretrained_cfg(arch, source["tag"]))
        elif "hub" in source:
            path = ocp.download_pretrained_from_hf(source["hub"])
        else:
            return None
    except Exception:  # noqa: BLE001 - any failure leaves the id-based fingerprint
        return None
    return Path(path) if path and Path(path).is_file() else None


_WIDE_MODES = ("I;16", "I;16B", "I;16L", "I", "F")
IMAGE_INPUT = "own-mode"  # what the engine decodes for open_clip (fingerprinted)


def _rgb_pixels(small):
    """uint8 (H, W, 3) of a transformed 8-bit RGB PIL image, else None (not shareable)."""
    import numpy as np

    if getattr(small, "mode", None) != "RGB":
        return None
    return np.asarray(small, dtype=np.uint8)


def _named_rgb(image: Image.Image, index: int) -> Image.Image:
    """The image as open_clip's transform should receive it (see the module docstring): 8-bit
    modes untouched (the transform converts after resize and crop), 16-bit/float scaled to
    8-bit RGB; images over the pixel limit are refused by name."""
    name = getattr(image, "filename", "") or f"image #{index}"
    if image.mode in _WIDE_MODES or image.width * image.height > max_image_pixels():
        return to_rgb(image, name=name)
    return image

