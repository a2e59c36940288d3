"""Evaluate and aggregate one (model, benchmark) run, and store it: the core under the runner.

Composes the layers without re-implementing any of them: :func:`scoring.engine.evaluate`
(scores and outcomes) -> :func:`scoring.aggregate.long_outcomes` ->
:func:`stats.breakdown.metric_table` (intervals; on a tiered pair benchmark
:func:`stats.units.tiered_metric_table`, each row in the unit of n the ``unit`` setting gives
it) -> :class:`store.db.ResultsStore` (one transaction). Computing (:func:`evaluate_run`)
and writing (:func:`store_run`) are separate calls so a scheduler can compute on workers and
write on the driver; orchestration (settings, resume, summaries, reference rows, COMPASS
tables) lives in :mod:`foilbench.runner`, which is also where :mod:`foilbench.analysis` and
:mod:`foilbench.audit` are called from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.kinds import METADATA_COLUMNS
from foilbench.data.tiers import check_instances, instance_column, is_tiered
from foilbench.models.live import refresh_fingerprint
from foilbench.provenance import collect_provenance
from foilbench.scoring.aggregate import long_outcomes
from foilbench.scoring.engine import evaluate
from foilbench.scoring.result import EvalResult
from foilbench.stats.bootstrap import DEFAULT_N_BOOT, DEFAULT_SEED
from foilbench.stats.breakdown import metric_table
from foilbench.stats.units import DEFAULT_UNIT, check_setting, tiered_metric_table


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
                 revision: str | None = None, unit: str = DEFAULT_UNIT) -> Evaluation:
    """Evaluate ``adapter`` on ``bench`` and compute metrics with CIs; writes nothing (the
    embedding cache, when given, is the only side effect). ``progress``: a bool (a bar per
    stage) or a display the stages report to (:mod:`foilbench.scoring.progress`). ``unit``:
    the unit of n on a tiered pair benchmark (:mod:`foilbench.stats.units`); other
    benchmarks count items whatever it says."""
    check_setting(unit)
    instance = tiered_instance(bench)  # checked before the model runs
    refresh_fingerprint(adapter)  # a model held in memory: its weights as they are now
    result = evaluate(adapter, bench, cache=cache, batch_size=batch_size, progress=progress)
    metrics = metrics_of(result, unit, instance=instance, by=by, ci_method=ci_method,
                         n_boot=n_boot, seed=seed)
    provenance = collect_provenance(seed=seed, n_boot=n_boot, ci_method=ci_method,
                                    extra=_config_extra(by, hashed_unit(bench, unit)),
                                    revision=revision,  # an API model has no device: "none"
                                    device=str(getattr(adapter, "device", "none")))
    if bench.manifest.extras.get("hub"):  # the Hub repo and resolved commit (data/hub.py)
        provenance["benchmark_source"] = bench.manifest.extras["hub"]
    return Evaluation(result, metrics, provenance)


def tiered_instance(bench: Benchmark) -> str | None:
    """The instance column of a tiered pair benchmark (CompoSET format), checked
    (:func:`foilbench.data.tiers.check_instances`); None for any other benchmark."""
    items = bench.items
    if bench.manifest.extras.get("score_unit") or not is_tiered(bench.item_kind.is_edit_pair,
                                                                items):
        return None
    instance = instance_column(items.columns)
    if instance is None:  # unreachable: is_tiered found an instance key (for the type checker)
        return None
    check_instances(items, instance, where=f"benchmark {bench.name!r}")
    return instance


def metrics_of(result: EvalResult, unit: str = DEFAULT_UNIT, *, instance: str | None = None,
               by: list[str] | None = None, ci_method: str = "auto",
               n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """The metric table of ``result`` with a ``unit`` column: items on most benchmarks,
    ``unit``'s plan on a tiered pair benchmark (``instance`` names its instance column)."""
    from foilbench.stats.bootstrap import shared_resamples

    long = long_outcomes(result)
    with shared_resamples():  # one count matrix per (scenes, resamples, seed) for the table
        if instance is None:
            return metric_table(long, by=by, candidates=METADATA_COLUMNS, method=ci_method,
                                n_boot=n_boot, seed=seed).assign(unit="items")
        return tiered_metric_table(long, unit=unit, instance=instance, by=by,
                                   candidates=METADATA_COLUMNS, method=ci_method,
                                   n_boot=n_boot, seed=seed)


def hashed_unit(bench: Benchmark, unit: str) -> str | None:
    """``unit`` as it enters the run's ``config_hash``: None where it changes no number (not
    a tiered pair benchmark) or for ``pooled`` (what runs stored before the setting existed),
    so a sweep still finds those runs."""
    if unit == "pooled" or bench.manifest.extras.get("score_unit") \
            or not is_tiered(bench.item_kind.is_edit_pair, bench.items):
        return None
    return unit


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
                       progress: bool = True, revision: str | None = None,
                       unit: str = DEFAULT_UNIT) -> RunRecord:
    """:func:`evaluate_run` then :func:`store_run` (no COMPASS tables: use the runner)."""
    evaluation = evaluate_run(adapter, bench, cache=cache, batch_size=batch_size, n_boot=n_boot,
                              seed=seed, ci_method=ci_method, by=by, progress=progress,
                              revision=revision, unit=unit)
    return store_run(store, evaluation, batch_id=batch_id)


def _config_extra(by: list[str] | None, unit: str | None = None) -> dict[str, Any] | None:
    extra = {**({"breakdown": by} if by else {}), **({"unit": unit} if unit else {})}
    return extra or None


def run_config_hash(*, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT,
                    ci_method: str = "auto", by: list[str] | None = None,
                    bench: Benchmark | None = None, unit: str = DEFAULT_UNIT) -> str:
    """The ``config_hash`` :func:`evaluate_run` records for these settings on ``bench`` (the
    unit enters it only on a tiered pair benchmark, :func:`hashed_unit`); a sweep looks
    finished runs up by it."""
    hashed = None if bench is None else hashed_unit(bench, unit)
    return collect_provenance(seed=seed, n_boot=n_boot, ci_method=ci_method,
                              extra=_config_extra(by, hashed), revision="-")["config_hash"]
