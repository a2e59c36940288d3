"""Build an open_clip model from a local safetensors file without its random initialisation.

open_clip builds every model with random weights and then copies the checkpoint over them:
for the 2-layer tiny model that initialisation (``normal_`` over the 49,408-row token
embedding, twice) was about 0.55 s of a 0.87 s build, all of it thrown away. Here the model
is built on PyTorch's meta device (shapes only, no memory, no initialisation) by open_clip's
own ``create_model_and_transforms`` (so the architecture, the QuickGELU choice and the
transforms are open_clip's), and the file's tensors are then put in place with
``load_state_dict(strict=True, assign=True)``, which open_clip 3.3's ``load_checkpoint``
cannot do (it does not pass ``assign``).

The path is taken only where it gives the same model as open_clip's loader, else
:func:`build_without_init` returns None and the caller uses open_clip's own loader (which also
gives today's errors for a file that does not fit):

- a ``.safetensors`` file and an architecture with open_clip's own towers (no timm vision
  tower, no Hugging Face text tower, no CoCa decoder);
- the file's keys (after open_clip's own ``load_state_dict``: a ``state_dict`` wrapper and a
  ``module.`` prefix are removed) equal the model's and every shape matches. Every fix-up in
  open_clip's ``load_checkpoint`` (MobileCLIP conversion, the old text layout, the
  ``logit_scale`` / ``logit_bias`` shapes and defaults, ``position_ids``, resizing the image and
  text position embeddings) is for a file whose keys or shapes differ from the model's, so
  none would have changed this state dict;
- each tensor is cast to the dtype the model holds (``load_state_dict`` without ``assign``
  copies into the model's tensors, which casts the same way);
- the non-persistent ``attn_mask`` buffers (not in any weights file, so left on the meta
  device) are made again as the constructors make them: the text tower's own
  ``build_causal_mask`` / ``build_attention_mask``, and for ``CLIP``, which keeps a copy of
  its text tower's mask, the same causal mask (``-inf`` above the diagonal, 0 elsewhere) of
  its shape; any other tensor still on the meta device sends the build back to open_clip's
  loader.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path

from foilbench.models.openclip.importer import config_needs_timm, config_needs_transformers

log = logging.getLogger(__name__)

MASK_BUILDERS = ("build_causal_mask", "build_attention_mask")


def build_without_init(open_clip, arch: str, weights: Path, device, force_quick_gelu: bool):
    """``(model, preprocess)`` with every tensor from ``weights``, on ``device``; None where
    this path does not apply (see the module docstring), so open_clip's loader builds it."""
    import torch

    cfg = open_clip.get_model_config(arch)
    if Path(weights).suffix != ".safetensors" or config_needs_transformers(cfg) \
            or config_needs_timm(cfg):
        return None
    with _without_open_clip_init_warning(), torch.device("meta"):
        model, _, preprocess = open_clip.create_model_and_transforms(
            arch, pretrained=None, device="meta", force_quick_gelu=force_quick_gelu,
            weights_only=True)
    reason = _load_assigned(open_clip, model, weights)
    if reason is None:
        reason = _rebuild_masks(model) or _left_on_meta(model)
    if reason is not None:
        log.debug("%s: open_clip's own loader builds %s (%s)", weights, arch, reason)
        return None
    return model.to(device), preprocess


def _load_assigned(open_clip, model, weights: Path) -> str | None:
    """Put the file's tensors in the model; the reason it cannot, or None."""
    from open_clip.factory import load_state_dict

    from foilbench.models.weight_errors import safetensors_errors

    try:
        state = load_state_dict(str(weights), device="cpu", weights_only=True)
    except (OSError, ValueError, RuntimeError, *safetensors_errors()) as e:
        return f"the file did not read: {e}"
    own = model.state_dict()
    if set(state) != set(own):
        return "its keys differ from the model's"
    for key, tensor in own.items():
        if state[key].shape != tensor.shape:
            return f"{key} has another shape"
    state = {key: value.to(own[key].dtype) for key, value in state.items()}
    model.load_state_dict(state, strict=True, assign=True)
    return None


def _rebuild_masks(model) -> str | None:
    """Make the non-persistent ``attn_mask`` buffers again (see the module docstring)."""
    for name, module in model.named_modules():
        for buffer in sorted(module._non_persistent_buffers_set):
            old = module._buffers.get(buffer)
            if old is None or not old.is_meta:
                continue
            if buffer != "attn_mask":
                return f"no rule makes {name}.{buffer} again"
            builder = next((getattr(module, b) for b in MASK_BUILDERS
                            if hasattr(module, b)), None)
            mask = builder() if builder is not None else causal_mask(old.shape)
            if mask is None or mask.shape != old.shape:
                return f"{name}.{buffer} could not be made again"
            module._buffers[buffer] = mask.to(old.dtype)
    return None


def causal_mask(shape):
    """The additive causal mask open_clip's text towers build: ``-inf`` above the diagonal."""
    import torch

    if len(shape) != 2 or shape[0] != shape[1]:
        return None
    mask = torch.empty(shape[0], shape[1])
    mask.fill_(float("-inf"))
    return mask.triu_(1)


def _left_on_meta(model) -> str | None:
    """The first tensor of the model still on the meta device, parameters, buffers and plain
    tensor attributes alike."""
    import torch

    for name, module in model.named_modules():
        tensors = {**module._parameters, **module._buffers, **{
            k: v for k, v in vars(module).items() if isinstance(v, torch.Tensor)}}
        for key, tensor in tensors.items():
            if tensor is not None and tensor.is_meta:
                return f"{name}.{key} was left on the meta device"
    return None


class _DropInitWarning(logging.Filter):
    """open_clip logs that a model built without weights is randomly initialised; here the
    weights are put in right after, so the line would be false."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (record.module == "factory" and (
            message.startswith("No pretrained weights loaded")
            or message.endswith("initialized partially.")))


@contextmanager
def _without_open_clip_init_warning():
    root = logging.getLogger()
    drop = _DropInitWarning()
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)
