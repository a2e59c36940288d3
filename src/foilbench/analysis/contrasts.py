"""Matched modify-vs-swap contrasts (CompoSET section 5): is re-binding an attribute that is
already in the scene (swap_X) harder than changing it to a new value (modify_X)?

Pairs are found from the data, not from a list: every edit type ``swap_X`` whose partner
``modify_X`` is present (colour and material in CompoSET). Matching: within one model, items
are grouped into cells of (scene_id, tier) -- ``tier`` when present -- that hold both edit
types; each cell contributes mean(modify) and mean(swap). The contrast is the mean over cells
of mean(modify) - mean(swap), with a paired percentile bootstrap that resamples scenes
(``foilbench.stats.paired_delta_ci`` on the cell means, clusters = scene).
"""

from __future__ import annotations

import pandas as pd

from foilbench.analysis.frame import present, require
from foilbench.stats import paired_delta_ci


def modify_swap_pairs(edit_types: list[str]) -> dict[str, tuple[str, str]]:
    """{X: ("modify_X", "swap_X")} for each X with both edit types present."""
    names = set(edit_types)
    return {t[len("swap_"):]: (f"modify_{t[len('swap_'):]}", t)
            for t in sorted(names) if t.startswith("swap_") and
            f"modify_{t[len('swap_'):]}" in names}


def modify_swap_contrasts(df: pd.DataFrame, metric: str, n_boot: int = 10_000,
                          seed: int = 42) -> pd.DataFrame:
    """One row per (model, attribute): n_cells, modify, swap (cell-averaged accuracies),
    delta = modify - swap, its paired scene-bootstrap interval and p-value."""
    require(df, ["model", "edit_type", "scene_id", metric], "modify-vs-swap contrast")
    df = df[df[metric].notna()]
    cell_keys = ["scene_id", *present(df, ["tier"])]
    rows = []
    for attr, (mod, swp) in modify_swap_pairs(df["edit_type"].dropna().unique().tolist()).items():
        sub = df[df["edit_type"].isin([mod, swp])]
        for model, msub in sub.groupby("model", sort=True):
            cells = (msub.groupby([*cell_keys, "edit_type"])[metric].mean()
                     .unstack("edit_type").dropna())
            if cells.empty or mod not in cells or swp not in cells:
                continue
            scenes = cells.index.get_level_values("scene_id").to_numpy()
            stat = paired_delta_ci(cells[mod].to_numpy(), cells[swp].to_numpy(),
                                   clusters=scenes, n_boot=n_boot, seed=seed)
            rows.append({"model": model, "attribute": attr, "n_cells": len(cells),
                         "modify": float(cells[mod].mean()), "swap": float(cells[swp].mean()),
                         "delta": stat["delta"], "ci_low": stat["ci_low"],
                         "ci_high": stat["ci_high"], "p_value": stat["p_value"]})
    return pd.DataFrame(rows)
