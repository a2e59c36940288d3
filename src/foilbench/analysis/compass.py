"""COMPASS analyses of one or more runs: integration gap and skill load, as tables.

:func:`compass_tables` is what the run/report code calls with the per-item results of a
COMPASS-style benchmark (see ``foilbench.construct.compass.captions`` for the rows it expects).
Formulas: :mod:`foilbench.analysis.compass_gap` and :mod:`foilbench.analysis.compass_skill_load`.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from foilbench.analysis.compass_gap import caption_outcomes, gap_table, table2
from foilbench.analysis.compass_skill_load import DEFAULT_SE, skill_load, table3, table3_note
from foilbench.errors import FoilbenchError

__all__ = ["caption_outcomes", "compass_tables", "gap_table", "markdown_table", "skill_load",
           "table2", "table3", "flatten_item_results"]


def flatten_item_results(df: pd.DataFrame) -> pd.DataFrame:
    """Accept the store's shapes: an ``item`` JSON column is expanded into columns, and a long
    ``metric``/``outcome`` table is reduced to its ``r1`` rows as column ``r1``."""
    out = df.copy()
    if "metric" in out.columns and "outcome" in out.columns and "r1" not in out.columns:
        out = out[out["metric"] == "r1"].rename(columns={"outcome": "r1"})
    elif "outcome" in out.columns and "r1" not in out.columns:
        out = out.rename(columns={"outcome": "r1"})
    if "item" in out.columns and "role" not in out.columns:
        items = pd.DataFrame([json.loads(v) if isinstance(v, str) else dict(v)
                              for v in out["item"]], index=out.index)
        out = pd.concat([out.drop(columns="item"),
                         items.drop(columns=[c for c in items.columns if c in out.columns])],
                        axis=1)
    if "r1" not in out.columns:
        raise FoilbenchError("COMPASS tables need an 'r1' outcome per item "
                             f"(have: {', '.join(map(str, out.columns))})")
    return out.reset_index(drop=True)


def compass_tables(item_results: pd.DataFrame, se_type: str = DEFAULT_SE) -> dict:
    """Gap and skill-load tables from per-item results (metadata columns + ``r1``).

    Returns ``{"gap" (per N, the Table-2 ``all`` row and foilbench's ``pooled`` row per
    level), "table2" (COMPASS Table 2 layout), "table3" (COMPASS Table 3 layout, percentage
    points, the paper's marks), "table3_note" (units, marks, standard-error type),
    "skill_load" (long, both standard-error types), "per_caption", "gap_markdown",
    "table2_markdown", "table3_markdown", "dropped_incomplete", "dropped_k"}``. Captions whose
    decomposed items are not all present (a partial run) are left out of the gap and counted
    in ``dropped_incomplete``; skill items without exactly K = 4 negatives are left out of
    the skill load and counted in ``dropped_k``."""
    items = flatten_item_results(item_results)
    if "role" not in items.columns:
        raise FoilbenchError("not a COMPASS-style benchmark: items have no 'role' column "
                             "(build one with `foilbench compass build-synth`)")
    per_caption = caption_outcomes(items, incomplete="drop")
    gap = gap_table(per_caption)
    t2 = table2(gap)
    long = skill_load(items, se_type)
    t3 = table3(long)
    return {
        "gap": gap,
        "table2": t2,
        "table3": t3,
        "table3_note": table3_note(se_type),
        "skill_load": long,
        "per_caption": per_caption,
        "gap_markdown": markdown_table(gap),
        "table2_markdown": markdown_table(t2),
        "table3_markdown": markdown_table(t3),
        "dropped_incomplete": int(per_caption.attrs["dropped_incomplete"]),
        "dropped_k": int(long.attrs.get("dropped_k", 0)),
    }


def _cell(value) -> str:
    if isinstance(value, float | np.floating):
        return "-" if not np.isfinite(value) else f"{value:.3f}"
    return str(value).replace("|", "\\|")


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (floats to 3 decimals, NaN as '-')."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"
