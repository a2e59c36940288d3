"""Per-item results of a stored run as one flat table (what ``foilbench export`` writes and
what a notebook loads into pandas).

One row per item in benchmark order: the run's model and benchmark, the item's id, payload and
metadata, its raw ``scores`` (flattened as the store keeps them: pair [s(c0,i0), s(c0,i1),
s(c1,i0), s(c1,i1)], choice positive first), and per metric the outcome (1 = correct under
strict >), ``tie_<metric>`` and ``chance_<metric>``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from foilbench.errors import FoilbenchError
from foilbench.store.db import ResultsStore

FORMATS = ("parquet", "csv")


def _existing(db_path: str | Path) -> Path:
    path = Path(db_path)
    if not path.is_file():
        raise FoilbenchError(f"no results database at {path}; run `foilbench run` first or "
                             "pass --db")
    return path


def resolve_run(db_path: str | Path, run: str) -> str:
    """The full id of ``run`` (an id or unique prefix); a clear error when none matches."""
    with ResultsStore(_existing(db_path), read_only=True) as store:
        return store.resolve_run_id(run)


def item_table(db_path: str | Path, run: str) -> pd.DataFrame:
    """The per-item table of ``run`` (an id or unique prefix) from the store at ``db_path``."""
    with ResultsStore(_existing(db_path), read_only=True) as store:
        info = store.get_run(run)
        items = store.load_item_results(info["run_id"])
    head = pd.DataFrame({"run_id": info["run_id"], "model_spec": info["model_spec"],
                         "benchmark_name": info["benchmark_name"]}, index=items.index)
    items["scores"] = [np.asarray(s, dtype=float).tolist() for s in items["scores"]]
    first = ["item_id"]
    rest = [c for c in items.columns if c not in first]
    return pd.concat([head, items[first + rest]], axis=1)


def _csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Lists and dicts as JSON text, so a CSV cell holds one readable value."""
    out = frame.copy()
    for col in out.columns:
        if out[col].map(lambda v: isinstance(v, list | dict | tuple | np.ndarray)).any():
            out[col] = out[col].map(lambda v: json.dumps(v.tolist() if isinstance(v, np.ndarray)
                                                         else v)
                                    if isinstance(v, list | dict | tuple | np.ndarray) else v)
    return out


def export_items(db_path: str | Path, run: str, out: str | Path, fmt: str) -> Path:
    """Write ``run``'s per-item table to ``out`` as Parquet or CSV; returns the path."""
    if fmt not in FORMATS:
        raise FoilbenchError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    frame = item_table(db_path, run)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    try:
        if fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            _csv_safe(frame).to_csv(tmp, index=False)
        tmp.replace(out)
    except Exception as e:  # a full disk: no .part left, one sentence naming the file
        from foilbench.staged import DiskWriteError, disk_sentence

        tmp.unlink(missing_ok=True)
        sentence = disk_sentence(e, out, "the export", "nothing was written there")
        if sentence is None:
            raise
        raise DiskWriteError(sentence) from None
    return out
