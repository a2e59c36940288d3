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

from foilbench.kinds import ItemKind, kind_of_frame, pad_scores


def require(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise a ValueError naming the missing columns and those present."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what} needs column(s) {', '.join(missing)}; the frame has "
                         f"{', '.join(map(str, df.columns))}")


def score_matrix(df: pd.DataFrame) -> np.ndarray:
    """(n, max slots) float64 matrix of the ``scores`` rows, padded with -inf for ragged K
    (the one padding, :func:`foilbench.kinds.pad_scores`)."""
    require(df, ["scores"], "scores")
    return pad_scores(df["scores"])


def frame_kind(df: pd.DataFrame) -> ItemKind:
    """The item kind the frame holds, recognised from its outcome columns and score lengths."""
    require(df, ["scores"], "scores")
    return kind_of_frame(df.columns, [len(s) for s in df["scores"]])


def choice_scores(df: pd.DataFrame) -> np.ndarray:
    """(n, K_max+1) array of choice scores, positive first, -inf-padded for ragged K."""
    require(df, ["scores"], "choice scores")
    return score_matrix(df)


def present(df: pd.DataFrame, columns: Iterable[str]) -> list[str]:
    """The columns of ``columns`` the frame has with at least one non-null value."""
    return [c for c in columns if c in df.columns and df[c].notna().any()]
