"""Evaluate and aggregate one (model, benchmark) run, and store it: the core under the runner.

Composes the layers without re-implementing any of them: :func:`scoring.engine.evaluate`
(scores and outcomes) -> :func:`scoring.aggregate.long_outcomes` ->
:func:`stats.breakdown.metric_table` (intervals) -> :class:`store.db.ResultsStore` (one
transaction). Computing (:func:`evaluate_run`) and writing (:func:`store_run`) are separate
calls so a scheduler can compute on workers and write on the driver; orchestration
(settings, resume, summaries, reference rows, COMPASS tables) lives in :mod:`foilbench.runner`,
which is also where :mod:`foilbench.analysis` and :mod:`foilbench.audit` are called from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.kinds import METADATA_COLUMNS
from foilbench.provenance import collect_provenance
from foilbench.scoring.aggregate import long_outcomes
from foilbench.scoring.engine import evaluate
from foilbench.scoring.result import EvalResult
from foilbench.stats.bootstrap import DEFAULT_N_BOOT, DEFAULT_SEED
from foilbench.stats.breakdown import metric_table


@dataclass
class Evaluation:
    """One computed, not yet stored run: per-item results, metric table, provenance."""

    result: EvalResult
    metrics: pd.DataFrame
    provenance: dict[str, Any]


@dataclass
class RunRecord:
    """A stored run: its id in the results store and what was stored."""

    run_id: str
    result: EvalResult
    metrics: pd.DataFrame
    provenance: dict[str, Any]


def evaluate_run(adapter: Any, bench: Benchmark, *, cache: Any = None, batch_size: int = 64,
                 n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED,
                 ci_method: str = "auto", by: list[str] | None = None, progress: Any = True,
                 revision: str | None = None) -> Evaluation:
    """Evaluate ``adapter`` on ``bench`` and compute metrics with CIs; writes nothing (the
    embedding cache, when given, is the only side effect). ``progress``: a bool (a bar per
    stage) or a display the stages report to (:mod:`foilbench.scoring.progress`)."""
    result = evaluate(adapter, bench, cache=cache, batch_size=batch_size, progress=progress)
    metrics = metric_table(long_outcomes(result), by=by, candidates=METADATA_COLUMNS,
                           method=ci_method, n_boot=n_boot, seed=seed)
    provenance = collect_provenance(seed=seed, n_boot=n_boot, ci_method=ci_method,
                                    extra=_config_extra(by), revision=revision)
    return Evaluation(result, metrics, provenance)


def store_run(store: Any, evaluation: Evaluation, *, batch_id: str | None = None,
              compass: dict[str, Any] | None = None) -> RunRecord:
    """Write ``evaluation`` (and its COMPASS tables, if any) to ``store`` in one transaction."""
    run_id = store.write_run(evaluation.result, evaluation.metrics, evaluation.provenance,
                             batch_id=batch_id, compass=compass)
    return RunRecord(run_id, evaluation.result, evaluation.metrics, evaluation.provenance)


def evaluate_and_store(adapter: Any, bench: Benchmark, store: Any, *, cache: Any = None,
                       batch_size: int = 64, n_boot: int = DEFAULT_N_BOOT,
                       seed: int = DEFAULT_SEED, ci_method: str = "auto",
                       by: list[str] | None = None, batch_id: str | None = None,
                       progress: bool = True, revision: str | None = None) -> RunRecord:
    """:func:`evaluate_run` then :func:`store_run` (no COMPASS tables: use the runner)."""
    evaluation = evaluate_run(adapter, bench, cache=cache, batch_size=batch_size, n_boot=n_boot,
                              seed=seed, ci_method=ci_method, by=by, progress=progress,
                              revision=revision)
    return store_run(store, evaluation, batch_id=batch_id)


def _config_extra(by: list[str] | None) -> dict[str, Any] | None:
    return {"breakdown": by} if by else None


def run_config_hash(*, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT,
                    ci_method: str = "auto", by: list[str] | None = None) -> str:
    """The ``config_hash`` :func:`evaluate_run` records for these settings; a sweep looks
    finished runs up by it."""
    return collect_provenance(seed=seed, n_boot=n_boot, ci_method=ci_method,
                              extra=_config_extra(by), revision="-")["config_hash"]
