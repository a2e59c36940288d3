"""Signed cosine margins (CompoSET App. G.3): how far each decision is from flipping.

For a pair item with scores s(c, i) (c0/i0 the base, c1/i1 the foil):

    I2T margin = min( s(c0,i0) - s(c1,i0),  s(c1,i1) - s(c0,i1) )
    T2I margin = min( s(c0,i0) - s(c0,i1),  s(c1,i1) - s(c1,i0) )

i.e. the smaller of the two gaps by which each image prefers its own caption (I2T) or each
caption prefers its own image (T2I). A margin > 0 exactly when the strict-> outcome (Eq. 1/2)
is correct; 0 is a tie (a failure). For a choice item the margin is
s(positive) - max_k s(negative_k). Summaries are split by decision (correct: margin > 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.analysis.frame import choice_scores, is_pair_frame, pair_sims

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def pair_margins(sims: np.ndarray) -> dict[str, np.ndarray]:
    """I2T and T2I margins of ``sims`` (n, 2, 2) [caption, image].

    >>> pair_margins(np.array([[[0.9, 0.2], [0.1, 0.8]]]))["i2t"].round(3).tolist()
    [0.6]
    """
    s = np.asarray(sims, np.float64)
    c0i0, c0i1, c1i0, c1i1 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 0], s[:, 1, 1]
    return {"i2t": np.minimum(c0i0 - c1i0, c1i1 - c0i1),
            "t2i": np.minimum(c0i0 - c0i1, c1i1 - c1i0)}


def choice_margins(scores: np.ndarray) -> np.ndarray:
    """s(positive) - max_k s(negative_k); NaN negatives (ragged K) are ignored."""
    s = np.asarray(scores, np.float64)
    return s[:, 0] - np.nanmax(s[:, 1:], axis=1)


def add_margins(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with margin columns: ``margin_i2t``, ``margin_t2i`` (pair frames) or
    ``margin_r1`` (choice frames)."""
    out = df.copy()
    if is_pair_frame(df):
        m = pair_margins(pair_sims(df))
        out["margin_i2t"], out["margin_t2i"] = m["i2t"], m["t2i"]
    else:
        out["margin_r1"] = choice_margins(choice_scores(df))
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
