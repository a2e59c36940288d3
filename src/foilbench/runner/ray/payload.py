"""What a Ray worker sends back for one cell: plain data, never the model or the benchmark.

A worker computes a :class:`~foilbench.runner.cell.CellResult` with the same
:func:`~foilbench.runner.cell.evaluate_cell` as the sequential runner, then flattens it to
numpy arrays, JSON-able dicts and the metric table as Arrow IPC bytes (:func:`to_payload`).
The driver already holds the benchmark, so :func:`from_payload` rebuilds the cell around the
driver's own :class:`~foilbench.data.format.Benchmark` and :func:`write_cell` stores exactly
what a sequential run would have stored. Keeping the payload to plain data keeps it small
(the benchmark's items and images never travel back) and independent of class versions.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from foilbench.data.format import Benchmark
from foilbench.evaluation import Evaluation
from foilbench.models.base import ModelInfo
from foilbench.runner.cell import CellResult
from foilbench.scoring.result import EvalResult


def frame_to_bytes(frame: pd.DataFrame) -> bytes:
    """Arrow IPC stream bytes of ``frame`` (index dropped)."""
    table = pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def frame_from_bytes(data: bytes) -> pd.DataFrame:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all().to_pandas()


def to_payload(cell: CellResult) -> dict[str, Any]:
    """The plain-data form of a computed cell (see the module docstring)."""
    result = cell.result
    lengths = np.array([len(s) for s in result.scores], dtype=np.int64)
    flat = (np.concatenate([np.asarray(s, dtype=np.float64) for s in result.scores])
            if len(result.scores) else np.zeros(0))
    return {
        "benchmark_checksum": result.benchmark.manifest.checksum,
        "n_items": len(result.benchmark),
        "model": asdict(result.model),
        "scores": flat, "score_lengths": lengths,
        "outcomes": {k: np.asarray(v) for k, v in result.outcomes.items()},
        "ties": {k: np.asarray(v) for k, v in result.ties.items()},
        "chance": {k: np.asarray(v) for k, v in result.chance.items()},
        "stats": dict(result.stats),
        "metrics": frame_to_bytes(cell.metrics),
        "provenance": cell.evaluation.provenance,
        "compass": cell.compass,
    }


def from_payload(payload: dict[str, Any], bench: Benchmark) -> CellResult:
    """The cell a worker computed, around the driver's ``bench`` (which must be the one the
    worker evaluated: same checksum and item count)."""
    if (payload["benchmark_checksum"] != bench.manifest.checksum
            or payload["n_items"] != len(bench)):
        raise ValueError(f"a worker's result for {bench.name!r} does not match the driver's "
                         "benchmark (checksum or item count differ)")
    ends = np.cumsum(payload["score_lengths"])
    flat = np.array(payload["scores"])  # a writable copy (Ray hands out read-only views)
    scores = np.split(flat, ends[:-1]) if len(ends) else []

    def arrays(name: str) -> dict[str, np.ndarray]:
        return {k: np.array(v) for k, v in payload[name].items()}

    result = EvalResult(benchmark=bench, model=ModelInfo(**payload["model"]), scores=scores,
                        outcomes=arrays("outcomes"), ties=arrays("ties"),
                        chance=arrays("chance"), stats=payload["stats"])
    evaluation = Evaluation(result, frame_from_bytes(payload["metrics"]), payload["provenance"])
    return CellResult(evaluation, payload["compass"])
