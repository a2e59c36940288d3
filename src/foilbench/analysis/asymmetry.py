"""Direction asymmetry: does a model find the right caption for an image (I2T, Eq. 1) more
often than the right image for a caption (T2I, Eq. 2) on the same pair items?

Per model: delta = mean(I2T) - mean(T2I) over the same items, with a paired percentile
bootstrap that resamples scenes (or items without ``scene_id``) jointly for both directions
(``foilbench.stats.paired_delta_ci``), plus the discordant counts: items where only I2T is
right and items where only T2I is right (McNemar's cells).
"""

from __future__ import annotations

import pandas as pd

from foilbench.analysis.frame import require
from foilbench.stats import paired_delta_ci


def direction_asymmetry(df: pd.DataFrame, n_boot: int = 10_000, seed: int = 42,
                        by: str | None = None) -> pd.DataFrame:
    """One row per model (and per value of ``by`` when given): n, i2t, t2i, delta, ci_low,
    ci_high, p_value, only_i2t, only_t2i."""
    require(df, ["model", "i2t", "t2i"], "direction asymmetry")
    df = df[df["i2t"].notna() & df["t2i"].notna()]  # pair rows only
    keys = ["model"] + ([by] if by else [])
    rows = []
    for values, sub in df.groupby(keys, sort=True):
        i2t = sub["i2t"].to_numpy(float)
        t2i = sub["t2i"].to_numpy(float)
        clusters = sub["scene_id"].to_numpy() if "scene_id" in sub.columns else None
        stat = paired_delta_ci(i2t, t2i, clusters=clusters, n_boot=n_boot, seed=seed)
        key_values = values if isinstance(values, tuple) else (values,)
        rows.append({**dict(zip(keys, key_values, strict=True)), "n": len(sub),
                     "i2t": float(i2t.mean()), "t2i": float(t2i.mean()),
                     "delta": stat["delta"], "ci_low": stat["ci_low"],
                     "ci_high": stat["ci_high"], "p_value": stat["p_value"],
                     "only_i2t": int(((i2t > 0.5) & (t2i <= 0.5)).sum()),
                     "only_t2i": int(((t2i > 0.5) & (i2t <= 0.5)).sum())})
    return pd.DataFrame(rows)
