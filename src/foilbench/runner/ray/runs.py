"""``sweep`` and ``run`` on Ray: the same cells and the same store rows, computed on workers.

:func:`foilbench.runner.sweep` and :func:`foilbench.runner.run` call these when given
``ray=...``. Models are not loaded on the driver (only their specs are checked, so a typo
still fails before any work); each is loaded on the workers that serve it
(:mod:`.schedule`). The driver keeps the results store open and writes each cell the
moment it arrives with :func:`~foilbench.runner.cell.write_cell`, exactly as the sequential
runner does, so the stored metrics and per-item scores are the same rows.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from foilbench.analysis import matrix
from foilbench.data.format import Benchmark
from foilbench.evaluation import run_config_hash
from foilbench.models.registry import model_names, model_schemes, resolve_model
from foilbench.runner.cell import CellRecord, CellResult, write_cell
from foilbench.runner.log import Log
from foilbench.runner.notes import warning_lines
from foilbench.runner.ray.cluster import RayOptions
from foilbench.runner.ray.schedule import RayStats, Scheduler
from foilbench.runner.settings import RunnerError, RunSettings
from foilbench.runner.setup import ensure_checksum


def check_model_specs(specs: list[str]) -> None:
    """Fail on a spec no registry knows (with its close matches), loading nothing."""
    names, schemes = model_names(), model_schemes()
    for spec in specs:
        scheme, sep, _ = spec.partition(":")
        if spec in names or (sep and scheme in schemes):
            continue
        resolve_model(spec)  # an unknown spec raises before anything is loaded


def ray_sweep_cells(specs: list[str], benches: list[Benchmark], store: Any, *,
                    settings: RunSettings, options: RayOptions, batch_id: str, log: Log,
                    failures: list[str], revision: str | None) -> tuple[pd.DataFrame, RayStats]:
    """The sweep's matrix rows (as :func:`foilbench.runner.sweeps.sweep_cells` makes them),
    computed on Ray; finished runs in ``store`` are reused."""
    rows: dict[tuple[str, int], dict] = {}

    def row(spec: str, b: int, metrics: pd.DataFrame, run_id: str, reused: bool) -> None:
        bench = benches[b]
        rows[(spec, b)] = {"model": spec, "benchmark": bench.name,
                           **matrix.cell_from_metrics(metrics, bench.manifest.primary_metric),
                           "partial": bool(bench.manifest.partial), "run_id": run_id,
                           "reused": reused}

    def finished(fingerprint: str, bench: Benchmark) -> str | None:
        return store.find_run(fingerprint, ensure_checksum(bench),
                              run_config_hash(**settings.scoring(), bench=bench))

    def on_reused(spec: str, b: int, run_id: str) -> None:
        log("info", f"skip {spec} x {benches[b].name}: finished run {run_id}")
        row(spec, b, store.load_metrics(run_id), run_id, True)

    def on_cell(spec: str, b: int, cell: CellResult) -> None:
        for line in warning_lines(cell.result.stats):
            log("warning", f"{spec} on {benches[b].name}: {line}")
        record = write_cell(store, cell, batch_id=batch_id)
        row(spec, b, record.metrics, record.run_id, False)

    def on_failed(spec: str, b: int, message: str) -> None:
        failures.append(f"{spec} x {benches[b].name}")

    stats = Scheduler(specs, benches, settings, options, log=log, on_cell=on_cell,
                      on_failed=on_failed, finished=finished, on_reused=on_reused,
                      revision=revision).run()
    ordered = [rows[(s, b)] for s in specs for b in range(len(benches)) if (s, b) in rows]
    return pd.DataFrame(ordered, columns=[*matrix.CELL_COLUMNS, "unit", "reused"]), stats


def ray_run_records(specs: list[str], benches: list[Benchmark], store: Any, *,
                    settings: RunSettings, options: RayOptions, batch_id: str, log: Log,
                    revision: str | None) -> tuple[list[CellRecord], RayStats]:
    """Every cell computed on Ray and stored (no resume, like ``run``); the records in
    (model, benchmark) order. A failed cell raises after the others are stored."""
    records: dict[tuple[int, int], CellRecord] = {}
    failures: list[str] = []
    order = {spec: k for k, spec in enumerate(specs)}

    def on_cell(spec: str, b: int, cell: CellResult) -> None:
        for line in warning_lines(cell.result.stats):
            log("warning", f"{spec} on {benches[b].name}: {line}")
        records[(order[spec], b)] = write_cell(store, cell, batch_id=batch_id)

    def on_failed(spec: str, b: int, message: str) -> None:
        failures.append(f"{spec} x {benches[b].name}: {message}")

    stats = Scheduler(specs, benches, settings, options, log=log, on_cell=on_cell,
                      on_failed=on_failed, revision=revision).run()
    if failures:
        raise RunnerError(f"{len(failures)} cell(s) failed on Ray ({len(records)} stored in "
                          f"{store.path}): " + "; ".join(failures))
    return [records[k] for k in sorted(records)], stats
