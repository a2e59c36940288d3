"""Scene-hard vs edit-hard (CompoSET App. G.3): is difficulty a property of the scene or of
the edit?

CompoSET App. G.3: "For each model and scene, we compute the mean and standard deviation of
the I2T margin across the scene's ~22 foils. Within each model, we label a scene scene-hard if
its mean margin falls in the bottom quartile ... and edit-hard if its margin standard deviation
falls in the top quartile". The margin is the paper's (``margin_i2t``, anchored on the base,
:mod:`foilbench.kinds.pair`); mean and standard deviation (ddof = 1) are taken over the
scene's foils *within one caption tier*: ~22 foils per scene is one item per foil, and every
foil appears once per tier, so pooling the three tiers would count each foil three times and
add the tier-to-tier shift to the standard deviation. :func:`split_tiers` gives the frames;
the functions here refuse a frame holding several tiers (``pool_tiers=True`` is the old pooled
statistic, foilbench's, kept for comparison).

* scene-hard: scenes whose mean lies in the model's bottom quartile (mean <= Q1 of means);
* edit-hard: scenes whose std lies in the top quartile (std >= Q3 of stds).

Were the two independent, the share of scenes in both would be 0.25 x 0.25 = 6.25%. Across
models: the mean pairwise Spearman correlation of per-scene mean margins and the mean pairwise
Jaccard index of the scene-hard sets (both over scenes every model saw), against the Jaccard
expected for independent quartile draws (:func:`jaccard_null_ratio`, the paper's, and
:func:`jaccard_null`, exact; the paper: "scene-hard sets
overlap at mean Jaccard 0.36, against 0.14 for independent quartile draws"). See also
:mod:`foilbench.analysis.variance` for the decompositions.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from foilbench.analysis.frame import require

QUARTILE = 0.25
TIER_COLUMN = "tier"


def split_tiers(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """``[(tier, rows of that tier), ...]`` in order of appearance; ``[("all", df)]`` when the
    frame has no tier column."""
    if TIER_COLUMN not in df.columns:
        return [("all", df)]
    tiers = df[TIER_COLUMN].fillna("NA").astype(str)
    return [(t, df[tiers == t]) for t in dict.fromkeys(tiers)]


def require_one_tier(df: pd.DataFrame, what: str) -> None:
    """Refuse a frame that holds several caption tiers (CompoSET App. G.3 is within a tier)."""
    if TIER_COLUMN in df.columns and df[TIER_COLUMN].nunique(dropna=False) > 1:
        tiers = ", ".join(map(str, pd.unique(df[TIER_COLUMN])))
        raise ValueError(f"{what} is computed within one caption tier (CompoSET App. G.3: "
                         f"each foil once per scene); this frame holds tiers {tiers}: split it "
                         "with split_tiers (or pool_tiers=True for foilbench's pooled variant)")


def scene_margin_stats(df: pd.DataFrame, value: str = "margin_i2t",
                       pool_tiers: bool = False) -> pd.DataFrame:
    """Rows (model, scene_id) with n, mean and std (ddof=1, NaN for one foil) of ``value``
    over the scene's foils within one tier (``pool_tiers=True``: over every tier at once)."""
    require(df, ["model", "scene_id", value], "scene margin statistics")
    if not pool_tiers:
        require_one_tier(df, "the per-scene margin mean and standard deviation")
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


def jaccard_null_ratio(n: int, k1: int, k2: int | None = None) -> float:
    """The paper's null: expected overlap over expected union of two independent uniform draws
    of k1 and k2 of n scenes, E[X] / (k1 + k2 - E[X]) with E[X] = k1 k2 / n.

    CompoSET App. G.3: "scene-hard sets overlap at mean Jaccard 0.36, against 0.14 for
    independent quartile draws". For n = 80, k1 = k2 = 20: E[X] = 5, 5 / 35 = 0.1429, the
    paper's 0.14 (the exact expectation, :func:`jaccard_null`, is 0.1456, which would print
    as 0.15; the paper's number is this ratio).

    >>> round(jaccard_null_ratio(80, 20), 4)
    0.1429
    """
    k2 = k1 if k2 is None else k2
    _check_draws(n, k1, k2)
    if k1 + k2 == 0:
        return 1.0
    ex = k1 * k2 / n
    return float(ex / (k1 + k2 - ex))


