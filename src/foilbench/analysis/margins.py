"""Signed margins (CompoSET App. G.3): how far each decision is from flipping.

Each kind owns its margin formula (:meth:`foilbench.kinds.base.ItemKind.margins`). For a pair
item, CompoSET App. G.3: "we compute the I2T margin as sim(img_a, cap_a) - sim(img_a, cap_b)
and the analogous T2I margin" (``margin_i2t``, ``margin_t2i``, anchored on the base), and
foilbench's decision margins beside them (``margin_i2t_decision``, ``margin_t2i_decision``:
the smaller of the direction's two comparisons, > 0 exactly when the strict outcome is
correct), see :mod:`foilbench.kinds.pair`. For a choice item s(positive) - max_k
s(negative_k) (``margin_r1``).

Near ties: ``near_ties`` counts margins within float32 rounding of zero, 0 < |margin| <
1e-6 x max(1, the item's largest |score|), the rule of :mod:`foilbench.scoring.near_ties`
(foilbench's choice; the papers are silent), which every run also counts for its decisions.
A run that settled its near ties in float64 (:mod:`foilbench.scoring.settle`) stored the
float64 scores of those items, so their margins here are the model's own and may still be
below the bound.

Summaries are split by the decision, i.e. the item's strict outcome for the direction (the
paper: "mean correct margin 0.0175 vs. wrong margin 0.0018" -- a paper margin can be positive
on a wrong decision); where the frame has no outcome column the margin's sign decides.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.analysis.frame import frame_kind, score_matrix
from foilbench.kinds.pair import pair_margins
from foilbench.kinds.ranking import choice_margins
from foilbench.scoring.near_ties import NEAR_TIE, item_scale, near_tie_mask

__all__ = ["NEAR_TIE", "add_margins", "choice_margins", "margin_histogram", "margin_summary",
           "pair_margins", "summarise"]

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def add_margins(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with a ``margin_<direction>`` column per direction of the frame's kind:
    ``margin_i2t``, ``margin_t2i`` (pair frames) or ``margin_r1`` (choice frames)."""
    out = df.copy()
    for direction, values in frame_kind(df).margins(score_matrix(df)).items():
        out[f"margin_{direction}"] = values
    return out


def summarise(values: np.ndarray, scale: np.ndarray | float = 1.0) -> dict[str, float]:
    """n, mean, std (ddof=1; NaN when n < 2), the 5/25/50/75/95% quantiles, min, max and
    near_ties (0 < |margin| < :data:`NEAR_TIE` x max(1, ``scale``), ``scale`` the items'
    largest |score|: see the module docstring)."""
    v = np.asarray(values, np.float64)
    if len(v) == 0:
        return {"n": 0, "near_ties": 0}
    q = np.quantile(v, QUANTILES)
    out = {"n": int(len(v)), "near_ties": int(near_tie_mask(v, scale).sum()),
           "mean": float(v.mean()),
           "std": float(v.std(ddof=1)) if len(v) > 1 else float("nan"),
           "min": float(v.min()), "max": float(v.max())}
    out.update({f"q{int(p * 100):02d}": float(x) for p, x in zip(QUANTILES, q, strict=True)})
    return out


def outcome_column(direction: str) -> str:
    """The outcome a margin direction belongs to: ``i2t_decision`` -> ``i2t``."""
    return direction.removesuffix("_decision")


def margin_summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, direction, decision) with :func:`summarise` columns; decision is
    ``correct`` (the direction's outcome is 1; without an outcome column: margin > 0),
    ``wrong`` (otherwise) or ``all``."""
    framed = add_margins(df)
    framed["_scale"] = item_scale(score_matrix(df))
    rows = []
    for model, sub in framed.groupby("model", sort=True):
        scale = sub["_scale"].to_numpy()
        for col in [c for c in framed.columns if c.startswith("margin_")]:
            m = sub[col].to_numpy()
            outcome = outcome_column(col[len("margin_"):])
            right = (sub[outcome].to_numpy(float) >= 1.0 if outcome in sub.columns
                     else m > 0)
            for decision, mask in (("correct", right), ("wrong", ~right),
                                   ("all", np.ones(len(m), bool))):
                rows.append({"model": model, "direction": col[len("margin_"):],
                             "decision": decision, **summarise(m[mask], scale[mask])})
    return pd.DataFrame(rows)


def margin_histogram(values: np.ndarray, bins: int = 20) -> dict[str, list[float]]:
    """Counts over equal-width bins spanning the data (for a plotted distribution)."""
    counts, edges = np.histogram(np.asarray(values, np.float64), bins=bins)
    return {"counts": counts.tolist(), "edges": edges.tolist()}
