"""The unit of n of each metric row on a tiered pair benchmark (CompoSET format), chosen by the
run's ``unit`` setting (pure functions; callers pass the column names).

CompoSET's passages:

- §5: "The best CompoSET Group score is 13.9% (SigLIP-2 SO400M/14, 95% CI [12.3,15.5];
  scene-clustered bootstrap CI [12.4,15.5]; n=1,776), below the 16.67% chance level": the
  headline counts instances, tiers not pooled (Wald at n = 1,776 gives exactly [12.3, 15.5]).
- App. C: "All scores and rates reported in this paper are binomial proportions over a fixed
  test set: p = k/n, where k is the number of successes and n is the number of pairs."
- Table 9: "pooled across the three caption verbosity levels ... n is per-edit-type instance
  count, summed across short/medium/long tiers (3x the per-scene count)".
- Table 10: "Per-cell n is per-tier instance count (one third of the column in Table 9)".
- Table 8 does not say its n; its CompoSET cells match Wald at n = 5,328 (pooled): 13.9
  [13.0, 14.9] for SigLIP-2 SO400M/14, 4.4 [3.9, 5.0] for CLIP B/32 (at n = 1,776 these would
  be [12.3, 15.5] and [3.4, 5.4]). ``unit="pooled"`` reproduces Table 8 and Table 9.

Row units (the ``unit`` column of every row):

- ``instance``: each instance's outcome averaged over its tiers (0, 1/3, 2/3, 1 with three
  tiers; an instance missing a tier is averaged over the tiers it has), then the mean over
  instances; n = instances, k = the sum of the tier means (a fractional count: binomial
  intervals read "n = 1,776 instances" for a tier-averaged score; the scene bootstrap
  resamples scenes and gives the pooled interval when every instance has every tier);
- ``per_tier``: one tier alone, n = its instances;
- ``pooled``: every (instance, tier) item, n = tiers x instances;
- ``items``: a benchmark without tiers, n = items (what every other benchmark reports).

Settings (``unit``), for tiered pair benchmarks only:

- ``paper`` (the default): overall rows per instance (§5), the tier breakdown per tier
  (Table 10), every other breakdown pooled (Table 9);
- ``instance``: overall and every breakdown but tier per instance;
- ``pooled``: overall and every breakdown but tier pooled (foilbench before this setting);
- ``tier``: overall per instance (a run keeps one headline number), the tier breakdown per
  tier, and every other breakdown within each tier: ``group_by`` ``tier/COL``, ``group_value``
  ``TIER/VALUE`` (Table 10's layout).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from foilbench.stats.bootstrap import DEFAULT_N_BOOT, DEFAULT_SEED
from foilbench.stats.breakdown import (
    CLUSTER_COLUMN,
    COLUMNS,
    default_breakdown_columns,
    group_label,
    metric_table,
)

UNIT_SETTINGS = ("paper", "tier", "instance", "pooled")
DEFAULT_UNIT = "paper"
LABELS = {"instance": "per instance, tier mean (n = instances)",
          "per_tier": "per tier (n = instances in the tier)",
          "pooled": "pooled tiers (n = tiers x instances)",
          "items": "items (n = items)"}
UNIT_COLUMNS = [*COLUMNS, "unit"]
# setting -> (unit of the overall rows, unit of breakdowns other than the tier)
PLANS = {"paper": ("instance", "pooled"), "instance": ("instance", "instance"),
         "pooled": ("pooled", "pooled"), "tier": ("instance", "per_tier")}


def check_setting(unit: str) -> str:
    if unit not in UNIT_SETTINGS:
        raise ValueError(f"unknown unit {unit!r}; choose one of {', '.join(UNIT_SETTINGS)}")
    return unit


def instance_means(table: pd.DataFrame, instance: str, keys: Sequence[str] = (),
                   cluster_col: str | None = CLUSTER_COLUMN) -> pd.DataFrame:
    """One row per (metric, *keys, instance): the outcome and chance averaged over the
    instance's rows (its tiers), ties summed (tied items), the cluster label kept."""
    agg = {"outcome": ("outcome", "mean"), "tie": ("tie", "sum"), "chance": ("chance", "mean")}
    if cluster_col and cluster_col in table.columns:
        agg[cluster_col] = (cluster_col, "first")
    return (table.groupby(["metric", *keys, instance], sort=False, dropna=False)
            .agg(**agg).reset_index())


def tiered_metric_table(table: pd.DataFrame, *, unit: str = DEFAULT_UNIT, instance: str,
                        tier: str = "tier", by: Sequence[str] | None = None,
                        candidates: Sequence[str] | None = None, method: str = "auto",
                        cluster_col: str | None = CLUSTER_COLUMN,
                        n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED,
                        level: float = 0.95) -> pd.DataFrame:
    """:func:`~foilbench.stats.breakdown.metric_table` of a tiered pair benchmark's long
    table (one row per (item, metric)) with each row in the unit ``unit`` gives it (module
    docstring), plus the ``unit`` column. Breakdown columns: ``by``, else those of
    ``candidates`` that vary."""
    overall_unit, other_unit = PLANS[check_setting(unit)]
    missing = [c for c in ("metric", "outcome", "tie", "chance", instance, tier)
               if c not in table.columns]
    if missing:
        raise ValueError(f"the unit-of-n metric table needs column(s) {', '.join(missing)} "
                         f"(have: {', '.join(map(str, table.columns))})")
    if table.empty:
        raise ValueError("the unit-of-n metric table got no rows (no items were scored)")
    columns = list(by) if by is not None else default_breakdown_columns(table, candidates or [])
    def rows(frame: pd.DataFrame, col: str | None, row_unit: str) -> pd.DataFrame:
        keys = [] if col is None else [col]
        if row_unit == "instance":
            frame = instance_means(frame, instance, keys, cluster_col)
        # a breakdown's call leaves out the overall rows it would only drop (a bootstrap
        # over every item per metric and breakdown column)
        out = metric_table(frame, by=keys, method=method, cluster_col=cluster_col,
                           n_boot=n_boot, seed=seed, level=level, overall=col is None)
        out = out[out["group_by"] == ("" if col is None else col)]
        return out.assign(unit=row_unit)

    parts = [rows(table, None, overall_unit)]
    for col in columns:
        if col == tier:
            parts.append(rows(table, tier, "per_tier"))
        elif other_unit == "per_tier":
            name = f"{tier}/{col}"
            both = table.assign(**{name: table[tier].map(group_label) + "/"
                                   + table[col].map(group_label)})
            parts.append(rows(both, name, "per_tier"))
        else:
            parts.append(rows(table, col, other_unit))
    # metrics in their first row's order (unique() keeps it, without a Python loop per row)
    order = {m: i for i, m in enumerate(table["metric"].unique())}
    out = pd.concat([p.assign(_part=i) for i, p in enumerate(parts)], ignore_index=True)
    out = out.assign(_m=out["metric"].map(order)).sort_values(["_m", "_part"], kind="stable")
    return out[UNIT_COLUMNS].reset_index(drop=True)
