"""The per-item results frame every analysis reads, and the score arrays inside it.

One row per (model, item). Columns: ``item_id``, ``model``, metadata (``scene_id``,
``edit_type``, ``tier``, ...), ``scores`` (the flattened score vector; pair: [s(c0,i0),
s(c0,i1), s(c1,i0), s(c1,i1)], choice: positive first) and outcome columns (``i2t``, ``t2i``,
``group`` or ``r1``, each in [0, 1]).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd


def require(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise a ValueError naming the missing columns and those present."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what} needs column(s) {', '.join(missing)}; the frame has "
                         f"{', '.join(map(str, df.columns))}")


def pair_sims(df: pd.DataFrame) -> np.ndarray:
    """(n, 2, 2) array ``sims[n, caption, image]`` from pair ``scores`` rows."""
    require(df, ["scores"], "pair scores")
    flat = np.array([np.asarray(s, np.float64) for s in df["scores"]]).reshape(-1, 4)
    return flat.reshape(-1, 2, 2)


def choice_scores(df: pd.DataFrame) -> np.ndarray:
    """(n, K_max+1) array of choice scores, positive first, NaN-padded for ragged K."""
    require(df, ["scores"], "choice scores")
    rows = [np.asarray(s, np.float64) for s in df["scores"]]
    out = np.full((len(rows), max(len(r) for r in rows)), np.nan)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def is_pair_frame(df: pd.DataFrame) -> bool:
    """Pair frames carry i2t/t2i outcomes and four scores per row."""
    return "i2t" in df.columns and all(len(s) == 4 for s in df["scores"])


def present(df: pd.DataFrame, columns: Iterable[str]) -> list[str]:
    """The columns of ``columns`` the frame has with at least one non-null value."""
    return [c for c in columns if c in df.columns and df[c].notna().any()]
