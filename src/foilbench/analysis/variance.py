"""Variance decompositions behind the scene-vs-edit question (CompoSET App. G.3).

Two-way decomposition of a per-(item, model) value y (e.g. the I2T margin) by scene s and
model m, with items nested in scenes and every model scored on the same items (so the
design is proportional and the sums of squares are orthogonal):

    SS_total = SS_scene + SS_model + SS_interaction + SS_within
    SS_scene = sum_s M n_s (ybar_s - ybar)^2
    SS_model = sum_m N (ybar_m - ybar)^2
    SS_inter = sum_{s,m} n_s (ybar_sm - ybar_s - ybar_m + ybar)^2
    SS_within = sum (y - ybar_sm)^2       (foils within a scene: the edits)

with M models, N items, n_s items of scene s. Shares are SS / SS_total.

Within- vs between-scene share of per-foil success variance, per model, for outcomes y:
between = sum_s n_s (ybar_s - ybar)^2 / sum (y - ybar)^2, within = 1 - between.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.analysis.frame import require


def common_items(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of the items every model has (the decomposition needs a proportional design)."""
    n_models = df["model"].nunique()
    counts = df.groupby("item_id")["model"].nunique()
    return df[df["item_id"].isin(counts.index[counts == n_models])]


def two_way_decomposition(df: pd.DataFrame, value: str = "margin_i2t") -> dict[str, float]:
    """Shares of scene, model, scene x model interaction and within-scene variation."""
    require(df, ["model", "scene_id", "item_id", value], "variance decomposition")
    d = common_items(df)
    if d.duplicated(["model", "item_id"]).any():
        raise ValueError("variance decomposition: an item appears twice for one model")
    y = d[value].to_numpy(float)
    grand = y.mean()
    scene_mean = d.groupby("scene_id")[value].transform("mean").to_numpy()
    model_mean = d.groupby("model")[value].transform("mean").to_numpy()
    cell_mean = d.groupby(["scene_id", "model"])[value].transform("mean").to_numpy()
    ss = {"scene": np.sum((scene_mean - grand) ** 2), "model": np.sum((model_mean - grand) ** 2),
          "interaction": np.sum((cell_mean - scene_mean - model_mean + grand) ** 2),
          "within": np.sum((y - cell_mean) ** 2)}
    total = np.sum((y - grand) ** 2)
    out = {f"share_{k}": float(v / total) if total > 0 else float("nan") for k, v in ss.items()}
    out.update({"ss_total": float(total), "n_rows": int(len(y)),
                "n_items": int(d["item_id"].nunique()), "n_models": int(d["model"].nunique()),
                "n_scenes": int(d["scene_id"].nunique())})
    return out


def success_variance_shares(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per model: between-scene and within-scene shares of the variance of ``metric``."""
    require(df, ["model", "scene_id", metric], "success variance shares")
    rows = []
    for model, sub in df.groupby("model", sort=True):
        y = sub[metric].to_numpy(float)
        scene_mean = sub.groupby("scene_id")[metric].transform("mean").to_numpy()
        total = np.sum((y - y.mean()) ** 2)
        between = np.sum((scene_mean - y.mean()) ** 2) / total if total > 0 else float("nan")
        rows.append({"model": model, "n": len(y), "n_scenes": sub["scene_id"].nunique(),
                     "between_scene": float(between), "within_scene": float(1 - between)})
    return pd.DataFrame(rows)
