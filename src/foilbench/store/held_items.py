"""A run's per-item table as the results store gives it back, made from the run in memory.

``foilbench run`` writes its report from the store right after writing the run there, and
reading the per-item table back (:meth:`foilbench.store.db.ResultsStore.load_item_results`:
every item's JSON and scores fetched and parsed, the long outcome table fetched and pivoted)
was about two thirds of the report's reading. The run still holds what it wrote, so this
builds the same table from it, the same values of the same types in the same order:

- an item is stored as its record's JSON with sorted keys (``ResultsStore._item_frame``,
  :func:`foilbench.store.db.to_json`). When every cell is plain (exactly ``str``, ``int``,
  ``bool``, ``None`` or a finite ``float``), parsing that JSON gives back the record's own
  values with the keys sorted, so the table is the ``pd.DataFrame`` of those values, made
  column by column without the JSON or a dict per item;
- the scores go through the list of floats they are stored as, the outcomes, ties and chance
  are the arrays stored (``float64``, ``bool``, ``float64``), one column each per metric in
  the order written.

Any other items table (a list, a NaN or missing value, a NumPy scalar in an object column, a
date, a name that is not a string or appears twice, no item at all) gives None, and the caller reads the
store as before. ``tests/test_report_held_items.py`` holds this to the store's table and
the report to the one ``foilbench report`` writes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

_PLAIN = frozenset((str, int, bool, type(None)))


def held_item_results(result: Any) -> pd.DataFrame | None:
    """``load_item_results`` of the run that stored ``result`` (an
    :class:`foilbench.scoring.result.EvalResult`), or None when its items are not all plain
    (module docstring)."""
    items = result.benchmark.items
    names = items.columns.tolist()
    if not len(items) or len(set(names)) != len(names) or any(type(n) is not str for n in names):
        return None
    cells: dict[str, list] = {}
    for k, name in enumerate(names):
        values = items.iloc[:, k].tolist()
        if not all(type(v) in _PLAIN or (type(v) is float and math.isfinite(v))
                   for v in values):
            return None
        cells[name] = values
    # to_json's sort_keys; built by column: pandas infers each column's dtype from its
    # values as it does for the store's list of parsed dicts (the test holds the two equal)
    table = pd.DataFrame({k: cells[k] for k in sorted(names)})
    table["item_id"] = items["item_id"].astype(str).tolist()
    table["scores"] = [np.array(s, dtype=np.float64) for s in result.scores]
    for metric in result.metrics:
        table[metric] = np.asarray(result.outcomes[metric], dtype=np.float64)
        table[f"tie_{metric}"] = np.asarray(result.ties[metric], dtype=bool)
        table[f"chance_{metric}"] = np.asarray(result.chance[metric], dtype=np.float64)
    return table
