"""Batches sized to the GPU's memory (``--device cuda``).

On the CPU a batch of 32-64 inputs already keeps the cores busy; on a GPU the forward pass of
a small model costs about the same for 32 inputs as for 512, so the batch should be as large
as memory allows. :func:`fit_batch` is the arithmetic: from the free memory and the memory one
more input costs (measured, :func:`probe_per_item`), the largest batch that keeps a headroom,
capped. :func:`size_to_memory` applies it to an adapter on a CUDA device and leaves every
other device's batch exactly as it was (the CPU path is unchanged).

Preparation: in a run or sweep each image is decoded and prepared once, while the benchmark
is validated, on the decode threads (one per usable core, at most four;
:mod:`foilbench.scoring.prepared`), so the cells' forward passes read ready pixels; outside one
(a bare :func:`foilbench.scoring.engine.evaluate`) the engine's prefetch threads prepare while
the model runs (:mod:`foilbench.scoring.encode`). On CUDA the batch is copied from page-locked
memory without blocking (``OpenClipAdapter.prepared_features``).
"""

from __future__ import annotations

from typing import Any

HEADROOM = 0.6  # share of the free memory a batch may take (the rest: fragmentation, text)
MAX_GPU_BATCH = 1024
PROBE = (8, 16)  # batch sizes measured to get the memory one input costs


def fit_batch(free_bytes: int, per_item_bytes: float, *, requested: int,
              headroom: float = HEADROOM, cap: int = MAX_GPU_BATCH) -> int:
    """The largest batch with ``per_item_bytes * batch <= headroom * free_bytes``, at most
    ``cap``, at least 1; ``requested`` when the per-item cost is unknown (<= 0)."""
    if free_bytes < 0 or not 0 < headroom <= 1 or cap < 1 or requested < 1:
        raise ValueError(f"fit_batch: bad arguments free={free_bytes} headroom={headroom} "
                         f"cap={cap} requested={requested}")
    if per_item_bytes <= 0:
        return requested
    return max(1, min(cap, int(headroom * free_bytes // per_item_bytes)))


def per_item_from_peaks(peaks: dict[int, int]) -> float:
    """Memory one more input costs, from peak bytes at two batch sizes (the fixed part, the
    weights and workspace, cancels)."""
    (n1, p1), (n2, p2) = sorted(peaks.items())
    if n2 <= n1:
        raise ValueError("per_item_from_peaks needs two different batch sizes")
    return max(0.0, (p2 - p1) / (n2 - n1))


def probe_per_item(adapter: Any) -> float:
    """Measured CUDA memory per image of ``adapter`` (an open_clip adapter): peak allocation
    of a zero batch at the sizes in :data:`PROBE`."""
    import torch

    size = adapter.model.visual.image_size
    h, w = (size, size) if isinstance(size, int) else tuple(size)
    peaks = {}
    with torch.no_grad():
        for n in PROBE:
            torch.cuda.synchronize(adapter.device)
            torch.cuda.reset_peak_memory_stats(adapter.device)
            x = torch.zeros((n, 3, h, w), device=adapter.device, dtype=adapter.torch_dtype)
            adapter.model.encode_image(x)
            torch.cuda.synchronize(adapter.device)
            peaks[n] = torch.cuda.max_memory_allocated(adapter.device)
            del x
    return per_item_from_peaks(peaks)


def size_to_memory(adapter: Any, requested: int) -> int:
    """The engine's batch for ``adapter``: on a CUDA device the memory-fitted size (also set
    as the adapter's own ``batch_size``, so it does not split the batch again), measured once
    per adapter and dtype; elsewhere ``requested`` unchanged."""
    device = str(getattr(adapter, "device", "cpu"))
    visual = getattr(getattr(adapter, "model", None), "visual", None)
    if not device.startswith("cuda") or not hasattr(visual, "image_size"):
        return requested  # the CPU path, and adapters the probe does not know
    import torch

    key = str(getattr(adapter, "torch_dtype", ""))
    known = getattr(adapter, "_fitted_batch", {})
    if key not in known:
        free, _ = torch.cuda.mem_get_info(torch.device(device))
        known[key] = fit_batch(free, probe_per_item(adapter), requested=requested)
        adapter._fitted_batch = known
    adapter.batch_size = known[key]
    return known[key]
