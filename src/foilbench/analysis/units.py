"""The unit of n behind an interval on a tiered pair benchmark: per tier, per instance
(tier mean), or pooled rows, each row labelled with the unit it uses.

CompoSET counts instances, not rows: "CompoSET contains 1,776 instances" (§3); "All scores
and rates reported in this paper are binomial proportions over a fixed test set: p = k/n,
where k is the number of successes and n is the number of pairs" (App. C), and its main
results use n = 1,776 (tiers not pooled). Table 9 pools: "n is per-edit-type instance count,
summed across short/medium/long tiers (3x the per-scene count)".

* ``per_tier``: each tier alone; n = instances (one row per instance in a tier);
* ``instance``: each instance's outcome averaged over its tiers (0, 1/3, 2/3, 1 with three
  tiers), then the mean over instances; n = instances. Its binomial intervals take k = sum of
  the tier means (a fractional count), the reading of "n = 1,776 instances" for a tier-averaged
  score; the bootstrap resamples scenes;
* ``pooled``: every (instance, tier) row; n = tiers x instances (Table 9's).

The instance key is ``foil_id`` (foilbench's pair benchmarks), ``instance_id`` (the CompoSET
loader), or a column the caller names. ``foilbench run`` stores each of its rows in the unit
its ``--unit`` setting gives (:mod:`foilbench.stats.units`); this table shows all three side
by side. Intervals come from :func:`foilbench.stats.breakdown.summarise`.

Input checks (ValueError naming the column and the item): a missing column, an empty frame, a
NaN or out-of-[0, 1] outcome, a missing instance key or tier, an instance twice in a tier.
"""

from __future__ import annotations

import pandas as pd

from foilbench.analysis.frame import require

UNITS = ("per_tier", "instance", "pooled")
LABELS = {"per_tier": "per tier (n = instances in the tier)",
          "instance": "per instance, tier mean (n = instances)",
          "pooled": "pooled tiers (n = tiers x instances)"}


def unit_table(df: pd.DataFrame, metric: str = "group", units=UNITS, instance: str = "foil_id",
               method: str = "auto", n_boot: int = 10_000, seed: int = 42) -> pd.DataFrame:
    """Per model and unit: value, n, interval and its method (see the module docstring).
    The bootstraps share one count matrix per (scenes, resamples, seed)
    (:func:`foilbench.stats.bootstrap.shared_resamples`: the same numbers, drawn once)."""
    from foilbench.stats.bootstrap import shared_resamples

    with shared_resamples():
        return _unit_table(df, metric, units, instance, method, n_boot, seed)


def _unit_table(df: pd.DataFrame, metric: str, units, instance: str, method: str,
                n_boot: int, seed: int) -> pd.DataFrame:
    from foilbench.stats.breakdown import summarise

    bad = [u for u in units if u not in UNITS]
    if bad:
        raise ValueError(f"unknown unit(s) {', '.join(bad)}; possible: {', '.join(UNITS)}")
    require(df, ["model", "tier", instance, metric], "unit-of-n table")
    check_rows(df, metric, instance)
    clusters = "scene_id" if "scene_id" in df.columns else None
    rows = []
    for model, sub in df.groupby("model", sort=True):
        def stat(values, cl, unit, tier="all", model=model):
            s = summarise(values.to_numpy(float), clusters=None if cl is None else cl.to_numpy(),
                          method=method, n_boot=n_boot, seed=seed)
            rows.append({"model": model, "unit": unit, "tier": tier, "label": LABELS[unit],
                         **{k: s[k] for k in ("value", "n", "k", "ci_low", "ci_high",
                                               "ci_method")}})
        if "per_tier" in units:
            for tier, t in sub.groupby("tier", sort=False):
                dup = t[instance][t[instance].duplicated()]
                if len(dup):
                    raise ValueError(f"{model}: instance {dup.iloc[0]!r} appears twice in "
                                     f"tier {tier!r}")
                stat(t[metric], t[clusters] if clusters else None, "per_tier", str(tier))
        if "instance" in units:
            g = sub.groupby(instance, sort=True)
            means = g[metric].mean()
            cl = g[clusters].first() if clusters else None
            stat(means, cl, "instance")
        if "pooled" in units:
            stat(sub[metric], sub[clusters] if clusters else None, "pooled")
    return pd.DataFrame(rows)


def _name(df: pd.DataFrame, mask: pd.Series) -> str:
    """'item X of model M' (or the row's position) for the first row where ``mask`` holds."""
    row = df[mask].iloc[0]
    what = f"item {row['item_id']!r}" if "item_id" in df.columns else \
        f"row {int(mask.to_numpy().nonzero()[0][0])}"
    return f"{what} of model {row['model']!r}"


def check_rows(df: pd.DataFrame, metric: str, instance: str) -> None:
    """Refuse an empty frame, a NaN or out-of-range outcome, a missing key or tier."""
    if df.empty:
        raise ValueError(f"unit-of-n table: the frame has no rows (no {metric!r} outcomes)")
    for col in ("model", instance, "tier"):
        bad = df[col].isna()
        if bad.any():
            raise ValueError(f"unit-of-n table: {_name(df, bad)} has no {col!r}")
    values = pd.to_numeric(df[metric], errors="coerce")
    bad = values.isna()
    if bad.any():
        raise ValueError(f"unit-of-n table: {_name(df, bad)} has no number in column "
                         f"{metric!r} (got {df.loc[bad, metric].iloc[0]!r}); drop the item or "
                         "score it first")
    bad = (values < 0) | (values > 1)
    if bad.any():
        raise ValueError(f"unit-of-n table: {_name(df, bad)} has {metric!r} = "
                         f"{float(values[bad].iloc[0])!r}, outside [0, 1]")
