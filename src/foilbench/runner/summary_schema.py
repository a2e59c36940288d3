"""The format of ``summary.json``, as pydantic models, and its published JSON Schema.

``summary.json`` carries ``format_version`` (:data:`SUMMARY_FORMAT_VERSION`). The number
changes when a field is removed, renamed or changes meaning; new fields may be added within
a version (the models allow them where the document is open: provenance, ``eval_stats``,
the COMPASS and Auto-Comp blocks). ``docs/summary.schema.json`` is generated from these
models (``python -m foilbench.runner.summary_schema docs/summary.schema.json``) and a test
checks the checked-in file equals what they generate and that a real summary validates.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# the number lives beside the writer, which a run imports without pydantic
from foilbench.runner.summary import SUMMARY_FORMAT_VERSION  # noqa: F401 - published here


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class MetricRow(_Closed):
    """One metric with its interval (``unit``: the unit of n, None for a caller's table made
    without one)."""

    value: float | None
    k: float | None
    n: int | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str | None
    chance: float | None
    ties: int | None
    unit: str | None


class ResultRow(MetricRow):
    """One flat row per run and metric."""

    run_id: str
    model: str
    benchmark: str
    metric: str


class Provenance(_Open):
    """What produced the numbers (:func:`foilbench.provenance.collect_provenance`)."""

    package_version: str
    git_revision: str
    created: str = Field(description="ISO 8601 time, UTC")
    seed: int
    n_boot: int
    ci_method: str
    tie_policy: str
    python: str
    platform: str
    libraries: dict[str, str | None] = Field(
        description="installed version of torch, open_clip_torch, transformers, numpy, duckdb "
                    "and pillow (null: not installed)")
    device: str = Field(description="cpu, cuda[:N], mps, or none (no local model ran)")
    gpu: str | None = Field(description="the CUDA device's name, else null")
    config: dict[str, Any]
    config_hash: str


class Dropped(_Closed):
    n: int
    by_reason: dict[str, int]


class RunEntry(_Closed):
    """One stored run (:func:`foilbench.runner.summary.summary_entry`)."""

    run_id: str
    model: str
    model_fingerprint: str
    score_kind: str
    benchmark: str
    benchmark_kind: str
    benchmark_checksum: str
    primary_metric: str | None
    n_items: int
    partial: bool
    dropped: Dropped | None
    metrics: dict[str, MetricRow]
    by_tier: dict[str, dict[str, MetricRow]] = Field(
        description="metric -> tier -> row, on tiered pair benchmarks (CompoSET Table 10)")
    eval_stats: dict[str, Any]
    provenance: Provenance


class Summary(_Closed):
    """``summary.json``: the machine-readable outcome of one ``foilbench run``."""

    model_config = ConfigDict(extra="forbid", title="foilbench summary.json")

    format_version: Literal[1] = Field(description="changes when a field is removed, "
                                                   "renamed or changes meaning")
    batch_id: str
    db_path: str
    provenance: Provenance
    results: list[ResultRow]
    runs: list[RunEntry]
    reference: dict[str, dict[str, Any]] = Field(
        description="benchmark -> chance rows and, for choice kinds, the blind text-only row")
    compass: dict[str, Any] = Field(description="run id -> COMPASS tables")
    autocomp: dict[str, Any] = Field(description="run id -> Auto-Comp r1 vs r1_valid block")


def summary_schema() -> dict[str, Any]:
    """The JSON Schema of ``summary.json``."""
    schema = Summary.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def schema_text() -> str:
    """:func:`summary_schema` as the text of ``docs/summary.schema.json``."""
    return json.dumps(summary_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m foilbench.runner.summary_schema PATH``: write the schema to PATH."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m foilbench.runner.summary_schema PATH", file=sys.stderr)
        return 2
    Path(args[0]).write_text(schema_text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
