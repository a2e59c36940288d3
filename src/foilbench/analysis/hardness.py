"""Scene-hard vs edit-hard (CompoSET App. G.3): is difficulty a property of the scene or of
the edit?

Per model and scene, over the scene's foils, take the mean and the standard deviation
(ddof = 1) of the I2T margin (:mod:`foilbench.analysis.margins`).

* scene-hard: scenes whose mean lies in the model's bottom quartile (mean <= Q1 of means);
* edit-hard: scenes whose std lies in the top quartile (std >= Q3 of stds): some edits of the
  scene are easy and others hard.

Were the two independent, the share of scenes in both would be 0.25 x 0.25 = 6.25%. Across
models: the mean pairwise Spearman correlation of per-scene mean margins and the mean pairwise
Jaccard index of the scene-hard sets (both over scenes every model saw). See also
:mod:`foilbench.analysis.variance` for the two-way decomposition and the success-variance
shares.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from foilbench.analysis.frame import require

QUARTILE = 0.25


def scene_margin_stats(df: pd.DataFrame, value: str = "margin_i2t") -> pd.DataFrame:
    """Rows (model, scene_id) with n, mean and std (ddof=1, NaN for one foil) of ``value``."""
    require(df, ["model", "scene_id", value], "scene margin statistics")
    g = df.groupby(["model", "scene_id"], sort=True)[value]
    return g.agg(n="size", mean="mean", std=lambda v: v.std(ddof=1)).reset_index()


def hard_sets(scene_stats: pd.DataFrame, q: float = QUARTILE) -> dict[str, dict[str, set]]:
    """Per model: ``scene_hard`` (mean <= q-quantile of means) and ``edit_hard`` (std >=
    (1-q)-quantile of stds; scenes with an undefined std are never edit-hard)."""
    out = {}
    for model, sub in scene_stats.groupby("model", sort=True):
        mean_cut = np.quantile(sub["mean"], q)
        stds = sub["std"].dropna()
        std_cut = np.quantile(stds, 1 - q) if len(stds) else np.inf
        out[model] = {"scene_hard": set(sub.loc[sub["mean"] <= mean_cut, "scene_id"]),
                      "edit_hard": set(sub.loc[sub["std"] >= std_cut, "scene_id"])}
    return out


def overlap_table(scene_stats: pd.DataFrame, q: float = QUARTILE) -> pd.DataFrame:
    """Per model: scenes, the two set sizes, the overlap share |SH & EH| / N, the q^2 share
    expected under independence, and the expectation from the actual set sizes."""
    rows = []
    sets = hard_sets(scene_stats, q)
    for model, s in sets.items():
        n = int((scene_stats["model"] == model).sum())
        sh, eh = s["scene_hard"], s["edit_hard"]
        rows.append({"model": model, "n_scenes": n, "n_scene_hard": len(sh),
                     "n_edit_hard": len(eh), "n_both": len(sh & eh),
                     "overlap": len(sh & eh) / n, "expected_independent": q * q,
                     "expected_from_sizes": (len(sh) / n) * (len(eh) / n)})
    return pd.DataFrame(rows)


def jaccard(a: set, b: set) -> float:
    """|a & b| / |a | b|; 1.0 for two empty sets."""
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def cross_model_agreement(scene_stats: pd.DataFrame, q: float = QUARTILE) -> dict[str, Any]:
    """Mean pairwise Spearman of per-scene mean margins and mean pairwise Jaccard of the
    scene-hard sets, over scenes common to all models (NaN with fewer than two models)."""
    wide = scene_stats.pivot(index="scene_id", columns="model", values="mean").dropna()
    models = list(wide.columns)
    common = scene_stats[scene_stats["scene_id"].isin(wide.index)]
    sets = hard_sets(common, q)
    pairs = list(combinations(models, 2))
    rhos = {f"{a}|{b}": float(stats.spearmanr(wide[a], wide[b]).statistic) for a, b in pairs}
    jacs = {f"{a}|{b}": jaccard(sets[a]["scene_hard"], sets[b]["scene_hard"])
            for a, b in pairs}
    mean = lambda d: float(np.mean(list(d.values()))) if d else float("nan")  # noqa: E731
    return {"n_models": len(models), "n_scenes": len(wide), "mean_spearman": mean(rhos),
            "mean_jaccard_scene_hard": mean(jacs), "spearman": rhos, "jaccard": jacs}


def residualise_edit_type(df: pd.DataFrame, value: str = "margin_i2t") -> pd.DataFrame:
    """A copy with ``value`` minus its (model, edit_type) mean: what remains once the edit
    type's own difficulty is removed (redo the scene analysis on it)."""
    require(df, ["model", "edit_type", value], "edit-type residualisation")
    out = df.copy()
    out[value] = df[value] - df.groupby(["model", "edit_type"])[value].transform("mean")
    return out
