"""The report's CompoSET App. G.3 robustness section, recomputed from the stored items of a
pair benchmark that at least two models ran (:mod:`foilbench.analysis.robustness`).

CompoSET App. G.3: "17 of 80 scenes are scene-hard for at least 11 of the 22 encoders, while
19 are scene-hard for none"; "Residualizing out per-edit-type means leaves the per-model
edit-hard ranking essentially unchanged (mean Spearman rho=0.95; top-quartile overlap 89%)";
"scenes containing the least pixel-local edit types (swap_role, modify_pose, modify_action)
are not measurably more edit-hard than scenes without them (Mann-Whitney p=0.33)". Every
statistic is within one caption tier (:mod:`foilbench.analysis.hardness`), so the tables
have one block of rows per tier. Same- vs cross-family agreement needs a family per model,
which the store does not hold: `foilbench analyze robustness --family` prints it.
"""

from __future__ import annotations

import pandas as pd

from foilbench.kinds import kind_of
from foilbench.report.html import esc, fmt_pct, section, table

NOTE = ("CompoSET App. G.3, within each caption tier, on the I2T margin s(base image, base "
        "caption) - s(base image, foil caption). Scene-hard: a scene whose mean margin is in "
        "the model's bottom quartile; edit-hard: margin standard deviation in the top "
        "quartile. 'Majority' is at least half the models, rounded up (the paper's 11 of 22). "
        "Stability: Spearman rho between each scene's margin standard deviation before and "
        "after removing the model's edit-type means, and the share of edit-hard scenes still "
        "edit-hard (top-quartile overlap; our reading, the paper does not define it). "
        "Mann-Whitney: scenes holding any swap_role, modify_pose or modify_action foil against "
        "scenes holding none, one-sided ('more edit-hard'). Same- vs cross-family agreement: "
        "`foilbench analyze robustness --family MODEL=FAMILY`.")


def _frame(group, labels) -> pd.DataFrame | None:
    """The stacked items of one benchmark's runs with I2T margins, or None when they do not
    fit (not an edit-pair benchmark, no scene ids, fewer than two models)."""
    from foilbench.analysis.margins import add_margins

    if len(group) < 2 or not kind_of(group[0].run["benchmark_kind"]).is_edit_pair:
        return None
    frames = [r.items.assign(model=labels[r.run["run_id"]]) for r in group]
    if any(f.empty or "scene_id" not in f.columns for f in frames):
        return None
    df = add_margins(pd.concat(frames, ignore_index=True))
    return df if "margin_i2t" in df.columns else None


def _f(x: float, digits: int = 2) -> str:
    return "–" if x is None or x != x else f"{x:.{digits}f}"


def robustness_tables(df: pd.DataFrame) -> dict[str, list[list]]:
    """Rows of the three tables (majority, stability, mann_whitney), one block per tier;
    ``notes`` holds why a tier's test was left out."""
    from foilbench.analysis import hardness as h
    from foilbench.analysis import robustness as rb

    out: dict[str, list] = {"majority": [], "stability": [], "mann_whitney": [], "notes": []}
    for tier, part in h.split_tiers(df):
        counts = rb.scene_hard_counts(h.scene_margin_stats(part))
        out["majority"].append([tier, counts["n_models"], counts["n_scenes"],
                                f"{counts['min_models']} of {counts['n_models']}",
                                counts["n_scenes_hard_for_min_models"],
                                counts["n_scenes_hard_for_none"]])
        if "edit_type" not in part.columns:
            out["notes"].append(f"tier {tier}: no edit types, no stability or Mann-Whitney")
            continue
        for _, s in rb.edit_hard_stability(part).iterrows():
            out["stability"].append([tier, s["model"], int(s["n_scenes"]), _f(s["spearman"]),
                                     int(s["n_edit_hard"]), int(s["n_still_edit_hard"]),
                                     fmt_pct(s["top_quartile_overlap"])])
        try:
            mw = rb.least_local_mann_whitney(part)
        except ValueError as e:
            out["notes"].append(f"tier {tier}: Mann-Whitney left out: {e}")
            continue
        out["mann_whitney"].append([tier, mw["n_with"], mw["n_without"],
                                    _f(mw["median_std_with"], 3),
                                    _f(mw["median_std_without"], 3), _f(mw["u"], 1),
                                    _f(mw["p_value"], 3)])
    return out


def robustness_section(runs) -> str:
    """'' unless some pair benchmark holds runs of two or more models."""
    from foilbench.report.headline import benchmark_frames

    parts = []
    for name, df in benchmark_frames(runs, _frame):
        t = robustness_tables(df)
        parts.append(f"<h3>{esc(name)}</h3>")
        parts.append(table(["tier", "models", "scenes", "majority", "scene-hard for a majority",
                            "scene-hard for none"], t["majority"],
                           numeric=[False, True, True, False, True, True]))
        if t["stability"]:
            parts.append("<p class='note'>Edit-hard ranking before vs after removing edit-type "
                         "means (last row per tier: the mean over models).</p>"
                         + table(["tier", "model", "scenes", "Spearman rho", "edit-hard scenes",
                                  "still edit-hard", "top-quartile overlap %"], t["stability"],
                                 numeric=[False, False, True, True, True, True, True]))
        if t["mann_whitney"]:
            parts.append("<p class='note'>Scenes with a least pixel-local edit (swap_role, "
                         "modify_pose, modify_action) vs without: per-scene margin standard "
                         "deviation, mean over models.</p>"
                         + table(["tier", "scenes with", "scenes without", "median std with",
                                  "median std without", "U", "p (one-sided)"],
                                 t["mann_whitney"], numeric=[False] + [True] * 6))
        parts += [f"<p class='note'>{esc(n)}</p>" for n in t["notes"]]
    if not parts:
        return ""
    return section("CompoSET App. G.3: robustness of scene and edit hardness", "".join(parts),
                   "robustness", NOTE)
