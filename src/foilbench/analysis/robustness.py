"""The robustness checks of CompoSET App. G.3 on top of :mod:`foilbench.analysis.hardness`
(same per-scene statistics, same quartile sets, within one caption tier).

CompoSET App. G.3: "17 of 80 scenes are scene-hard for at least 11 of the 22 encoders, while
19 are scene-hard for none" -> :func:`scene_hard_counts`. "at least 11 of the 22" is at least
half the models (ceil(M / 2)); that is the default threshold, ``min_models`` sets another.

"Encoders that share a training recipe agree slightly more than those that do not
(same-family rho=0.62 vs. cross-family 0.55)" -> :func:`family_agreement`: the pairwise
Spearman correlations of per-scene mean margins
(:func:`foilbench.analysis.hardness.cross_model_agreement`), averaged over pairs of one
family and over pairs of two. The paper does not list its families; the caller maps each
model to one.

"Residualizing out per-edit-type means leaves the per-model edit-hard ranking essentially
unchanged (mean Spearman rho=0.95; top-quartile overlap 89%)" -> :func:`edit_hard_stability`:
per model, Spearman between the per-scene margin standard deviations before and after
removing (model, edit type) means (:func:`~foilbench.analysis.hardness.residualise_edit_type`),
and the top-quartile overlap |EH_raw & EH_resid| / |EH_raw| (the share of edit-hard scenes
still edit-hard; the paper does not define "overlap", this is our reading), averaged.

"scenes containing the least pixel-local edit types (swap_role, modify_pose, modify_action)
are not measurably more edit-hard than scenes without them (Mann-Whitney p=0.33)" ->
:func:`least_local_mann_whitney`: a scene's edit-hardness is its margin standard deviation
averaged over models; scenes with any of those edit types against scenes with none, one-sided
Mann-Whitney U ("more edit-hard": alternative ``greater``; the paper does not say one- or
two-sided, ``alternative`` chooses).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from foilbench.analysis.frame import require
from foilbench.analysis.hardness import (
    QUARTILE,
    cross_model_agreement,
    hard_sets,
    residualise_edit_type,
    scene_margin_stats,
)

LEAST_PIXEL_LOCAL = ("swap_role", "modify_pose", "modify_action")


def scene_hard_counts(scene_stats: pd.DataFrame, q: float = QUARTILE,
                      min_models: int | None = None) -> dict:
    """Per scene, how many models label it scene-hard; the number of scenes hard for at least
    ``min_models`` (default ceil(M / 2)) and for none, over scenes every model saw."""
    wide = scene_stats.pivot(index="scene_id", columns="model", values="mean").dropna()
    common = scene_stats[scene_stats["scene_id"].isin(wide.index)]
    sets = hard_sets(common, q)
    n_models = len(sets)
    threshold = math.ceil(n_models / 2) if min_models is None else int(min_models)
    if not 1 <= threshold <= max(n_models, 1):
        raise ValueError(f"min_models must lie in [1, {n_models}], got {threshold}")
    counts = pd.Series({s: sum(s in v["scene_hard"] for v in sets.values())
                        for s in wide.index}, name="n_models_scene_hard").sort_index()
    return {"n_models": n_models, "n_scenes": len(wide), "min_models": threshold,
            "n_scenes_hard_for_min_models": int((counts >= threshold).sum()),
            "n_scenes_hard_for_none": int((counts == 0).sum()),
            "per_scene": counts.to_dict()}


def family_agreement(scene_stats: pd.DataFrame, families: Mapping[str, str],
                     q: float = QUARTILE) -> dict:
    """Mean pairwise Spearman of per-scene mean margins within families and across them."""
    models = set(scene_stats["model"])
    missing = sorted(models - set(families))
    if missing:
        raise ValueError(f"no family given for model(s) {', '.join(missing)}")
    rhos = cross_model_agreement(scene_stats, q)["spearman"]
    same, cross = [], []
    for key, rho in rhos.items():
        a, b = key.split("|")
        (same if families[a] == families[b] else cross).append(rho)
    mean = lambda xs: float(np.mean(xs)) if xs else float("nan")  # noqa: E731
    return {"same_family_spearman": mean(same), "n_same_pairs": len(same),
            "cross_family_spearman": mean(cross), "n_cross_pairs": len(cross)}


def top_quartile_overlap(raw: set, resid: set) -> float:
    """|raw & resid| / |raw|: the share of the raw edit-hard scenes still edit-hard after
    residualising (NaN when ``raw`` is empty). The paper's "top-quartile overlap 89%" names
    no formula; other readings give other numbers where the sets differ in size or members
    (Jaccard |A & B| / |A | B|, or |A & B| / |B|); this one is ours, pinned by a test.

    >>> top_quartile_overlap({1, 2, 3, 4}, {1, 2, 5})
    0.5
    """
    return len(raw & resid) / len(raw) if raw else float("nan")


def edit_hard_stability(df: pd.DataFrame, value: str = "margin_i2t",
                        q: float = QUARTILE) -> pd.DataFrame:
    """Per model (and a ``mean`` row): Spearman of per-scene margin std before vs after
    removing edit-type means, and the top-quartile overlap (see the module docstring)."""
    require(df, ["model", "scene_id", "edit_type", value], "edit-hard stability")
    raw = scene_margin_stats(df, value)
    resid = scene_margin_stats(residualise_edit_type(df, value), value)
    sets_raw, sets_res = hard_sets(raw, q), hard_sets(resid, q)
    rows = []
    for model in sorted(sets_raw):
        a = raw[raw["model"] == model].set_index("scene_id")["std"]
        b = resid[resid["model"] == model].set_index("scene_id")["std"]
        both = pd.concat([a, b], axis=1, keys=["raw", "resid"]).dropna()
        eh_raw, eh_res = sets_raw[model]["edit_hard"], sets_res[model]["edit_hard"]
        rows.append({"model": model, "n_scenes": len(both),
                     "spearman": float(stats.spearmanr(both["raw"], both["resid"]).statistic),
                     "n_edit_hard": len(eh_raw), "n_still_edit_hard": len(eh_raw & eh_res),
                     "top_quartile_overlap": top_quartile_overlap(eh_raw, eh_res)})
    out = pd.DataFrame(rows)
    if len(out):
        out = pd.concat([out, pd.DataFrame([{
            "model": "mean", "n_scenes": int(out["n_scenes"].min()),
            "spearman": float(out["spearman"].mean()), "n_edit_hard": int(out["n_edit_hard"].sum()),
            "n_still_edit_hard": int(out["n_still_edit_hard"].sum()),
            "top_quartile_overlap": float(out["top_quartile_overlap"].mean())}])],
            ignore_index=True)
    return out


def least_local_mann_whitney(df: pd.DataFrame, value: str = "margin_i2t",
                             edit_types: Sequence[str] = LEAST_PIXEL_LOCAL,
                             alternative: str = "greater") -> dict:
    """Mann-Whitney U of per-scene edit-hardness (margin std, mean over models): scenes with
    any of ``edit_types`` vs scenes without (see the module docstring)."""
    require(df, ["model", "scene_id", "edit_type", value], "least pixel-local Mann-Whitney")
    per_scene = scene_margin_stats(df, value).groupby("scene_id")["std"].mean().dropna()
    having = set(df.loc[df["edit_type"].isin(edit_types), "scene_id"])
    with_ = per_scene[per_scene.index.isin(having)]
    without = per_scene[~per_scene.index.isin(having)]
    if len(with_) == 0 or len(without) == 0:
        raise ValueError(f"Mann-Whitney needs scenes with and without {', '.join(edit_types)}; "
                         f"got {len(with_)} with and {len(without)} without")
    res = stats.mannwhitneyu(with_.to_numpy(), without.to_numpy(), alternative=alternative)
    return {"edit_types": list(edit_types), "n_with": len(with_), "n_without": len(without),
            "median_std_with": float(with_.median()),
            "median_std_without": float(without.median()), "u": float(res.statistic),
            "p_value": float(res.pvalue), "alternative": alternative}
