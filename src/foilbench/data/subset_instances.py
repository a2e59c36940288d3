"""G.4 subsets of a tiered pair benchmark (CompoSET format) drawn by instance, not by item.

CompoSET App. G.4: "We separately evaluate generative VLMs on a stratified 200-instance
CompoSET subset"; Table 11's scores are whole counts of 200 instances (42.5% = 85/200), and
Table 12 has "~67 instances per tier". foilbench stores one item per (instance, tier), so
sampling items gave 200 items from ~191 instances, some with two tiers, and a fractional
count under the per-instance unit (k = 22.5). Here the unit of the draw is the instance:

* ``by`` without ``tier``: N instances, allocated over the strata of the other ``by``
  columns (values of an instance's first item; they must not differ between its tiers) by
  largest remainder (:func:`foilbench.data.allocation.allocate`), each instance with all its
  tiers (N x tiers items);
* ``by`` with ``tier`` (the paper's): N instances, each scored at one tier. Within each
  stratum its k instances are split over the tiers by largest remainder with equal weights
  (200 over three tiers: 67 short, 67 medium, 66 long) and dealt in draw order, tiers in short, medium, long
  order, each to the first drawn instance that has it: one item per instance, so every count
  is whole under every unit.

The paper does not print its allocation; this one is ours, recorded in the manifest.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.data.allocation import allocate
from foilbench.errors import BenchmarkError

TIER = "tier"
TIER_ORDER = ("short", "medium", "long")


def _tier_key(t: str) -> tuple[int, str]:
    return (TIER_ORDER.index(t) if t in TIER_ORDER else len(TIER_ORDER), t)


def instance_strata(items: pd.DataFrame, instance: str, by: tuple[str, ...],
                    name: str) -> dict[tuple, list]:
    """Stratum key -> the instances in it (sorted), from each instance's first item."""
    cols = [c for c in by if c != TIER]
    firsts = items.drop_duplicates(instance)
    for c in cols:
        varies = items.groupby(instance)[c].nunique(dropna=False)
        if (varies > 1).any():
            raise BenchmarkError(f"{name}: {c!r} differs between the tiers of {instance} "
                                 f"{varies[varies > 1].index[0]!r}; stratify instances by "
                                 "columns that are constant within an instance")
    keys = (firsts[cols].astype(object).where(firsts[cols].notna(), "NA").astype(str)
            .apply(tuple, axis=1) if cols else pd.Series([()] * len(firsts),
                                                         index=firsts.index))
    out: dict[tuple, list] = {}
    for key, inst in zip(keys, firsts[instance], strict=True):
        out.setdefault(key, []).append(inst)
    return {k: sorted(v, key=str) for k, v in sorted(out.items())}


def deal_tiers(drawn: list, tiers_of: dict, k_by_tier: dict[str, int], name: str) -> dict:
    """instance -> its one tier: tiers in paper order, each to the first drawn instances
    that have it and are not yet dealt."""
    out: dict = {}
    for tier in sorted(k_by_tier, key=_tier_key):
        want = k_by_tier[tier]
        for inst in drawn:
            if want == 0:
                break
            if inst not in out and tier in tiers_of[inst]:
                out[inst] = tier
                want -= 1
        if want:
            raise BenchmarkError(f"{name}: too few drawn instances have tier {tier!r} to "
                                 f"give it {k_by_tier[tier]}")
    return out


def instance_subset(items: pd.DataFrame, instance: str, n: int, by: tuple[str, ...],
                    seed: int, name: str) -> tuple[np.ndarray, dict]:
    """(row positions of the chosen items, sorted; the allocation record)."""
    strata = instance_strata(items, instance, by, name)
    total = sum(len(v) for v in strata.values())
    if not 1 <= n <= total:
        raise BenchmarkError(f"{name}: sample={n} must lie between 1 and the benchmark's "
                             f"{total} instances (a tiered benchmark is sampled by instance)")
    alloc = allocate({k: len(v) for k, v in strata.items()}, n)
    tiers_of = items.groupby(instance)[TIER].agg(lambda s: set(map(str, s))).to_dict()
    all_tiers = sorted({t for ts in tiers_of.values() for t in ts}, key=_tier_key)
    rng = np.random.default_rng(seed)
    chosen: dict = {}  # instance -> tier, or None for all its tiers
    record = []
    for key, insts in strata.items():
        drawn = [insts[int(i)] for i in rng.choice(len(insts), alloc[key], replace=False)]
        entry = {"stratum": list(key), "size": len(insts), "chosen": alloc[key]}
        if TIER in by:
            # ties of the equal split go to the tiers in paper order (short first)
            per_tier = allocate({(i, t): 1 for i, t in enumerate(all_tiers)}, alloc[key])
            k_by_tier = {t: c for (_, t), c in per_tier.items()}
            chosen.update(deal_tiers(drawn, tiers_of, k_by_tier, name))
            entry["tiers"] = {t: k_by_tier[t] for t in all_tiers}
        else:
            chosen.update(dict.fromkeys(drawn))
        record.append(entry)
    keep = np.array([i in chosen for i in items[instance]], dtype=bool)
    if TIER in by:
        keep = keep & np.array([chosen.get(i) == str(t) for i, t in
                          zip(items[instance], items[TIER], strict=True)])
    return np.flatnonzero(keep), {"unit": "instance", "instance_column": instance,
                                  "instances": n, "allocation": record}
