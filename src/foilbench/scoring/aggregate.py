"""An :class:`EvalResult` as one long table, the input of every breakdown.

One row per (item, metric) with ``outcome`` (0/1, or a fraction for averaged API asks), ``tie``,
``chance`` and the item's metadata columns. The statistics layer
(:func:`foilbench.stats.breakdown.metric_table`) turns it into metrics with intervals; keeping
the two apart keeps ``scoring`` free of statistics (layers import downward only).
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
    return pd.concat(frames, ignore_index=True)
