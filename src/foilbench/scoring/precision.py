"""Reduced precision (``--precision bf16|fp16``) with its cost in outcomes measured by the run.

Half precision makes a GPU forward pass several times faster, but it moves scores, and a
benchmark's outcomes are strict comparisons (``>``) of close scores: a low-precision run may
flip some. The papers report float32 numbers; so a run asked for a precision computes the
float32 pass as well and reports, per metric, how many item outcomes the low precision
changed (:func:`changed_outcomes`), in the run's stats (``precision_changed``), next to the
low-precision results it stores. The float32 embeddings go through the embedding cache as
usual, so a second run (or another precision) does not pay for them again.

The switch is the adapter's ``set_dtype(name)`` (open_clip adapters: the model is cast and its
fingerprint changes with the dtype, so the two passes never share cached embeddings). An
adapter without it is refused with a clear error. ``fp16`` on the CPU is refused as ``--dtype``
refuses it (:func:`foilbench.models.device.select_dtype`); ``bf16`` runs on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from foilbench.errors import ModelError

PRECISIONS = {"bf16": "bfloat16", "fp16": "float16"}


def changed_outcomes(low: dict[str, Any], reference: dict[str, Any]) -> dict[str, dict]:
    """Per metric: ``{"changed": k, "n": n, "share": k / n}``, k the items whose outcome in
    ``low`` differs from ``reference`` (both: metric -> per-item outcome array)."""
    if set(low) != set(reference):
        raise ValueError(f"the two passes have different metrics: {sorted(low)} vs "
                         f"{sorted(reference)}")
    out = {}
    for metric in sorted(reference):
        a, b = np.asarray(low[metric]), np.asarray(reference[metric])
        if a.shape != b.shape:
            raise ValueError(f"metric {metric!r}: {a.shape} outcomes vs {b.shape} in float32")
        changed = int((a != b).sum())
        out[metric] = {"changed": changed, "n": int(a.size),
                       "share": changed / a.size if a.size else 0.0}
    return out


def evaluate_in_precision(adapter: Any, precision: str,
                          evaluate: Callable[[Any], Any]) -> tuple[Any, dict]:
    """``evaluate(adapter)`` in ``precision`` and, first, in float32; returns the
    low-precision evaluation (its ``result.stats`` carry ``precision`` and
    ``precision_changed``) and the changed-outcome table. The adapter is float32 again after.
    ``evaluate`` returns an object with ``.result`` (an EvalResult) or an EvalResult."""
    if precision not in PRECISIONS:
        raise ModelError(f"precision {precision!r}: choose one of {', '.join(PRECISIONS)}")
    set_dtype = getattr(adapter, "set_dtype", None)
    if not callable(set_dtype):
        raise ModelError(f"{adapter.info.spec}: this adapter cannot switch precision; use "
                         "--dtype to load it in another dtype instead of --precision")
    if getattr(adapter, "dtype_name", "float32") != "float32":
        raise ModelError(f"{adapter.info.spec}: --precision compares with float32, so load "
                         "the model with --dtype float32")
    from foilbench.models.device import select_dtype

    select_dtype(PRECISIONS[precision], str(getattr(adapter, "device", "cpu")))  # refused early
    reference = evaluate(adapter)
    set_dtype(PRECISIONS[precision])
    try:
        low = evaluate(adapter)
    finally:
        set_dtype("float32")
    res_low = getattr(low, "result", low)
    res_ref = getattr(reference, "result", reference)
    table = changed_outcomes(res_low.outcomes, res_ref.outcomes)
    res_low.stats["precision"] = precision
    res_low.stats["precision_changed"] = table
    res_low.stats["precision_reference_seconds"] = res_ref.stats.get("total_seconds", 0.0)
    return low, table


def precision_note(stats: dict[str, Any]) -> str | None:
    """The console line of a cell run in reduced precision, e.g. ``bf16 changed 3 of 1000
    r1 outcomes (0.30%) against float32``; None for a float32 run."""
    table = stats.get("precision_changed")
    if not table:
        return None
    parts = [f"{row['changed']} of {row['n']} {metric} outcomes ({100 * row['share']:.2f}%)"
             for metric, row in table.items()]
    return f"{stats.get('precision')} changed {', '.join(parts)} against float32"
