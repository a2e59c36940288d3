"""Signed margins (CompoSET App. G.3): how far each decision is from flipping.

Each kind owns its margin formula (:meth:`foilbench.kinds.base.ItemKind.margins`): for a pair
item the smaller of the two gaps by which each image prefers its own caption (I2T) or each
caption prefers its own image (T2I), see :mod:`foilbench.kinds.pair`; for a choice item
s(positive) - max_k s(negative_k). A margin > 0 exactly when the strict-> outcome is correct;
0 is a tie (a failure). Summaries are split by decision (correct: margin > 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.analysis.frame import frame_kind, score_matrix
from foilbench.kinds.pair import pair_margins
from foilbench.kinds.ranking import choice_margins

__all__ = ["add_margins", "choice_margins", "margin_histogram", "margin_summary", "pair_margins",
           "summarise"]

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def add_margins(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with a ``margin_<direction>`` column per direction of the frame's kind:
    ``margin_i2t``, ``margin_t2i`` (pair frames) or ``margin_r1`` (choice frames)."""
    out = df.copy()
    for direction, values in frame_kind(df).margins(score_matrix(df)).items():
        out[f"margin_{direction}"] = values
    return out


def summarise(values: np.ndarray) -> dict[str, float]:
    """n, mean, std (ddof=1; NaN when n < 2), the 5/25/50/75/95% quantiles, min and max."""
    v = np.asarray(values, np.float64)
    if len(v) == 0:
        return {"n": 0}
    q = np.quantile(v, QUANTILES)
    out = {"n": int(len(v)), "mean": float(v.mean()),
           "std": float(v.std(ddof=1)) if len(v) > 1 else float("nan"),
           "min": float(v.min()), "max": float(v.max())}
    out.update({f"q{int(p * 100):02d}": float(x) for p, x in zip(QUANTILES, q, strict=True)})
    return out


def margin_summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, direction, decision) with :func:`summarise` columns; decision is
    ``correct`` (margin > 0), ``wrong`` (margin <= 0) or ``all``."""
    framed = add_margins(df)
    rows = []
    for model, sub in framed.groupby("model", sort=True):
        for col in [c for c in framed.columns if c.startswith("margin_")]:
            m = sub[col].to_numpy()
            for decision, mask in (("correct", m > 0), ("wrong", m <= 0),
                                   ("all", np.ones(len(m), bool))):
                rows.append({"model": model, "direction": col[len("margin_"):],
                             "decision": decision, **summarise(m[mask])})
    return pd.DataFrame(rows)


def margin_histogram(values: np.ndarray, bins: int = 20) -> dict[str, list[float]]:
    """Counts over equal-width bins spanning the data (for a plotted distribution)."""
    counts, edges = np.histogram(np.asarray(values, np.float64), bins=bins)
    return {"counts": counts.tolist(), "edges": edges.tolist()}
