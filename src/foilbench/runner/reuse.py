"""A finished run reused instead of stored again.

``run`` and ``sweep`` key a run on (model fingerprint, benchmark checksum, scoring settings)
(:func:`foilbench.runner.cell.finished_run`). An identical run already in the store is read
back as the record ``run`` returns (its tables, summary.json and report use it as they use a
fresh one) rather than computed and stored a second time: the store keeps one run per key, and
comparisons never set a run against its own repeat. ``run(..., rerun=True)`` (``foilbench run
--rerun``) computes it again anyway and marks the new run as a repeat of the stored one
(``eval_stats.repeat_of``), so views that show one row per key can say so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from foilbench.data.format import Benchmark
from foilbench.runner.cell import CellRecord
from foilbench.scoring.result import EvalResult

REPEAT_KEY = "repeat_of"


def reused_message(spec: str, bench_name: str, run_id: str) -> str:
    return f"{spec} on {bench_name}: reused identical stored run {run_id[:8]}"


def stored_record(store: Any, run_id: str, adapter: Any, bench: Benchmark) -> CellRecord:
    """The stored run ``run_id`` as a :class:`CellRecord` on ``bench`` (the same checksum, so
    the same items): per-item scores, outcomes, ties and chance from the store, the stats it
    stored (plus ``reused``), its COMPASS tables."""
    info = store.get_run(run_id)
    items = store.load_item_results(run_id).set_index("item_id")
    order = bench.items["item_id"].astype(str)
    items = items.loc[order]
    metrics = [c[len("tie_"):] for c in items.columns
               if c.startswith("tie_") and c[len("tie_"):] in items.columns]
    model = replace(adapter.info, fingerprint=info["model_fingerprint"])
    stats = {**(info.get("eval_stats") or {}), "reused": info["run_id"]}
    result = EvalResult(
        benchmark=bench, model=model,
        scores=[np.asarray(s, dtype=np.float64) for s in items["scores"]],
        outcomes={m: items[m].to_numpy(dtype=np.float64) for m in metrics},
        ties={m: items[f"tie_{m}"].to_numpy(dtype=bool) for m in metrics},
        chance={m: items[f"chance_{m}"].to_numpy(dtype=np.float64) for m in metrics},
        stats=stats)
    provenance = {"created": str(info.get("created")), "seed": info.get("seed"),
                  "n_boot": info.get("n_boot"), "ci_method": info.get("ci_method"),
                  "tie_policy": info.get("tie_policy"), "config": info.get("config") or {},
                  "config_hash": info.get("config_hash"),
                  "package_version": info.get("package_version"),
                  "git_revision": info.get("git_revision"), "reused": True}
    return CellRecord(info["run_id"], result, store.load_metrics(run_id), provenance,
                      store.load_compass(run_id))
