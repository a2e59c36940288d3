"""``summary.json``: the machine-readable outcome of one ``run`` invocation.

Fields: ``format_version`` (:data:`SUMMARY_FORMAT_VERSION`, held here so a run does not import
pydantic for one number; the published JSON Schema is ``docs/summary.schema.json``, from
:mod:`foilbench.runner.summary_schema`), ``batch_id``, ``db_path``, ``provenance``,
``results`` (one flat row per run and metric, with its ``unit`` of n), ``runs`` (one block per
run, see :func:`summary_entry`; on a tiered pair benchmark also ``by_tier``: metric -> tier ->
the per-tier row, CompoSET Table 10's unit), ``reference`` (chance and blind rows per
benchmark), ``compass`` (COMPASS tables per run id, for COMPASS-style benchmarks) and
``autocomp`` (per run id, for runs whose items list true negatives: the paper's r1 beside
r1_valid, the count of items holding a true negative and the per-cell table,
:func:`foilbench.analysis.autocomp_valid.run_summary`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

SUMMARY_FORMAT_VERSION = 1  # when it changes: foilbench.runner.summary_schema's docstring
SUMMARY_FIELDS = ("value", "k", "n", "ci_low", "ci_high", "ci_method", "chance", "ties", "unit")


def overall_metrics(metrics: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """metric -> {value, k, n, ci_low, ci_high, ci_method, chance, ties, unit} of the overall
    rows (``unit`` None for a table made without one)."""
    return _rows(metrics[metrics["group_by"].fillna("") == ""])


def tier_metrics(metrics: pd.DataFrame) -> dict[str, dict[str, dict[str, Any]]]:
    """metric -> tier -> the per-tier row (empty without a tier breakdown)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for metric, part in metrics[metrics["group_by"] == "tier"].groupby("metric", sort=False):
        out[metric] = {str(v): row for v, row in zip(part["group_value"],
                                                     _rows(part, key=None), strict=True)}
    return out


def _rows(frame: pd.DataFrame, key: str | None = "metric") -> Any:
    rows = [{f: _plain(row.get(f)) for f in SUMMARY_FIELDS} for row in
            frame.to_dict(orient="records")]
    if key is None:
        return rows
    return {r: row for r, row in zip(frame[key], rows, strict=True)}


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def summary_entry(record: Any) -> dict[str, Any]:
    """The ``summary.json`` block of one stored run (a :class:`evaluation.RunRecord`)."""
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
        "by_tier": tier_metrics(record.metrics),
        "eval_stats": record.result.stats,
        "provenance": record.provenance,
    }


def build_summary(*, batch_id: str, db_path: str, provenance: dict[str, Any], records: list,
                  reference: dict[str, Any]) -> dict[str, Any]:
    """The whole ``summary.json`` document (before JSON cleaning)."""
    entries = [summary_entry(r) for r in records]
    return {
        "format_version": SUMMARY_FORMAT_VERSION,
        "batch_id": batch_id,
        "db_path": db_path,
        "provenance": provenance,
        "results": [{"run_id": e["run_id"], "model": e["model"], "benchmark": e["benchmark"],
                     "metric": m, **v} for e in entries for m, v in e["metrics"].items()],
        "runs": entries,
        "reference": reference,
        "compass": {r.run_id: r.compass for r in records
                    if getattr(r, "compass", None) is not None},
        "autocomp": autocomp_blocks(records),
    }


def autocomp_blocks(records: list) -> dict[str, dict[str, Any]]:
    """run id -> the Auto-Comp r1 vs r1_valid block, for the runs that scored ``r1_valid``."""
    from foilbench.analysis.autocomp_valid import run_summary

    return {r.run_id: block for r in records if (block := run_summary(r.result)) is not None}
