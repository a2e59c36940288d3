"""The unit of n in the report: which aggregation every pair-benchmark table shows, and the
primary metric of tiered pair benchmarks under each unit side by side
(:mod:`foilbench.analysis.units`).

CompoSET counts instances: its §5 intervals use "n = 1,776 instances" (tiers not pooled), and
Table 9 pools tiers: "n is per-edit-type instance count, summed across short/medium/long tiers
(3x the per-scene count)". ``foilbench run`` stores each metric row with its unit of n
(``--unit``, default ``paper``: overall per instance, tiers per tier, other breakdowns pooled;
:mod:`foilbench.stats.units`); rows stored before that carry none and were pooled. This
section shows per tier, per instance (the tier mean) and pooled side by side, each with its n
and interval.
"""

from __future__ import annotations

import pandas as pd

from foilbench.data.tiers import instance_column, is_tiered
from foilbench.kinds import kind_of
from foilbench.report.html import esc, fmt_pct, section, table
from foilbench.stats.units import LABELS

POOLED = LABELS["pooled"]
ITEMS = LABELS["items"]


def tiered(run) -> bool:
    """A pair run whose items carry caption tiers and an instance key (CompoSET format:
    ``foil_id`` or ``instance_id``)."""
    return is_tiered(kind_of(run.run["benchmark_kind"]).is_edit_pair, run.items)


def unit_of(run, row=None) -> str:
    """The unit of n of a stored metric row (its ``unit``), labelled; a row stored before
    units were recorded (or ``row=None``): pooled on a tiered run, items otherwise."""
    unit = None if row is None else row.get("unit")
    if isinstance(unit, str) and unit:
        return LABELS.get(unit, unit)
    return POOLED if tiered(run) else ITEMS


def _cell(row) -> str:
    return (f"{fmt_pct(row['value'])} [{fmt_pct(row['ci_low'])}, {fmt_pct(row['ci_high'])}] "
            f"n = {int(row['n'])}")


def unit_rows(group, labels, metric: str) -> tuple[list[str], list[list], set[str]]:
    """Headers, one row per model (per tier ..., per instance, pooled) and the interval
    methods used, from :func:`foilbench.analysis.units.unit_table` with each run's own
    bootstrap settings."""
    from foilbench.analysis.units import unit_table

    tabs = []
    for r in group:
        df = r.items.assign(model=labels[r.run["run_id"]])
        tabs.append(unit_table(df, metric, instance=instance_column(df.columns),
                               n_boot=int(r.run["n_boot"]),
                               seed=int(r.run["seed"])))
    tab = pd.concat(tabs, ignore_index=True)
    order = ["short", "medium", "long"]
    tiers = sorted(set(tab.loc[tab["unit"] == "per_tier", "tier"]),
                   key=lambda t: (order.index(t) if t in order else len(order), t))
    heads = ["model", *(f"tier {t}" for t in tiers), "per instance (tier mean)", "pooled"]
    rows = []
    for model, g in tab.groupby("model", sort=False):
        by = {(u, t): row for u, t, row in zip(g["unit"], g["tier"],
                                                 g.to_dict(orient="records"), strict=True)}
        rows.append([model, *(_cell(by[("per_tier", t)]) if ("per_tier", t) in by else "–"
                              for t in tiers),
                     _cell(by[("instance", "all")]), _cell(by[("pooled", "all")])])
    return heads, rows, set(tab["ci_method"])


def units_section(runs) -> str:
    """'' when no run is on a tiered pair benchmark."""
    from foilbench.report.headline import by_benchmark, model_labels, primary_metric

    labels = model_labels(runs)
    parts = []
    for group in by_benchmark(runs).values():
        group = [r for r in group if tiered(r) and not r.items.empty]
        if not group:
            continue
        metric = primary_metric(group[0])
        heads, rows, methods = unit_rows(group, labels, metric)
        parts.append(f"<h3>{esc(group[0].run['benchmark_name'])}: {esc(metric)} %</h3>"
                     + table(heads, rows, numeric=[False] + [True] * (len(heads) - 1))
                     + f"<p class='note'>95% intervals: {esc(', '.join(sorted(methods)))}."
                       "</p>")
    if not parts:
        return ""
    return section("Unit of n: per tier, per instance, pooled", "".join(parts), "units",
                   "CompoSET §5 reports instances (n = 1,776, tiers not pooled); its Table 9 "
                   "pools the three tiers (n = 3 x instances). Per tier: each tier alone, n = "
                   "its instances. Per instance: each instance's outcome averaged over its "
                   "tiers, n = instances (binomial intervals take the sum of tier means as k). "
                   "Pooled: every (instance, tier) row (the 'unit of n' column of 'Every "
                   "metric' says which each stored row uses; `foilbench run --unit` chooses "
                   "it). When "
                   "every instance has every tier, per instance and pooled share their value "
                   "and differ in n (and in binomial intervals; the scene bootstrap gives both "
                   "the same interval).")
