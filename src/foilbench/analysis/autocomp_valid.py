"""Auto-Comp ``r1`` (the paper's) beside ``r1_valid`` (foilbench's primary), per cell.

``r1``: the positive above all candidates (Auto-Comp §3, "accuracy is reported as the rate at
which the positive caption is selected"), chance 1 / |candidates|. ``r1_valid``: the positive
above the false negatives only, chance 1 / (1 + #false) (:mod:`foilbench.kinds.valid`);
they differ only on items with a true negative (:mod:`foilbench.construct.autocomp.truth`).

Chance is the mean of the per-item chance 1 / (K + 1) over the cell's items. The paper's
nominal chance (Table 5: Swap 1/N!, Confusion 1/N^(2N) for attributes and 1/(N^N (N-1)^(N-1))
for relations) is shown beside it: where a concept repeats a relation, equal Confusion texts
are removed, the candidate set shrinks, and the mean chance is above the nominal one.

Input: one row per item with ``r1``, ``r1_valid``, ``chance_r1``, ``chance_r1_valid``,
``n_true_negatives`` and the breakdown columns (the shape :meth:`ResultsStore.
load_item_results` returns; :func:`frame_from_result` builds it from an ``EvalResult``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

BY = ("negative_set", "task", "n_objects", "condition")
COMPACT_BY = ("negative_set", "n_objects")
NEEDED = ("r1", "r1_valid", "chance_r1", "chance_r1_valid", "n_true_negatives")


def nominal_chance(negative_set: str, task: str, n: int) -> float:
    """The paper's closed-form chance 1 / (1 + closed-form negatives); NaN if it has none."""
    if negative_set not in ("swap", "confusion"):
        return math.nan
    from foilbench.negatives import expected_counts  # (construction's code: only here)

    k = expected_counts(task, int(n))[negative_set]
    return 1.0 / (1 + k) if k else math.nan


def frame_from_result(result) -> pd.DataFrame | None:
    """Per-item frame of an Auto-Comp run (None when the run has no ``r1_valid``)."""
    if "r1_valid" not in result.outcomes:
        return None
    items = result.benchmark.items
    frame = items.drop(columns=[c for c in ("captions", "image") if c in items.columns]).copy()
    frame["benchmark"] = result.benchmark.name
    frame["model"] = result.model.spec
    for m in ("r1", "r1_valid"):
        frame[m] = np.asarray(result.outcomes[m], dtype=np.float64)
        frame[f"chance_{m}"] = np.asarray(result.chance[m], dtype=np.float64)
    return frame


def validity_table(df: pd.DataFrame, by: Sequence[str] = BY) -> pd.DataFrame:
    """Per model and cell: items, items with a true negative, r1 and r1_valid (means), their
    mean chance and the paper's nominal chance (averaged over the cell's items when the cell
    mixes tasks)."""
    missing = [c for c in (*NEEDED, "model") if c not in df.columns]
    if missing:
        raise ValueError(f"r1 vs r1_valid table: missing column(s) {', '.join(missing)}")
    by = [c for c in by if c in df.columns]
    if {"negative_set", "task", "n_objects"} <= set(df.columns):
        nominal = {k: nominal_chance(str(k[0]), str(k[1]), int(k[2])) for k in
                   set(zip(df["negative_set"], df["task"], df["n_objects"], strict=True))}
        df = df.assign(paper_chance=[nominal[k] for k in zip(
            df["negative_set"], df["task"], df["n_objects"], strict=True)])
    rows = []
    for key, g in df.groupby(["model", *by], sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(["model", *by], key, strict=True))
        row.update({"n_items": len(g), "with_true_negative": int((g["n_true_negatives"] > 0)
                                                                  .sum()),
                    "r1": float(g["r1"].mean()), "r1_valid": float(g["r1_valid"].mean()),
                    "chance_r1": float(g["chance_r1"].mean()),
                    "chance_r1_valid": float(g["chance_r1_valid"].mean())})
        row["paper_chance"] = float(g["paper_chance"].mean()) if "paper_chance" in g else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    """The table in percent, as a Markdown grid (for the terminal and summary.json)."""
    if table.empty:
        return ""
    cols = [c for c in table.columns]
    pct = {"r1", "r1_valid", "chance_r1", "chance_r1_valid", "paper_chance"}

    def cell(c, v):
        if c in pct:
            return "-" if pd.isna(v) else f"{100 * float(v):.1f}"
        return str(v)

    head = ["r1_valid % *" if c == "r1_valid" else (f"{c} %" if c in pct else c) for c in cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(c, r[c]) for c in cols) + " |"
              for _, r in table.iterrows()]
    return "\n".join(lines)


def run_summary(result) -> dict[str, Any] | None:
    """summary.json block of one Auto-Comp run: items with a true negative, the overall r1 and
    r1_valid with mean chance, and the per-cell table (records and Markdown); None for other
    runs."""
    frame = frame_from_result(result)
    if frame is None:
        return None
    table = validity_table(frame)
    overall = validity_table(frame, by=()).iloc[0]
    return {"benchmark": result.benchmark.name, "model": result.model.spec,
            "primary_metric": "r1_valid", "n_items": int(overall["n_items"]),
            "items_with_true_negative": int(overall["with_true_negative"]),
            "r1": overall["r1"], "r1_valid": overall["r1_valid"],
            "chance_r1": overall["chance_r1"], "chance_r1_valid": overall["chance_r1_valid"],
            "table": table.to_dict(orient="records"), "markdown": markdown(table)}


def batch_markdown(results: Sequence, by: Sequence[str] = COMPACT_BY) -> str:
    """One Markdown table over every Auto-Comp run of a batch (all models side by side), by
    negative set and N; '' when no run has ``r1_valid``."""
    frames = [f for r in results if (f := frame_from_result(r)) is not None]
    if not frames:
        return ""
    return markdown(validity_table(pd.concat(frames, ignore_index=True), by=by))
