"""Evaluate, aggregate and store one (model, benchmark) run: the library call under ``run``.

Composes the layers without re-implementing any of them: :func:`scoring.engine.evaluate`
(scores and outcomes) -> :func:`scoring.aggregate.long_outcomes` ->
:func:`stats.breakdown.metric_table` (intervals) -> :class:`store.db.ResultsStore` (one
transaction). Also builds the ``summary.json`` entries and the reference rows (chance, and the
blind text-only baseline when :mod:`foilbench.audit.blind` is installed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.provenance import collect_provenance
from foilbench.scoring.aggregate import long_outcomes
from foilbench.scoring.engine import evaluate
from foilbench.scoring.result import EvalResult
from foilbench.stats.bootstrap import DEFAULT_N_BOOT, DEFAULT_SEED
from foilbench.stats.breakdown import metric_table

SUMMARY_FIELDS = ("value", "k", "n", "ci_low", "ci_high", "ci_method", "chance", "ties")


@dataclass
class RunRecord:
    run_id: str
    result: EvalResult
    metrics: pd.DataFrame
    provenance: dict[str, Any]


def evaluate_and_store(adapter: Any, bench: Benchmark, store: Any, *, cache: Any = None,
                       batch_size: int = 64, n_boot: int = DEFAULT_N_BOOT,
                       seed: int = DEFAULT_SEED, ci_method: str = "auto",
                       by: list[str] | None = None, batch_id: str | None = None,
                       progress: bool = True, revision: str | None = None) -> RunRecord:
    """Evaluate ``adapter`` on ``bench``, compute metrics with CIs, write one run to ``store``."""
    result = evaluate(adapter, bench, cache=cache, batch_size=batch_size, progress=progress)
    metrics = metric_table(long_outcomes(result), by=by, method=ci_method, n_boot=n_boot,
                           seed=seed)
    provenance = collect_provenance(seed=seed, n_boot=n_boot, ci_method=ci_method,
                                    extra=_config_extra(by), revision=revision)
    run_id = store.write_run(result, metrics, provenance, batch_id=batch_id)
    return RunRecord(run_id, result, metrics, provenance)


def _config_extra(by: list[str] | None) -> dict[str, Any] | None:
    return {"breakdown": by} if by else None


def run_config_hash(*, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT,
                    ci_method: str = "auto", by: list[str] | None = None) -> str:
    """The ``config_hash`` :func:`evaluate_and_store` records for these settings; a sweep
    looks finished runs up by it."""
    return collect_provenance(seed=seed, n_boot=n_boot, ci_method=ci_method,
                              extra=_config_extra(by), revision="-")["config_hash"]


def overall_metrics(metrics: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """metric -> {value, k, n, ci_low, ci_high, ci_method, chance, ties} of the overall rows."""
    overall = metrics[metrics["group_by"] == ""]
    return {row["metric"]: {f: _plain(row[f]) for f in SUMMARY_FIELDS}
            for _, row in overall.iterrows()}


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def summary_entry(record: RunRecord) -> dict[str, Any]:
    """The ``summary.json`` block of one run."""
    bench, model = record.result.benchmark, record.result.model
    dropped = bench.dropped
    return {
        "run_id": record.run_id,
        "model": model.spec,
        "model_fingerprint": model.fingerprint,
        "score_kind": model.score_kind,
        "benchmark": bench.name,
        "benchmark_kind": bench.kind,
        "benchmark_checksum": bench.manifest.checksum,
        "primary_metric": bench.manifest.primary_metric,
        "n_items": len(bench),
        "partial": bool(bench.manifest.partial),
        "dropped": ({"n": dropped.n, "by_reason": dropped.by_reason} if dropped else None),
        "metrics": overall_metrics(record.metrics),
        "eval_stats": record.result.stats,
        "provenance": record.provenance,
    }


def chance_rows(metrics: pd.DataFrame) -> dict[str, float]:
    """metric -> mean per-item chance (the reference line every table shows)."""
    return {m: float(v["chance"]) for m, v in overall_metrics(metrics).items()}


def blind_rows(bench: Benchmark) -> dict[str, dict[str, Any]]:
    """The blind text-only reference row (cross-fitted cheap scorers; ``{}`` for pair kinds)."""
    from foilbench.audit.blind import reference_rows

    return reference_rows(bench)


def compass_summary(record: RunRecord) -> dict[str, Any] | None:
    """COMPASS integration gap and skill-load tables of a COMPASS-style run, else None."""
    items = record.result.benchmark.items
    if "role" not in items.columns or "r1" not in record.result.outcomes:
        return None
    from foilbench.analysis.compass import compass_tables, markdown_table

    tables = compass_tables(items.assign(r1=record.result.outcomes["r1"]))
    by_level = tables["gap"][tables["gap"]["N"].astype(str) == "all"]
    return {"gap": tables["gap"].to_dict(orient="records"),
            "gap_by_level_markdown": markdown_table(by_level),
            "skill_load": tables["table3"].reset_index().to_dict(orient="records"),
            "gap_markdown": tables["gap_markdown"],
            "skill_load_markdown": tables["table3_markdown"],
            "dropped_incomplete": tables["dropped_incomplete"]}


def autocomp_summary(record: RunRecord) -> dict[str, Any] | None:
    """Auto-Comp r1 (the paper's) beside r1_valid (primary) with the count of items holding a
    true negative, per cell (:mod:`foilbench.analysis.autocomp_valid`); None for other runs."""
    from foilbench.analysis.autocomp_valid import run_summary

    return run_summary(record.result)
