"""Near ties: decisions that float32 rounding could flip, counted per metric by every run.

An outcome is a strict comparison of two scores, and models compute scores in float32. Two
correct float32 computations of one model's similarities (open_clip's batched forward and
foilbench's, or a peer's own loop) differ by up to about 3e-7 on cosine similarities (issue
30's bench: 2.1e-7 to 2.8e-7), and in 37,555 sweep outcomes one decision, with margins -8.0e-8
(peer) and +5.0e-8 (foilbench), went opposite ways. A decision that close is settled by the
order of floating-point operations, not by the model.

The papers are silent; this is foilbench's choice. A decision's margin is the kind's decision
margin (:meth:`foilbench.kinds.base.ItemKind.margins`: ``<metric>_decision`` where the kind has
one, else ``<metric>``; > 0 exactly when the strict outcome is correct). It is a near tie when

    0 < |margin| < NEAR_TIE * max(1, largest |score| of the item)

that is, within about eight float32 ulps of the scores compared: 1e-6 for cosine
similarities, proportionally more for scores on a larger scale (CLIP's logit exp(t) * cos,
log-likelihoods). An exact tie (margin 0) is a failure and is counted as a tie, not here.
Where the adapter can, the engine then settles near ties in float64
(:mod:`foilbench.scoring.settle`); the counts here are of the float32 pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

NEAR_TIE = 1e-6


def near_tie_mask(margins: np.ndarray, scale: np.ndarray | float = 1.0) -> np.ndarray:
    """True where ``0 < |margin| < NEAR_TIE * max(1, scale)`` (elementwise)."""
    size = np.abs(np.asarray(margins, np.float64))
    return (size > 0) & (size < NEAR_TIE * np.maximum(1.0, scale))


def item_scale(matrix: np.ndarray) -> np.ndarray:
    """The largest finite |score| of each row of a (-inf padded) score matrix."""
    m = np.asarray(matrix, np.float64)
    return np.where(np.isfinite(m), np.abs(m), 0.0).max(axis=1, initial=0.0)


def decision_margins(kind: Any, matrix: np.ndarray) -> dict[str, np.ndarray]:
    """Per metric of ``kind``, the margin that decides it (``<metric>_decision``, else
    ``<metric>``); metrics without one (a pair's group, which needs both directions) are left
    out."""
    margins = kind.margins(matrix)
    out = {}
    for metric in kind.metrics:
        for name in (f"{metric}_decision", metric):
            if name in margins:
                out[metric] = np.asarray(margins[name], np.float64)
                break
    return out


def near_tie_masks(kind: Any, matrix: np.ndarray) -> dict[str, np.ndarray]:
    """Per metric with a decision margin, which items are near ties (module docstring)."""
    scale = item_scale(matrix)
    return {metric: near_tie_mask(values, scale)
            for metric, values in decision_margins(kind, matrix).items()}


def near_tie_counts(kind: Any, matrix: np.ndarray) -> dict[str, int]:
    """Per metric with a decision margin, how many items are near ties."""
    return {metric: int(mask.sum()) for metric, mask in near_tie_masks(kind, matrix).items()}


def near_tie_note(stats: dict[str, Any]) -> str | None:
    """The console line of a run with near ties, or None: settled in float64
    (:mod:`foilbench.scoring.settle`) with the outcomes that changed, or left as float32
    scored them."""
    counts = {m: c for m, c in (stats.get("near_ties") or {}).items() if c}
    if not counts:
        return None
    parts = ", ".join(f"{c} {m}" for m, c in counts.items())
    head = (f"near ties: {parts} decision(s) within float32 rounding of a tie (|margin| < 1e-6 "
            f"of the scores' scale)")
    settled = int(stats.get("near_ties_settled") or 0)
    if settled:
        changed = {m: c for m, c in (stats.get("near_ties_changed") or {}).items() if c}
        what = ", ".join(f"{c} {m}" for m, c in changed.items()) if changed else "none"
        return (f"{head}; {settled} item(s) rescored by the model in float64, outcomes "
                f"changed: {what}")
    return (f"{head}; another correct implementation may score them the other way "
            f"(`foilbench analyze margins` counts them by decision)")
