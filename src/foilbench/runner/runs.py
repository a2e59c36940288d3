"""``run``: every model on every benchmark, one stored run per pair, plus ``summary.json``.

The sequence (the CLI's ``foilbench run`` is a thin wrapper): load models first (a bad spec
or device fails before any benchmark is built) -> resolve benchmarks -> per cell
:func:`~foilbench.runner.cell.evaluate_cell` then :func:`~foilbench.runner.cell.write_cell`
-> reference rows per benchmark (blind baseline from the store when already computed) ->
``OUT/<batch_id>/summary.json`` -> the HTML report (optional).

The store is opened only for the moment each finished cell is written (one transaction) or a
stored row read (:class:`foilbench.store.shared.SharedStore`), so other runs on the same
``--out`` and ``show``/``report``/``serve`` work while this one evaluates.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilbench.display import safe_text
from foilbench.models.registry import EMBEDDED_DEFAULTS
from foilbench.provenance import collect_provenance, git_revision
from foilbench.runner.batches import clear_empty_batches
from foilbench.runner.cell import (
    CellRecord,
    check_metadata,
    evaluate_cell,
    finished_run,
    write_cell,
)
from foilbench.runner.config import resolved_config
from foilbench.runner.hooks import Hooks, specs_only
from foilbench.runner.in_progress import in_progress
from foilbench.runner.log import Log, contained_warnings, to_logging
from foilbench.runner.notes import warning_lines
from foilbench.runner.progress import RunProgress
from foilbench.runner.ray.cluster import as_options
from foilbench.runner.reference import benchmark_reference
from foilbench.runner.reuse import REPEAT_KEY, reused_message, stored_record
from foilbench.runner.settings import (
    DB_FILE,
    DEFAULT_SUITE,
    RunSettings,
    make_settings,
)
from foilbench.runner.setup import (
    check_folders_first,
    decoding_once,
    load_benchmarks,
    load_models,
    model_list,
    open_cache,
    spec_list,
)
from foilbench.runner.startup_gc import pause as pause_gc
from foilbench.runner.summary import build_summary
from foilbench.runner.threads import run_threads
from foilbench.runner.writable import (
    check_out,
    sentences,
    usable_home,
    write_text,
)
from foilbench.store.db import new_batch_id, to_json
from foilbench.store.shared import SharedStore


@dataclass
class RunOutcome:
    """What one :func:`run` did: the stored runs, where things were written, the summary."""

    batch_id: str
    db_path: Path
    summary_path: Path
    summary: dict[str, Any]
    records: list[CellRecord]
    reference: dict[str, dict[str, Any]]
    report_path: Path | None = None
    preparation: dict[str, float] | None = None  # images decoded / prepared / cache hits, all cells

    @property
    def run_ids(self) -> list[str]:
        return [r.run_id for r in self.records]


def run(models: Any = None,
        benchmarks: str | Iterable[str] | None = None, out: str | Path | None = None, *,
        settings: RunSettings | None = None, report: bool | None = None,
        log: Log | None = None, ray: Any = None,
        config: str | Path | Mapping[str, Any] | None = None, rerun: bool = False,
        metadata: dict[str, Any] | None = None,
        on_result: Callable[[CellRecord], Any] | None = None, **options: Any) -> RunOutcome:
    """Evaluate every model on every benchmark; store each run in ``OUT/foilbench.duckdb``.

    A run already stored with the same model fingerprint, benchmark checksum and settings is
    reused, not stored twice (logged; :mod:`foilbench.runner.reuse`); ``rerun=True`` computes
    it again and marks the new run a repeat.

    ``models`` and ``benchmarks`` are the specs ``foilbench run`` takes (default: the
    embedded models and the ``synth`` suite); a model may also be an adapter object, e.g. a
    model held in memory (``foilbench.from_open_clip(model, preprocess, tokenizer,
    name="my-clip")``, docs/training.md), alone or mixed with specs. ``metadata`` (a dict of
    JSON values, e.g. ``{"step": 1200}``) is stored with every run (``eval_stats`` and
    provenance) and summary.json; ``on_result(record)`` is called with each stored
    :class:`~foilbench.runner.cell.CellRecord` as soon as it is stored (a tracker's hook,
    :mod:`foilbench.tracking`; what it raises propagates, the runs stored so far are kept).
    torch's thread count is set for the run and set back after. Settings come from ``settings``
    (:class:`RunSettings`) with keyword ``options`` overriding it, e.g.
    ``run(["tiny-random"], ["tiny-builtin"], "/tmp/fb", n_boot=200, progress=False,
    report=False)``. Progress and warnings go to ``log(level, message)`` (default: the
    ``foilbench.runner`` logger). ``ray`` (an address, ``"local"``, ``True`` or
    :class:`~foilbench.runner.ray.cluster.RayOptions`) computes the cells on Ray workers
    (:mod:`foilbench.runner.ray.runs`), storing the same rows. Writes
    ``OUT/<batch_id>/summary.json`` (and ``report.html`` when ``report``) and returns a
    :class:`RunOutcome`.

    Args:
        models: Model specs (``@FILE`` reads a list file) or adapter objects (a model held
            in memory: ``foilbench.from_open_clip``/``from_hf``); default the embedded models.
        benchmarks: Benchmark specs (``@FILE`` too); default the ``synth`` suite.
        out: Results folder (default ``foilbench-runs``).
        settings: A :class:`RunSettings`; replaces the config file's settings.
        report: Write ``report.html`` (default True, or the config's ``no_report``).
        log: ``log(level, message)`` sink for progress and warnings.
        ray: Ray address, ``True`` or :class:`RayOptions` to compute cells on Ray.
        config: A ``run`` config (TOML/YAML path or dict, the CLI's option names, see
            docs/config.md); arguments given here override it. The resolved config is
            stored in ``summary.json``'s ``provenance.run_config``.
        rerun: Compute a run again although an identical one is stored (marked a repeat).
        metadata: JSON values stored with every run (e.g. ``{"step": 1200}``).
        on_result: Called with each stored :class:`CellRecord` as soon as it is stored.
        **options: Single :class:`RunSettings` fields overriding the rest.

    Returns:
        A :class:`RunOutcome`.
    """
    from foilbench.runner.config import merged

    hooks = Hooks(check_metadata(metadata), on_result)
    args = merged(config, "run", models=models, benchmarks=benchmarks, out=out,
                  settings=settings, ray=ray, report=report)
    if args.loaded is not None and args.loaded.values.get("rerun"):
        rerun = True
    resume_gc = pause_gc()  # start-up makes long-lived objects only (startup_gc.py)
    try:
        check_out(Path(args.out))  # the marker below needs the folder
        # marked from the start, not from the first cell: `show` during a first run's suite
        # build says a run is in progress instead of "no results database"
        with in_progress(Path(args.out) / DB_FILE, "run"):
            return _run(args.models, args.benchmarks, args.out, args.settings, log,
                        args.report, args.ray, {**options, "rerun": rerun}, resume_gc,
                        hooks, args.loaded)
    finally:
        resume_gc()


def _run(models: Any, benchmarks: str | Iterable[str] | None,
         out: str | Path, settings: RunSettings | None, log: Log | None, report: bool,
         ray: Any, options: dict[str, Any], resume_gc: Callable[[], None],
         hooks: Hooks, config_file: Any = None) -> RunOutcome:
    rerun = bool(options.pop("rerun", False))
    settings = make_settings(settings, options)
    log = log or to_logging
    check_out(Path(out))
    usable_home(log)
    ray_options = as_options(ray)
    entries = model_list(models, "models")
    if not entries:
        entries = list(EMBEDDED_DEFAULTS)
        log("info", f"default models: the embedded {', '.join(entries)}")
    bench_specs = spec_list(benchmarks, "benchmarks")
    check_folders_first(bench_specs, settings)  # before any model loads
    with contextlib.ExitStack() as scope:
        if ray_options is None:
            scope.enter_context(run_threads(settings.threads, log))
            loaded = load_models(entries, settings)
            model_specs = [name for name, _ in loaded]
        else:  # loaded on the workers; only the specs are checked here
            from foilbench.runner.ray.runs import check_model_specs

            model_specs = specs_only(entries, hooks)
            check_model_specs(model_specs)
            loaded = []
        return _run_loaded(model_specs, loaded, bench_specs, out, settings, log, report,
                           ray_options, resume_gc, hooks, config_file, rerun)


def _run_loaded(model_specs: list[str], loaded: list, bench_specs: list[str],
                out: str | Path, settings: RunSettings, log: Log, report: bool,
                ray_options: Any, resume_gc: Callable[[], None], hooks: Hooks,
                config_file: Any, rerun: bool) -> RunOutcome:
    if not bench_specs:
        bench_specs = [DEFAULT_SUITE]
        log("info", f"default benchmarks: the embedded {DEFAULT_SUITE!r} suite")
    # one display from here on: a first run's suite build shows on it, then the cells
    progress = RunProgress(None, enabled=settings.progress, desc="foilbench run", log=log)
    try:
        with decoding_once(loaded, settings, log) as prepared:
            benches = load_benchmarks(bench_specs, settings, progress.wrap(log),
                                      progress=progress, prepared=prepared)
            resume_gc()
            run_config = resolved_config(
                models=model_specs, benchmarks=bench_specs, out=out, settings=settings,
                ray=ray_options, extra={"no_report": not report}, loaded=config_file)
            outcome = _store_cells(model_specs, loaded, benches, settings, ray_options,
                                   Path(out), report, log, progress, run_config, hooks,
                                   rerun)
            outcome.preparation = prepared.summary() if prepared is not None else None
            return outcome
    finally:
        progress.close()


def _store_cells(model_specs: list[str], loaded: list, benches: list, settings: RunSettings,
                 ray_options: Any, out_dir: Path, report: bool, log: Log,
                 progress: RunProgress, run_config: dict[str, Any], hooks: Hooks,
                 rerun: bool = False) -> RunOutcome:
    batch_id = new_batch_id()
    batch_dir = out_dir / batch_id  # made when its first file is written (summary.json)
    db_path = out_dir / DB_FILE
    try:
        with sentences(str(out_dir), f"runs already stored are kept in {db_path}"), \
                in_progress(db_path, "run"):
            out_dir.mkdir(parents=True, exist_ok=True)
            clear_empty_batches(out_dir)
            return _run_cells(model_specs, loaded, benches, settings, ray_options, out_dir,
                              batch_id, batch_dir, db_path, report, log, progress,
                              run_config, hooks, rerun)
    except BaseException:  # a full disk, a store error, an interrupt
        if batch_dir.is_dir() and not any(batch_dir.iterdir()):
            batch_dir.rmdir()  # nothing of this batch was written: leave no empty folder
        raise


def _run_cells(model_specs: list[str], loaded: list, benches: list, settings: RunSettings,
               ray_options: Any, out_dir: Path, batch_id: str, batch_dir: Path,
               db_path: Path, report: bool, log: Log, progress: RunProgress,
               run_config: dict[str, Any], hooks: Hooks, rerun: bool = False) -> RunOutcome:
    """Every cell evaluated and stored (on the run's one display), then summary.json and the
    report."""
    cache = open_cache(settings, log)
    revision = git_revision()
    records: list[CellRecord] = []
    held: dict[str, Any] = {}  # per-item tables of the cells written here, by run id
    store = SharedStore(db_path, notify=lambda msg: log("warning", msg))
    if ray_options is not None:
        from foilbench.runner.ray.runs import ray_run_records

        progress.close()  # the Ray path logs its own progress
        records, _ = ray_run_records(model_specs, benches, store, settings=settings,
                                     options=ray_options, batch_id=batch_id, log=log,
                                     revision=revision)
        loaded = []
        for record in records:
            hooks.deliver(record)
    progress.set_total(len(loaded) * len(benches))
    shown = progress.wrap(log)
    try:
        for spec, adapter in loaded:
            for bench in benches:
                # (no store yet: nothing to reuse, and none is created before a cell is)
                stored = finished_run(store, adapter, bench, settings) \
                    if db_path.exists() else None
                # a run given metadata (a training step) is that step's own record
                if stored is not None and not rerun and not hooks.metadata:
                    shown("info", reused_message(spec, bench.name, stored))
                    records.append(stored_record(store, stored, adapter, bench))
                    progress.cell_done()
                    continue
                progress.begin(f"{safe_text(spec)} on {safe_text(bench.name)} "
                               f"({len(bench)} items)", shown)
                cell = evaluate_cell(adapter, bench, settings, cache=cache, revision=revision,
                                     progress=progress, log=shown)
                if stored is not None:  # --rerun: a repeat of a stored run, marked so
                    cell.result.stats[REPEAT_KEY] = stored
                for line in warning_lines(cell.result.stats):
                    shown("warning", f"{spec} on {bench.name}: {line}")
                records.append(write_cell(store, cell, batch_id=batch_id,
                                          metadata=hooks.metadata))
                if report:  # the report's per-item table, as written (before any hook)
                    _hold_items(held, records[-1])
                progress.cell_done()
                hooks.deliver(records[-1])
    finally:
        progress.close()
    with contained_warnings(log):
        reference = {b.name: benchmark_reference(b, records, store, log) for b in benches}
    provenance = collect_provenance(seed=settings.seed, n_boot=settings.n_boot,
                                    ci_method=settings.ci_method, revision=revision,
                                    extra={"unit": settings.unit}, device=settings.device)
    provenance["run_config"] = run_config  # what ran, as config keys (runner/config.py)
    if hooks.metadata:
        provenance["metadata"] = hooks.metadata
    summary = build_summary(batch_id=batch_id, db_path=str(db_path), provenance=provenance,
                            records=records, reference=reference)
    summary_path = batch_dir / "summary.json"
    batch_dir.mkdir(parents=True, exist_ok=True)  # only now: a killed run leaves no folder
    write_text(summary_path, to_json(summary) + "\n")
    outcome = RunOutcome(batch_id, db_path, summary_path, summary, records, reference)
    if report:
        from foilbench.report import write_report

        with contained_warnings(log):
            outcome.report_path = write_report(db_path, outcome.run_ids,
                                               batch_dir / "report.html", held)
    return outcome


def _hold_items(held: dict[str, Any], record: CellRecord) -> None:
    """Keep the per-item table the store would give back for ``record``, just written, so
    the report need not read it (:mod:`foilbench.store.held_items`; None: it reads it)."""
    from foilbench.store.held_items import held_item_results

    table = held_item_results(record.result)
    if table is not None:
        held[record.run_id] = table
