"""Build an open_clip model from a local weights file without filling it with random numbers
first.

open_clip builds every model with random weights and then copies the checkpoint over them:
for the 2-layer tiny model that initialisation (``normal_`` over the 49,408-row token
embedding, twice) was about 0.5 s of a 0.8 s build, all of it overwritten. Within
:func:`random_fills_skipped` the random initialisers (``torch.nn.init``'s and the tensor
methods ``normal_`` / ``uniform_``) return their tensor untouched; everything else, the
architecture, the transforms, the non-persistent ``attn_mask`` buffers (``fill_`` and
``triu_``, not random) and the loading itself, is open_clip's own
``create_model_and_transforms(pretrained=FILE)``, so its state-dict fix-ups and its errors
for a file that does not fit are unchanged.

Why the skipped values never matter: open_clip loads a full checkpoint with
``load_state_dict(strict=True)``, which fails unless the file holds every parameter and
persistent buffer, and each is then copied over. That holds where :func:`skips_init` says
yes: a local ``.safetensors`` / ``.pt`` / ``.pth`` / ``.bin`` file (not big_vision ``.npz``
weights, which open_clip loads key by key without that check) and an architecture with
open_clip's own towers (no timm vision tower, no Hugging Face text tower, no CoCa decoder,
whose libraries have initialisers and buffers of their own). Hub tags and ``hf-hub:`` models
are built as open_clip builds them.

The skip is a torch function mode, which PyTorch keeps per thread: other threads initialise
as usual. torch's global random generator is not advanced by the skipped calls (nothing in an
evaluation draws from it).

Building on the meta device and assigning the file's tensors (``load_state_dict(assign=True)``)
was tried first and dropped: open_clip's constructors do arithmetic on the new tensors
(``scale * torch.randn(width)``), which on the meta device runs PyTorch's Python reference
kernels, whose wrapper imports ``torch._dynamo`` (the compiler that
:mod:`foilbench.models.dynamo_deferral` keeps out of a run): 1.9 s more, not 0.5 s less.
"""

from __future__ import annotations

import functools
from pathlib import Path

from foilbench.models.openclip.importer import config_needs_timm, config_needs_transformers

LOADED_STRICTLY = (".safetensors", ".pt", ".pth", ".bin")


def skips_init(open_clip, arch: str, weights: Path | None) -> bool:
    """Whether ``arch`` built from ``weights`` may skip its random initialisation (see the
    module docstring)."""
    if weights is None or Path(weights).suffix.lower() not in LOADED_STRICTLY:
        return False
    cfg = open_clip.get_model_config(arch)
    return not (config_needs_transformers(cfg) or config_needs_timm(cfg))


def random_fills_skipped():
    """A context manager within which (this thread only) random initialisers leave their
    tensor as it is; its ``skipped`` counts the calls it skipped."""
    return _mode_class()()


@functools.cache
def _mode_class():
    import torch
    from torch.overrides import TorchFunctionMode

    init = torch.nn.init
    fills = frozenset((
        torch.Tensor.normal_, torch.Tensor.uniform_, init.normal_, init.uniform_,
        init.trunc_normal_, init.kaiming_uniform_, init.kaiming_normal_, init.xavier_uniform_,
        init.xavier_normal_, init.orthogonal_, init.sparse_))

    class RandomFillsSkipped(TorchFunctionMode):
        def __init__(self) -> None:
            super().__init__()
            self.skipped = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in fills:
                self.skipped += 1
                return args[0] if args else kwargs["tensor"]
            return func(*args, **kwargs)

    return RandomFillsSkipped
