"""Model A vs model B on the same benchmark, paired at the unit the metric row counts.

A run's overall row counts items (every pair, choice and image-choice benchmark) or, on a
CompoSET-format benchmark under ``--unit paper``/``instance``, instances: each instance's
outcome averaged over its caption tiers (:mod:`foilbench.stats.units`). The paired
difference is taken at that same unit, so it tests the quantity the row reports: per item,
mean(a_i - b_i) over the items both runs scored; per instance, each instance's tier mean
(over the tiers scored in both runs) for each model, then mean(a_j - b_j) over instances.

Intervals. CompoSET App. C: "Wald and Wilson treat instances as independent, but CompoSET
instances cluster within 80 base scenes and outcomes are correlated within scene. To account
for this, we resample the 80 scenes with replacement (B=10,000, seed 42) and recompute the
score as the pooled mean over all rows of the drawn scenes; a scene drawn k times contributes
its rows k-fold. We report percentile intervals over the bootstrap distribution." CompoSET
compares models only through these per-model intervals; it has no paired model-vs-model test.
Ours (our choice, built on App. C): the same scene resampling applied to the per-unit
differences a - b, so one draw of scenes serves both models
(:func:`foilbench.stats.bootstrap.paired_delta_ci`); items without ``scene_id`` are resampled
one by one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from foilbench.data.tiers import instance_column

CLUSTER = "scene_id"
UNIT_WORDS = {"instance": "instances (tier mean)", "items": "items"}


@dataclass
class PairedOutcomes:
    """Per-unit outcomes of two runs on the units both scored, aligned; ``clusters`` the scene
    of each unit (None when the items carry none); ``unit`` ``"instance"`` or ``"items"``."""

    a: np.ndarray
    b: np.ndarray
    clusters: np.ndarray | None
    unit: str

    @property
    def n(self) -> int:
        return len(self.a)


def overall_unit(metrics: pd.DataFrame, items: pd.DataFrame, metric: str) -> str | None:
    """The unit the stored overall row of ``metric`` counts: its ``unit`` column when
    recorded (``pooled`` and ``items`` are both item rows); for a row stored before units, the
    unit its n matches (items, else instances). None when neither matches."""
    if metrics.empty or "metric" not in metrics.columns:
        return "items"
    overall = metrics[(metrics["metric"] == metric)
                      & ((metrics["group_by"] == "") | metrics["group_by"].isna())]
    if overall.empty:
        return "items"
    row = overall.iloc[0]
    stated = row.get("unit") if "unit" in overall.columns else None
    if isinstance(stated, str) and stated:
        return "instance" if stated == "instance" else "items"
    n = int(row["n"])
    if n == len(items):
        return "items"
    key = instance_column(items.columns)
    if key is not None and n == items[key].nunique():
        return "instance"
    return None


def paired_outcomes(items_a: pd.DataFrame, items_b: pd.DataFrame, metric: str,
                    unit: str = "items") -> PairedOutcomes | None:
    """The two runs' outcomes of ``metric`` at ``unit`` on what both scored (an item with no
    outcome in either run is left out before averaging); None when nothing is shared or the
    metric is missing."""
    if metric not in items_a.columns or metric not in items_b.columns:
        return None
    ia = items_a.drop_duplicates("item_id").set_index("item_id")
    ib = items_b.drop_duplicates("item_id").set_index("item_id")
    common = ia.index.intersection(ib.index)
    va = pd.to_numeric(ia.loc[common, metric], errors="coerce").to_numpy(dtype=float)
    vb = pd.to_numeric(ib.loc[common, metric], errors="coerce").to_numpy(dtype=float)
    scored = np.isfinite(va) & np.isfinite(vb)
    common, va, vb = common[scored], va[scored], vb[scored]
    if len(common) == 0:
        return None
    frame = pd.DataFrame({"a": va, "b": vb}, index=common)
    has_scene = CLUSTER in ia.columns and ia.loc[common, CLUSTER].notna().all()
    if has_scene:
        frame[CLUSTER] = ia.loc[common, CLUSTER].astype(str)
    if unit == "instance":
        key = instance_column(ia.columns)
        if key is None:
            raise ValueError(f"metric {metric!r} is counted per instance but the items have "
                             "no instance key (foil_id or instance_id)")
        frame[key] = ia.loc[common, key].astype(str)
        agg = {"a": ("a", "mean"), "b": ("b", "mean")}
        if has_scene:
            agg[CLUSTER] = (CLUSTER, "first")
        frame = frame.groupby(key, sort=False).agg(**agg)
    clusters = frame[CLUSTER].to_numpy() if has_scene else None
    return PairedOutcomes(frame["a"].to_numpy(), frame["b"].to_numpy(), clusters,
                          "instance" if unit == "instance" else "items")
