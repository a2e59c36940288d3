"""Accuracy broken down by edit type x tier x category, each cell with two intervals.

Per (model, cell): accuracy = mean outcome (outcomes in [0, 1]; k = their sum), the Wilson
95% interval on (k, n), and -- when ``scene_id`` is present -- the scene-clustered percentile
bootstrap interval (CompoSET section 3.3: foils of one scene are not independent).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from foilbench.analysis.frame import present, require
from foilbench.stats import cluster_bootstrap_ci, wilson_ci

DEFAULT_BY = ("edit_type", "tier", "category")


def breakdown(df: pd.DataFrame, metric: str, by: Sequence[str] = DEFAULT_BY,
              cluster: str = "scene_id", n_boot: int = 10_000, seed: int = 42) -> pd.DataFrame:
    """One row per model and combination of the ``by`` columns the frame has.

    Columns: model, <by...>, n, accuracy, ci_low, ci_high (Wilson), boot_low, boot_high
    (cluster bootstrap; NaN without the cluster column or with a single cluster), chance (mean
    of the store's ``chance_<metric>`` column; NaN without it).
    """
    require(df, ["model", metric], f"breakdown of {metric!r}")
    df = df[df[metric].notna()]  # runs of another kind (no such metric) are left out
    keys = ["model", *present(df, by)]
    chance_col = f"chance_{metric}" if f"chance_{metric}" in df.columns else None
    has_cluster = cluster in df.columns and df[cluster].notna().all()
    rows = []
    for values, sub in df.groupby(keys, sort=True, dropna=False):
        y = sub[metric].to_numpy(dtype=float)
        lo, hi = wilson_ci(float(y.sum()), len(y))
        boot = (float("nan"), float("nan"))
        if has_cluster and sub[cluster].nunique() > 1:
            boot = cluster_bootstrap_ci(y, sub[cluster].to_numpy(), n_boot=n_boot, seed=seed)
        key_values = values if isinstance(values, tuple) else (values,)
        rows.append({**dict(zip(keys, key_values, strict=True)), "n": len(y),
                     "accuracy": float(y.mean()), "ci_low": lo, "ci_high": hi,
                     "boot_low": boot[0], "boot_high": boot[1],
                     "chance": float(sub[chance_col].mean()) if chance_col else float("nan")})
    return pd.DataFrame(rows)
