"""One cell = one model on one benchmark: computed by :func:`evaluate_cell` (no writing, so
it can run anywhere, e.g. on a worker) and stored by :func:`write_cell` (on the one process
that owns the results store).

A cell's COMPASS tables (integration gap and skill load, :mod:`foilbench.analysis.compass`)
are computed with it when the benchmark is COMPASS-style, and stored with the run, so the
report reads them instead of recomputing.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.evaluation import Evaluation, RunRecord, evaluate_run, run_config_hash, store_run
from foilbench.models.live import refresh_fingerprint
from foilbench.runner.log import Log, contained_warnings
from foilbench.runner.notes import cell_notes
from foilbench.runner.progress import bars_wanted
from foilbench.runner.settings import RunSettings
from foilbench.runner.setup import ensure_checksum
from foilbench.scoring.result import EvalResult


@dataclass
class CellResult:
    """A computed, unstored cell: the evaluation and its COMPASS tables (None if not
    COMPASS-style)."""

    evaluation: Evaluation
    compass: dict[str, Any] | None

    @property
    def result(self) -> EvalResult:
        return self.evaluation.result

    @property
    def metrics(self) -> pd.DataFrame:
        return self.evaluation.metrics


@dataclass
class CellRecord(RunRecord):
    """A stored cell: :class:`evaluation.RunRecord` plus its COMPASS tables."""

    compass: dict[str, Any] | None = None


def evaluate_cell(adapter: Any, bench: Benchmark, settings: RunSettings | None = None, *,
                  cache: Any = None, revision: str | None = None, progress: Any = None,
                  log: Log | None = None) -> CellResult:
    """Evaluate ``adapter`` on ``bench`` with ``settings``; touches no results store (the
    embedding cache, when given, is the only side effect). ``progress``: a display the engine
    reports its stages to (:class:`foilbench.runner.progress.RunProgress`; default: its own
    bars when ``settings.progress``). With ``log``, Python warnings raised meanwhile go there
    (:func:`~foilbench.runner.log.contained_warnings`) instead of the console."""
    settings = settings or RunSettings()

    def run(model: Any) -> Evaluation:
        return evaluate_run(model, bench, cache=cache, batch_size=settings.batch_size,
                            progress=bars_wanted(settings.progress) if progress is None
                            else progress,
                            revision=revision, **settings.scoring())

    with contained_warnings(log) if log is not None else contextlib.nullcontext():
        if settings.precision:  # a float32 pass too; changed outcomes go in the stats
            from foilbench.scoring.precision import evaluate_in_precision

            evaluation, _ = evaluate_in_precision(adapter, settings.precision, run)
        else:
            evaluation = run(adapter)
        notes = cell_notes(adapter, bench, settings.ci_method, evaluation.metrics)
        evaluation.result.stats.update(notes)  # stored with the run's stats
        evaluation.provenance.update(notes)
        compass = compass_summary(evaluation.result)
    return CellResult(evaluation, compass)


def write_cell(store: Any, cell: CellResult, *, batch_id: str | None = None,
               metadata: dict[str, Any] | None = None) -> CellRecord:
    """Store one computed cell (run, items, outcomes, metrics, COMPASS tables) atomically.
    ``metadata`` (the caller's, e.g. a training step: :func:`check_metadata`) is stored with
    the run's stats (``eval_stats["metadata"]``) and provenance."""
    if metadata:
        cell.evaluation.result.stats["metadata"] = dict(metadata)
        cell.evaluation.provenance["metadata"] = dict(metadata)
    rec = store_run(store, cell.evaluation, batch_id=batch_id, compass=cell.compass)
    return CellRecord(rec.run_id, rec.result, rec.metrics, rec.provenance, cell.compass)


def finished_run(store: Any, adapter: Any, bench: Benchmark,
                 settings: RunSettings) -> str | None:
    """The stored run of this (model fingerprint, benchmark checksum, scoring settings), if
    one finished before; a resumed sweep reuses it instead of recomputing."""
    refresh_fingerprint(adapter)  # a model held in memory: its weights as they are now
    fingerprint = adapter.info.fingerprint
    if settings.precision:  # the stored run carries the low-precision model's fingerprint
        from foilbench.scoring.precision import PRECISIONS

        fingerprint = adapter.fingerprint_for(PRECISIONS[settings.precision])
    return store.find_run(fingerprint, ensure_checksum(bench),
                          run_config_hash(**settings.scoring(), bench=bench))


def compass_summary(result: EvalResult) -> dict[str, Any] | None:
    """COMPASS integration gap and skill-load tables of a COMPASS-style result, else None."""
    items = result.benchmark.items
    if "role" not in items.columns or "r1" not in result.outcomes:
        return None
    from foilbench.analysis.compass import compass_tables, markdown_table  # COMPASS runs only

    tables = compass_tables(items.assign(r1=result.outcomes["r1"]))
    return {"gap": tables["gap"].to_dict(orient="records"),
            "table2": tables["table2"].to_dict(orient="records"),
            "gap_by_level_markdown": markdown_table(tables["table2"]),
            "skill_load": tables["table3"].reset_index().to_dict(orient="records"),
            "skill_load_note": tables["table3_note"],
            "gap_markdown": tables["gap_markdown"],
            "skill_load_markdown": tables["table3_markdown"] + tables["table3_note"] + "\n",
            "dropped_incomplete": tables["dropped_incomplete"],
            "dropped_k": tables["dropped_k"]}


def check_metadata(metadata: Any) -> dict[str, Any] | None:
    """``metadata`` as a plain dict of JSON values with string keys (None stays None), or a
    :class:`RunnerError` naming what is wrong."""
    import json

    from foilbench.runner.settings import RunnerError

    if metadata is None:
        return None
    if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
        raise RunnerError(f"metadata must be a dict with string keys, got "
                          f"{type(metadata).__name__}")
    try:
        return json.loads(json.dumps(metadata, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise RunnerError(f"metadata must hold JSON values (numbers, strings, lists, "
                          f"dicts): {e}") from None
