"""A torch dual encoder's features in float64, for settling near ties (:mod:`foilbench.scoring.settle`).

Two correct float32 computations of one model's scores differ by a few 1e-7 (batch shapes,
kernels, summation order), so a decision closer than that to a tie is decided by rounding,
not by the model. Recomputed in float64, the same model's features carry errors near 1e-16,
and the margin's sign is the model's own.

How: the adapter's network is cast in place to float64 on the CPU, the adapter's own feature
functions run on it (they read ``adapter.device`` and ``adapter.torch_dtype``, which are set
to ``cpu`` and ``float64`` meanwhile), and afterwards the network goes back to its device and
dtype. The round trip float32 -> float64 -> float32 is exact, so the weights afterwards are
bit for bit the weights before (tested); in place, the extra memory is the float64 copy of
the weights only, not a second model. Only float32 networks whose floating-point tensors all
share that dtype are cast; any other network (bf16/fp16 runs, mixed-precision modules) gets
None, and its near ties stay counted and unsettled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from typing import Any

import numpy as np


def castable(module: Any) -> bool:
    """True when every floating-point parameter and buffer of ``module`` is float32."""
    import torch

    dtypes = {t.dtype for t in chain(module.parameters(), module.buffers())
              if t.is_floating_point()}
    return dtypes == {torch.float32}


@contextmanager
def in_float64(adapter: Any, module: Any) -> Iterator[None]:
    """``module`` (the adapter's network) in float64 on the CPU for the ``with`` block, the
    adapter's ``device`` and ``torch_dtype`` following; both restored after, even on error."""
    import torch

    device, dtype = adapter.device, adapter.torch_dtype
    module.to(device="cpu", dtype=torch.float64)
    adapter.device, adapter.torch_dtype = "cpu", torch.float64
    try:
        yield
    finally:
        module.to(device=device, dtype=dtype)
        adapter.device, adapter.torch_dtype = device, dtype


def float64_embeddings(adapter: Any, module: Any, prepared: Sequence, texts: Sequence[str],
                       image_features: Callable[[list, int], Any],
                       text_features: Callable[[list, int], Any]
                       ) -> tuple[np.ndarray, np.ndarray] | None:
    """Unit-norm float64 features of ``prepared`` images and ``texts`` from the adapter's own
    feature functions run in float64 (module docstring); None where the network is not a
    float32 one that can be cast."""
    import torch

    if module is None or getattr(adapter, "torch_dtype", None) != torch.float32 \
            or not castable(module):
        return None
    size = max(1, int(getattr(adapter, "batch_size", 32)))
    normalise = not getattr(adapter, "features_normalised", False)
    with torch.no_grad(), in_float64(adapter, module):
        images = _run(list(prepared), image_features, size, normalise)
        words = _run(list(texts), text_features, size, normalise)
    return images, words


def _run(inputs: list, features: Callable[[list, int], Any], size: int,
         normalise: bool) -> np.ndarray:
    import torch

    out = []
    for start in range(0, len(inputs), size):
        feats = features(inputs[start:start + size], start).to(torch.float64)
        if normalise:
            feats = torch.nn.functional.normalize(feats, dim=-1)
        out.append(feats.cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, 0))
