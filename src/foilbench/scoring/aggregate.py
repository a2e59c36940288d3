"""An :class:`EvalResult` as one long table, the input of every breakdown.

One row per (item, metric) with ``outcome`` (0/1, or a fraction for averaged API asks), ``tie``,
``chance`` and the item's metadata columns. The statistics layer
(:func:`foilbench.stats.breakdown.metric_table`) turns it into metrics with intervals; keeping
the two apart keeps ``scoring`` free of statistics (layers import downward only).

Scoring units. A benchmark whose manifest names ``extras["score_unit"]`` (a metadata column,
e.g. ``instance_id``) is counted once per unit, not once per item: the unit's items are ANDed
(:func:`unit_outcomes`). SugarCrepe++ needs it: CompoSET Table 8 counts one result per
instance, right when both positives beat the shared negative, which no single item of the
existing kinds expresses. ``extras["unit_chance"]`` gives the unit's chance when the items are
not independent (1/3 for "the negative below both positives"); without it the product of the
items' chances is used. The per-item outcomes stay in the result and the store.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.scoring.result import EvalResult


def metadata_frame(result: EvalResult) -> pd.DataFrame:
    """The benchmark's metadata columns (payload columns removed), one row per item."""
    return result.benchmark.metadata().reset_index(drop=True)


def long_outcomes(result: EvalResult) -> pd.DataFrame:
    """Rows (item, metric): item_id, metric, outcome, tie, chance, plus metadata columns."""
    meta = metadata_frame(result)
    n = len(meta)
    frames = []
    for metric in result.metrics:
        lengths = {len(result.outcomes[metric]), len(result.ties[metric]),
                   len(result.chance[metric])}
        if lengths != {n}:
            raise ValueError(f"metric {metric!r}: per-item arrays of lengths {sorted(lengths)} "
                             f"for {n} items")
        frame = meta.copy()
        frame["metric"] = metric
        frame["outcome"] = np.asarray(result.outcomes[metric], dtype=np.float64)
        frame["tie"] = np.asarray(result.ties[metric], dtype=bool)
        frame["chance"] = np.asarray(result.chance[metric], dtype=np.float64)
        frames.append(frame)
    long = pd.concat(frames, ignore_index=True)
    extras = result.benchmark.manifest.extras
    unit = extras.get("score_unit")
    if unit:
        if unit not in long.columns:
            raise ValueError(f"benchmark {result.benchmark.name!r}: score_unit {unit!r} is not a "
                             f"metadata column (have: {', '.join(map(str, meta.columns))})")
        return unit_outcomes(long, unit, extras.get("unit_chance"))
    return long


def unit_outcomes(long: pd.DataFrame, unit: str, chance: float | None = None) -> pd.DataFrame:
    """One row per (metric, unit): outcome = product of the items' outcomes (their AND for 0/1
    outcomes), tie = any item tied, chance = ``chance`` or the product of the items' chances;
    metadata from the unit's first item, ``item_id`` = the unit, ``unit_items`` = its size."""
    grouped = long.groupby(["metric", unit], sort=False, dropna=False)
    out = grouped.first()
    out["outcome"] = grouped["outcome"].prod()
    out["tie"] = grouped["tie"].any()
    out["chance"] = float(chance) if chance is not None else grouped["chance"].prod()
    out["unit_items"] = grouped.size()
    out = out.reset_index()
    if "item_id" in out.columns:
        out["item_id"] = out[unit].astype(str)
    return out[[*long.columns, "unit_items"]]