def _check_draws(n: int, k1: int, k2: int) -> None:
    if not (0 <= k1 <= n and 0 <= k2 <= n):
        raise ValueError(f"draw sizes must lie in [0, n]; got n={n}, k1={k1}, k2={k2}")


def jaccard_null(n: int, k1: int, k2: int | None = None) -> float:
    """foilbench's null: the exact expected Jaccard index of two independent uniform draws of
    k1 and k2 of n scenes. The overlap X is hypergeometric (n, k1, k2) and J = X / (k1 + k2 -
    X), so E[J] = sum_x P(X = x) x / (k1 + k2 - x); 0.1456 for n = 80, k1 = k2 = 20 (the
    paper's ratio of expectations, :func:`jaccard_null_ratio`, gives 0.1429).

    >>> round(jaccard_null(4, 1), 4)  # X = 1 with probability 1/4, then J = 1
    0.25
    """
    k2 = k1 if k2 is None else k2
    _check_draws(n, k1, k2)
    if k1 + k2 == 0:
        return 1.0
    x = np.arange(max(0, k1 + k2 - n), min(k1, k2) + 1)
    pmf = stats.hypergeom.pmf(x, n, k1, k2)
    return float(np.sum(pmf * x / (k1 + k2 - x)))


def cross_model_agreement(scene_stats: pd.DataFrame, q: float = QUARTILE) -> dict[str, Any]:
    """Mean pairwise Spearman of per-scene mean margins and mean pairwise Jaccard of the
    scene-hard sets, over scenes common to all models (NaN with fewer than two models), and
    the Jaccard expected for independent draws of the same set sizes, averaged over the model
    pairs: the paper's ratio of expectations (``jaccard_null_independent``,
    :func:`jaccard_null_ratio`) and the exact expectation (``jaccard_null_exact``,
    :func:`jaccard_null`)."""
    wide = scene_stats.pivot(index="scene_id", columns="model", values="mean").dropna()
    models = list(wide.columns)
    common = scene_stats[scene_stats["scene_id"].isin(wide.index)]
    sets = hard_sets(common, q)
    pairs = list(combinations(models, 2))
    rhos = {f"{a}|{b}": float(stats.spearmanr(wide[a], wide[b]).statistic) for a, b in pairs}
    jacs = {f"{a}|{b}": jaccard(sets[a]["scene_hard"], sets[b]["scene_hard"])
            for a, b in pairs}
    sizes = [(len(wide), len(sets[a]["scene_hard"]), len(sets[b]["scene_hard"]))
             for a, b in pairs]
    mean = lambda d: float(np.mean(list(d.values()))) if d else float("nan")  # noqa: E731
    avg = lambda f: float(np.mean([f(*z) for z in sizes])) if sizes else float("nan")  # noqa: E731
    return {"n_models": len(models), "n_scenes": len(wide), "mean_spearman": mean(rhos),
            "mean_jaccard_scene_hard": mean(jacs),
            "jaccard_null_independent": avg(jaccard_null_ratio),
            "jaccard_null_exact": avg(jaccard_null),
            "spearman": rhos, "jaccard": jacs}


def residualise_edit_type(df: pd.DataFrame, value: str = "margin_i2t") -> pd.DataFrame:
    """A copy with ``value`` minus its (model, edit_type) mean: what remains once the edit
    type's own difficulty is removed (redo the scene analysis on it)."""
    require(df, ["model", "edit_type", value], "edit-type residualisation")
    out = df.copy()
    out[value] = df[value] - df.groupby(["model", "edit_type"])[value].transform("mean")
    return out
