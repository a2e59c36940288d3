"""``sweep``: models x benchmarks in one Table-8 matrix, resumable.

Each cell is computed by the same :func:`~foilbench.runner.cell.evaluate_cell` /
:func:`~foilbench.runner.cell.write_cell` pair as ``run``; a sweep adds the resume check (a
stored run with the same model fingerprint, benchmark checksum and scoring settings is reused,
not recomputed), one embedding cache shared by all benchmarks, the blind audit of each
``choice`` benchmark (stored once per checksum, for the report), and the matrix
(:mod:`foilbench.analysis.matrix`) written to the store (``sweep_cells``) and as CSV, Markdown
and LaTeX under ``OUT/sweep-<id>/``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from foilbench.analysis import matrix
from foilbench.display import safe_text
from foilbench.errors import FoilbenchError
from foilbench.provenance import git_revision
from foilbench.runner.cell import check_metadata, evaluate_cell, finished_run, write_cell
from foilbench.runner.cell_lock import cell_lock
from foilbench.runner.config import resolved_config
from foilbench.runner.hooks import Hooks, specs_only
from foilbench.runner.in_progress import in_progress
from foilbench.runner.log import Log, contained_warnings, to_logging
from foilbench.runner.notes import warning_lines
from foilbench.runner.progress import RunProgress
from foilbench.runner.ray.cluster import as_options
from foilbench.runner.reference import try_blind_reference
from foilbench.runner.settings import DB_FILE, RunnerError, RunSettings, make_settings
from foilbench.runner.setup import (
    adapter_name,
    check_folders_first,
    decoding_once,
    ensure_checksum,
    load_benchmarks,
    load_models,
    model_list,
    open_cache,
    spec_list,
)
from foilbench.runner.startup_gc import pause as pause_gc
from foilbench.runner.threads import run_threads
from foilbench.runner.writable import check_out, sentences, usable_home, write_text
from foilbench.store.db import new_batch_id, to_json
from foilbench.store.shared import SharedStore

#: the resolved config of a sweep, beside its matrix files
RUN_CONFIG_FILE = "run_config.json"


@dataclass
class SweepOutcome:
    """What one :func:`sweep` did. ``cells`` has :data:`matrix.CELL_COLUMNS` plus ``unit``
    (of n, None for a reused run stored before units) and ``reused``; a failed cell is named
    in ``failures`` and absent from ``cells``."""

    sweep_id: str
    db_path: Path
    models: list[str]
    benchmarks: list[str]
    cells: pd.DataFrame
    paths: list[Path]
    failures: list[str] = field(default_factory=list)
    ray_stats: Any = None  # :class:`~foilbench.runner.ray.schedule.RayStats` of a Ray sweep
    preparation: dict[str, float] | None = None  # images decoded / prepared / cache hits
    run_config: dict[str, Any] | None = None  # what ran, as config keys (runner/config.py)
    comparisons: pd.DataFrame | None = None  # model vs model per benchmark (paired)

    @property
    def reused(self) -> int:
        return int(self.cells["reused"].sum())

    @property
    def computed(self) -> int:
        return len(self.cells) - self.reused

    def markdown(self, interval: str = "stored") -> str:
        """The matrix as Markdown. ``"stored"`` (default): each cell's interval as ``run``,
        ``show``, the report and summary.json give it; ``"wald"``: CompoSET Table 8's Wald
        interval (what ``matrix.md`` and ``matrix.tex`` hold, labelled so)."""
        return matrix.to_markdown(self.cells.drop(columns=["reused"]), self.models,
                                  self.benchmarks, interval=interval)


def sweep_cells(loaded: list[tuple[str, Any]], benches: list, store: Any, *, cache: Any,
                settings: RunSettings, batch_id: str, log: Log, failures: list[str],
                progress: RunProgress | None = None, hooks: Hooks | None = None
                ) -> pd.DataFrame:
    """See :func:`_sweep_cells`; one progress display for all cells (``progress``: the
    sweep's display, opened before its benchmarks were loaded; else one of its own)."""
    own = progress is None
    display = RunProgress(None, enabled=settings.progress, desc="foilbench sweep",
                          log=log) if progress is None else progress
    display.set_total(len(loaded) * len(benches))
    try:
        return _sweep_cells(loaded, benches, store, cache=cache, settings=settings,
                            batch_id=batch_id, log=display.wrap(log), failures=failures,
                            progress=display, hooks=hooks or Hooks())
    finally:
        if own:
            display.close()


def _sweep_cells(loaded: list[tuple[str, Any]], benches: list, store: Any, *, cache: Any,
                 settings: RunSettings, batch_id: str, log: Log,
                 failures: list[str], progress: RunProgress, hooks: Hooks) -> pd.DataFrame:
    """Evaluate or reuse every (model, benchmark); one matrix row per pair.

    A pair whose evaluation raises a :class:`FoilbenchError` is named in ``failures`` and left
    out (its cell prints as a dash); the others still run and are stored.
    """
    revision = git_revision()
    rows: list[dict] = []
    for spec, adapter in loaded:
        for bench in benches:
            key = f"{adapter.info.fingerprint}|{ensure_checksum(bench)}"
            shown = f"{safe_text(spec)} x {safe_text(bench.name)}"
            with cell_lock(store.path, key, shown, log):  # another sweep's cell: wait, reuse
                run_id = finished_run(store, adapter, bench, settings)
                reused = run_id is not None
                if reused:
                    log("info", f"skip {spec} x {bench.name}: finished run {run_id}")
                    metrics = store.load_metrics(run_id)
                else:
                    progress.begin(f"{safe_text(spec)} on {safe_text(bench.name)} "
                                   f"({len(bench)} items)", log)
                    try:
                        cell = evaluate_cell(adapter, bench, settings, cache=cache,
                                             revision=revision, progress=progress, log=log)
                    except FoilbenchError as e:  # one failed cell must not lose the others
                        log("error", f"{spec} x {bench.name}: {e}")
                        failures.append(f"{spec} x {bench.name}")
                        continue
                    for line in warning_lines(cell.result.stats):
                        log("warning", f"{spec} on {bench.name}: {line}")
                    record = write_cell(store, cell, batch_id=batch_id,
                                        metadata=hooks.metadata)
                    run_id, metrics = record.run_id, record.metrics
                    hooks.deliver(record)
            progress.cell_done()
            rows.append({"model": spec, "benchmark": bench.name,
                         **matrix.cell_from_metrics(metrics, bench.manifest.primary_metric),
                         "partial": bool(bench.manifest.partial), "run_id": run_id,
                         "reused": reused})
    return pd.DataFrame(rows, columns=[*matrix.CELL_COLUMNS, "unit", "reused"])


def write_outputs(cells: pd.DataFrame, out_dir: Path, models: list[str],
                  benchmarks: list[str], comparisons: pd.DataFrame | None = None) -> list[Path]:
    """``matrix.csv``, ``matrix.md`` and ``matrix.tex`` of the cells under ``out_dir``;
    with ``comparisons`` (model vs model, paired) also ``comparisons.csv``, and their table
    under the matrix in ``matrix.md``."""
    from foilbench.report.comparisons import markdown as comparisons_markdown

    out_dir.mkdir(parents=True, exist_ok=True)
    versus = "" if comparisons is None else comparisons_markdown(comparisons)
    forms = {"matrix.csv": matrix.to_csv(cells),
             "matrix.md": matrix.to_markdown(cells, models, benchmarks)
             + (f"\nModel vs model (paired, primary metric):\n\n{versus}" if versus else ""),
             "matrix.tex": matrix.to_latex(cells, models, benchmarks)}
    if versus and comparisons is not None:
        forms["comparisons.csv"] = comparisons.to_csv(index=False)
    paths = []
    for name, text in forms.items():
        write_text(out_dir / name, text)
        paths.append(out_dir / name)
    return paths


def sweep(models: Any = None,
          benchmarks: str | Iterable[str] | None = None,
          out: str | Path | None = None, *, db: str | Path | None = None,
          settings: RunSettings | None = None, log: Log | None = None,
          ray: Any = None, config: str | Path | Mapping[str, Any] | None = None,
          metadata: dict[str, Any] | None = None,
          on_result: Callable[[Any], Any] | None = None, matrix_only: bool = False,
          **options: Any) -> SweepOutcome:
    """Every model on every benchmark, reusing finished runs in ``db`` (default
    ``OUT/foilbench.duckdb``); the matrix goes to the store and ``OUT/sweep-<id>/``.

    Settings as in :func:`foilbench.runner.run`. A failed cell does not stop the others; it is
    listed in :attr:`SweepOutcome.failures` (the CLI then exits non-zero). ``ray`` (an
    address, ``"local"``, ``True`` or :class:`~foilbench.runner.ray.cluster.RayOptions`)
    computes the cells on Ray workers (:mod:`foilbench.runner.ray.runs`); the stored rows are
    the same. Models held in memory, ``metadata`` and ``on_result`` as in ``run`` (a reused
    cell, already stored, is not passed to ``on_result``).

    Args:
        models: Model specs (``@FILE`` reads a list file) or adapter objects; at least one.
        benchmarks: Benchmark specs (``@FILE`` too); at least one.
        out: Folder of the database and ``sweep-<id>/`` (default ``foilbench-runs``).
        db: Results database (default ``OUT/foilbench.duckdb``).
        settings: A :class:`RunSettings`; replaces the config file's settings.
        log: ``log(level, message)`` sink for progress and warnings.
        ray: Ray address, ``True`` or :class:`RayOptions` to compute cells on Ray.
        config: A ``sweep`` config (TOML/YAML path or dict, the CLI's option names, see
            docs/config.md); arguments given here override it. The resolved config is
            written to ``sweep-<id>/run_config.json``.
        metadata: JSON values stored with every computed run.
        on_result: Called with each stored cell record as soon as it is stored.
        matrix_only: Evaluate nothing and load no model: rebuild the matrix files from the
            runs already stored (:mod:`foilbench.runner.sweep_rebuild`); a cell with no
            stored run is an error naming it.
        **options: Single :class:`RunSettings` fields overriding the rest.

    Returns:
        A :class:`SweepOutcome`.
    """
    from foilbench.runner.config import merged

    hooks = Hooks(check_metadata(metadata), on_result)
    args = merged(config, "sweep", models=models, benchmarks=benchmarks, out=out,
                  settings=settings, ray=ray, db=db)
    flag = args.loaded.values.get("matrix_only", False) if args.loaded is not None else False
    if not isinstance(flag, bool):
        raise RunnerError(f"config key matrix_only must be true or false, got {flag!r}")
    matrix_only = matrix_only or flag
    resume_gc = pause_gc()  # start-up makes long-lived objects only (startup_gc.py)
    try:
        return _start(args.models, args.benchmarks, args.out, args.db, args.settings, log,
                      args.ray, options, resume_gc, hooks, args.loaded, matrix_only)
    finally:
        resume_gc()


def _start(models: Any, benchmarks: str | Iterable[str], out: str | Path,
           db: str | Path | None, settings: RunSettings | None, log: Log | None, ray: Any,
           options: dict[str, Any], resume_gc: Callable[[], None], hooks: Hooks,
           config_file: Any = None, matrix_only: bool = False) -> SweepOutcome:
    settings = make_settings(settings, options)
    log = log or to_logging
    entries, bench_specs = model_list(models, "models"), spec_list(benchmarks, "benchmarks")
    if not entries or not bench_specs:
        raise RunnerError("a sweep needs at least one model and one benchmark")
    check_out(Path(out))
    usable_home(log)
    check_folders_first(bench_specs, settings)  # before any model loads
    ray_options = as_options(ray)
    if matrix_only:
        names = [e if isinstance(e, str) else adapter_name(e) for e in entries]
        return _rebuilt(names, bench_specs, out, db, settings, log, config_file)
    if ray_options is not None:
        from foilbench.runner.ray.runs import check_model_specs

        check_model_specs(specs_only(entries, hooks))
    # one display from here on: a first sweep's suite build shows on it, then the cells
    progress = RunProgress(None, enabled=settings.progress, desc="foilbench sweep", log=log)
    try:
        with contextlib.ExitStack() as scope:
            if ray_options is None:  # loaded first: validation decodes each image for them
                scope.enter_context(run_threads(settings.threads, log))
            return _loaded(entries, bench_specs, out, db, settings, log, ray_options,
                           resume_gc, hooks, progress, config_file)
    finally:
        progress.close()


def _rebuilt(model_specs: list[str], bench_specs: list[str], out: str | Path,
             db: str | Path | None, settings: RunSettings, log: Log,
             config_file: Any) -> SweepOutcome:
    """``matrix_only``: the matrix of the stored runs, no model loaded, nothing evaluated."""
    from foilbench.runner.sweep_rebuild import stored_cells

    out_dir = Path(out)
    db_path = Path(db) if db else out_dir / DB_FILE
    benches = load_benchmarks(bench_specs, settings, log)
    cells = stored_cells(db_path, model_specs, benches, settings)
    sweep_id = new_batch_id()
    store = SharedStore(db_path, notify=lambda msg: log("warning", msg))
    with sentences(str(out_dir), "the stored runs are unchanged"):
        outcome = _outputs(model_specs, benches, store, cells, out_dir, db_path, sweep_id,
                           [], None, log)
        _write_config(outcome, model_specs, bench_specs, out, settings, None, db_path,
                      config_file)
    return outcome


def _loaded(entries: list, bench_specs: list[str], out: str | Path, db: str | Path | None,
            settings: RunSettings, log: Log, ray_options: Any, resume_gc: Callable[[], None],
            hooks: Hooks, progress: RunProgress, config_file: Any) -> SweepOutcome:
    """The sweep once its threads are set: models loaded, benchmarks, the cells."""
    loaded = load_models(entries, settings) if ray_options is None else []
    model_specs = [name for name, _ in loaded] if ray_options is None else list(entries)
    with decoding_once(loaded, settings, log) as prepared:
        benches = load_benchmarks(bench_specs, settings, progress.wrap(log),
                                  progress=progress, prepared=prepared)
        resume_gc()
        out_dir = Path(out)
        db_path = Path(db) if db else out_dir / DB_FILE
        sweep_id = new_batch_id()
        store = SharedStore(db_path, notify=lambda msg: log("warning", msg))  # per call
        kept = (f"every cell already stored in {db_path} is kept and reused when you run "
                f"the same command again")
        db_path.parent.mkdir(parents=True, exist_ok=True)
        with sentences(str(out_dir), kept), in_progress(db_path, "sweep"):
            outcome = _sweep(model_specs, loaded, benches, store, settings, ray_options,
                             out_dir, db_path, sweep_id, log, progress, hooks)
        _write_config(outcome, model_specs, bench_specs, out, settings, ray_options, db_path,
                      config_file)
        outcome.preparation = prepared.summary() if prepared is not None else None
        return outcome


def _write_config(outcome: SweepOutcome, model_specs: list[str], bench_specs: list[str],
                  out: str | Path, settings: RunSettings, ray_options: Any, db_path: Path,
                  config_file: Any) -> None:
    """``sweep-<id>/run_config.json``: what the sweep ran with, as config keys."""
    outcome.run_config = resolved_config(
        models=model_specs, benchmarks=bench_specs, out=out, settings=settings,
        ray=ray_options, extra={"db": str(db_path)}, loaded=config_file)
    write_text(Path(out) / f"sweep-{outcome.sweep_id}" / RUN_CONFIG_FILE,
               to_json(outcome.run_config) + "\n")


def _sweep(model_specs: list[str], loaded: list, benches: list, store: SharedStore,
           settings: RunSettings, ray_options: Any, out_dir: Path, db_path: Path,
           sweep_id: str, log: Log, progress: RunProgress | None = None,
           hooks: Hooks | None = None) -> SweepOutcome:
    """The cells (computed or reused), the stored matrix and its files."""
    failures: list[str] = []
    ray_stats = None
    if ray_options is None:
        cells = sweep_cells(loaded, benches, store, cache=open_cache(settings, log),
                            settings=settings, batch_id=sweep_id, log=log, failures=failures,
                            progress=progress, hooks=hooks)
        return _outputs(model_specs, benches, store, cells, out_dir, db_path, sweep_id,
                        failures, ray_stats, log)
    from foilbench.ray_session import session
    from foilbench.runner.ray.runs import ray_sweep_cells

    if progress is not None:  # Ray prints its own aggregated progress line
        progress.close()
    # Ray is shut down only after the matrix is written: a driver that dies while Ray shuts
    # down (it has crashed there) leaves every stored cell and the matrix of them
    with session(ray_options.address):
        cells, ray_stats = ray_sweep_cells(model_specs, benches, store, settings=settings,
                                           options=ray_options, batch_id=sweep_id, log=log,
                                           failures=failures, revision=git_revision())
        return _outputs(model_specs, benches, store, cells, out_dir, db_path, sweep_id,
                        failures, ray_stats, log)


def _outputs(model_specs: list[str], benches: list, store: SharedStore, cells: pd.DataFrame,
             out_dir: Path, db_path: Path, sweep_id: str, failures: list[str],
             ray_stats: Any, log: Log) -> SweepOutcome:
    """The cells stored as this sweep's, each benchmark's blind audit, the matrix files."""
    store.write_sweep(sweep_id, cells)
    with contained_warnings(log):
        for bench in benches:  # stored once per benchmark checksum, for the report
            try_blind_reference(bench, store, log)
    names = [b.name for b in benches]
    versus = model_comparisons(db_path, cells)
    paths = write_outputs(cells.drop(columns=["reused"]), out_dir / f"sweep-{sweep_id}",
                          model_specs, names, versus)
    return SweepOutcome(sweep_id, db_path, model_specs, names, cells, paths, failures,
                        ray_stats, comparisons=versus)


def model_comparisons(db_path: Path, cells: pd.DataFrame) -> pd.DataFrame:
    """Model vs model on each benchmark of the matrix: the paired bootstrap of the report
    (:mod:`foilbench.report.comparisons`) over the cells' stored runs."""
    from foilbench.report.build import load_runs
    from foilbench.report.comparisons import comparisons

    ids = [str(r) for r in cells["run_id"] if isinstance(r, str)]
    if len(ids) < 2:
        return pd.DataFrame()
    return comparisons(load_runs(db_path, ids))
