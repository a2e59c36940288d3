"""CompoSET-format benchmarks: pair items carrying caption tiers and an instance key.

CompoSET: "An instance is a tuple of two images (base, foil) and three matched caption pairs at
three verbosity tiers (short, medium, long)" (App. A); foilbench stores one pair item per
(instance, tier). The instance key is ``foil_id`` (the world's pairs, ``construct composet``)
or ``instance_id`` (the ``composet:DIR`` loader). Which unit of n a tiered run reports is
decided in :mod:`foilbench.stats.units`; this module only recognises the format and checks
that its instances are well formed (one item per instance and tier, one scene per instance).
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from foilbench.errors import BenchmarkError

TIER = "tier"
INSTANCE_KEYS = ("foil_id", "instance_id")


def instance_column(columns: Iterable[str]) -> str | None:
    """The first of :data:`INSTANCE_KEYS` among ``columns``, else None."""
    cols = set(columns)
    return next((c for c in INSTANCE_KEYS if c in cols), None)


def is_tiered(is_edit_pair: bool, items: pd.DataFrame) -> bool:
    """A pair benchmark whose items carry an instance key and at least two tiers."""
    return (bool(is_edit_pair) and TIER in items.columns
            and instance_column(items.columns) is not None
            and items[TIER].dropna().nunique() > 1)


def check_instances(items: pd.DataFrame, instance: str, cluster: str | None = "scene_id",
                    where: str = "benchmark") -> None:
    """Raise :class:`BenchmarkError` naming the item when an instance key or tier is missing,
    an (instance, tier) appears twice, or an instance spans two scenes (its tier mean would
    mix clusters)."""
    ids = items["item_id"] if "item_id" in items.columns else pd.Series(items.index)
    for col in (instance, TIER):
        bad = items[col].isna()
        if bad.any():
            raise BenchmarkError(f"{where}: item {ids[bad].iloc[0]!r} has no {col!r} (every "
                                 f"item of a tiered pair benchmark needs {instance!r} and "
                                 f"{TIER!r})")
    dup = items.duplicated([instance, TIER])
    if dup.any():
        row = items[dup].iloc[0]
        raise BenchmarkError(f"{where}: {instance} {row[instance]!r} appears twice in tier "
                             f"{row[TIER]!r} (item {ids[dup].iloc[0]!r}); one item per "
                             "instance and tier")
    if cluster and cluster in items.columns:
        spans = items.groupby(instance)[cluster].nunique(dropna=False)
        if (spans > 1).any():
            key = spans[spans > 1].index[0]
            scenes = sorted(map(str, items.loc[items[instance] == key, cluster].unique()))
            raise BenchmarkError(f"{where}: {instance} {key!r} spans {cluster}s "
                                 f"{', '.join(scenes)}; an instance belongs to one scene")
