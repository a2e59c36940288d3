"""What every adapter over a model held in memory shares: its fingerprint, and evaluating it
without changing it.

A model in a training loop changes between two evaluations while its Python object stays
the same, so its identity cannot be a file hash or a hub id (:mod:`.fingerprint`). Chosen
here: the sha256 of its ``state_dict`` (every parameter and persistent buffer: name, dtype,
shape and bytes, in name order), taken afresh at the start of each evaluation
(:func:`refresh_fingerprint`, called by :func:`foilbench.evaluation.evaluate_run` and the
sweep's resume check). Checkpoints of step 100 and step 200 therefore never share embedding
cache entries or a resumed run, and two processes holding the same weights do. Not chosen:
torch's in-place version counters, which are cheaper but miss writes through ``.data`` (as
hand-written SGD and some optimisers do). The cost is one pass over the weights per
evaluation (about as long as reading them once from disk).

Evaluation mode (:func:`evaluating`): the network is switched to ``eval()`` for each call
into it and every submodule's own ``training`` flag is restored afterwards (a frozen tower
the caller keeps in eval mode stays so), under ``torch.no_grad``. Not ``inference_mode``:
a tensor a module caches while in it (a causal mask, a position table) would make the
caller's next training step fail in backward.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from collections.abc import Iterator
from typing import Any

from foilbench.errors import ModelError

NAME_LIMIT = 200
# fixed texts whose token ids stand for the tokenizer in a fingerprint
PROBE_TEXTS = ("a photo of a red cube left of a blue sphere.",
               "Two dogs; the SMALLER one is on the sofa (not the cat)!", "x" * 300, "")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def display_name(name: Any, default: str) -> str:
    """The name a live model is shown and stored under: ``name`` (one line, at most
    :data:`NAME_LIMIT` characters), else ``default``."""
    if name is None:
        return default
    if not isinstance(name, str) or not name.strip():
        raise ModelError(f"name= must be a non-empty string, got {name!r}")
    if len(name) > NAME_LIMIT or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ModelError(f"name= must be one line of at most {NAME_LIMIT} printable "
                         f"characters, got {name[:60]!r}")
    return name


def module_of(model: Any, what: str) -> Any:
    """``model`` when it is a torch module, else a clear error naming ``what``."""
    import torch

    if not isinstance(model, torch.nn.Module):
        raise ModelError(f"{what}: model must be a torch.nn.Module, got {type(model).__name__}")
    return model


def weights_sha256(module: Any) -> str:
    """sha256 over the module's state_dict: each entry's name, dtype, shape and bytes."""
    import torch

    digest = hashlib.sha256()
    state = module.state_dict()
    for name in sorted(state):
        tensor = state[name]
        if not isinstance(tensor, torch.Tensor):
            digest.update(f"{name}:{tensor!r};".encode())
            continue
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        digest.update(f"{name}:{flat.dtype}:{tuple(tensor.shape)};".encode())
        if flat.numel():
            digest.update(flat.view(torch.uint8).numpy().data)
    return digest.hexdigest()


def first_float(module: Any) -> tuple[str, Any]:
    """(device name, dtype) of the module's first floating-point parameter or buffer."""
    import itertools

    for tensor in itertools.chain(module.parameters(), module.buffers()):
        if tensor.is_floating_point():
            return str(tensor.device), tensor.dtype
    raise ModelError(f"{type(module).__name__} has no floating-point weights")


def dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def stable_repr(obj: Any) -> str:
    """``repr(obj)`` without memory addresses (a function inside a transform prints one)."""
    return _ADDRESS.sub("", repr(obj))


def probe_sha256(tokenize: Any) -> str:
    """sha256 of what ``tokenize`` makes of :data:`PROBE_TEXTS` (the tokenizer's identity)."""
    out = tokenize(list(PROBE_TEXTS))
    ids = out["input_ids"] if isinstance(out, dict) or hasattr(out, "keys") else out
    ids = ids.tolist() if hasattr(ids, "tolist") else ids
    return hashlib.sha256(repr(ids).encode()).hexdigest()


class EvalMode:
    """Counts the calls inside the network; the first switches it to eval mode, the last
    restores each submodule's flag (calls may overlap on prefetch threads)."""

    def __init__(self, module: Any) -> None:
        self.module = module
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: list[tuple[Any, bool]] = []

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        import torch

        with self._lock:
            if self._depth == 0:
                self._saved = [(m, m.training) for m in self.module.modules()]
                self.module.eval()
            self._depth += 1
        try:
            with torch.no_grad():
                yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    for m, flag in self._saved:
                        m.training = flag
                    self._saved = []


class LiveNetwork:
    """What the live adapters (live_openclip, live_hf) share, placed before their spec-path
    base class: the network's own dtype (no recast), its score head read from the module as it
    is now, and every call into it inside the adapter's :class:`EvalMode` (``self._mode``)."""

    _spec: str
    _mode: EvalMode
    model: Any

    def _hold(self, module: Any, batch_size: Any, what: str) -> None:
        """Keep the caller's ``module`` as it is (its device and dtype: no move, no cast) and
        a batch size, checked here for both adapters; ``what`` is the wrapping function."""
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ModelError(f"{what}: batch_size must be an integer >= 1, got "
                             f"{batch_size!r}")
        self.model = module
        self.device, self.torch_dtype = first_float(module)
        self.dtype_name = dtype_name(self.torch_dtype)
        self.batch_size = batch_size

    def fingerprint_for(self, dtype: str) -> str:
        raise ModelError(f"{self._spec}: a model held in memory is evaluated in its own "
                         "dtype; precision= would cast the caller's model")

    @property
    def logit_scale(self) -> float:
        return float(self.model.logit_scale.detach().exp().item())

    @property
    def logit_bias(self) -> float:
        bias = getattr(self.model, "logit_bias", None)
        return float(bias.detach().item()) if bias is not None else 0.0

    def _embed(self, inputs, features, size=None):
        with self._mode():
            return super()._embed(inputs, features, size)  # type: ignore[misc]

    def float64_embeddings(self, prepared: list, texts: list[str]):
        with self._mode():
            return super().float64_embeddings(prepared, texts)  # type: ignore[misc]


def refresh_fingerprint(adapter: Any) -> None:
    """Recompute a live adapter's fingerprint from its current weights (others: nothing)."""
    refresh = getattr(adapter, "refresh_fingerprint", None)
    if callable(refresh):
        refresh()
