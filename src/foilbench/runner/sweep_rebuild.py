"""``sweep --matrix-only``: a sweep's matrix files rebuilt from the store, nothing evaluated.

A sweep whose cells are all stored but whose matrix was never written (a driver killed, or
a Ray driver that crashed while Ray shut down) needs no recomputation: every cell is a
finished run in the results store. This rebuild loads the benchmarks (their checksums key
the runs) but no model: a cell is the newest stored run with the same model spec,
benchmark checksum and scoring settings (the keys of the sweep's resume check, with the
spec standing in for the fingerprint, which would need the model loaded). A missing cell
is refused by name, so a rebuilt matrix is never silently incomplete. The files are the
ones a sweep writes (:func:`~foilbench.runner.sweeps.write_outputs`), under a new
``OUT/sweep-<id>/``, and the cells are stored as that sweep's (every one ``reused``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from foilbench.analysis import matrix
from foilbench.display import safe_text
from foilbench.evaluation import run_config_hash
from foilbench.runner.settings import RunnerError, RunSettings
from foilbench.runner.setup import ensure_checksum
from foilbench.store.db import ResultsStore


def stored_cells(db_path: Path, specs: list[str], benches: list, settings: RunSettings
                 ) -> pd.DataFrame:
    """One matrix row per (spec, benchmark) from the stored runs, in sweep order; a
    :class:`RunnerError` naming the first cell with no stored run."""
    if not db_path.is_file():
        raise RunnerError(f"cannot rebuild the matrix: there is no results database at "
                          f"{db_path} (run the sweep without --matrix-only first)")
    rows = []
    with ResultsStore(db_path, read_only=True) as store:
        for spec in specs:
            for bench in benches:
                config_hash = run_config_hash(**settings.scoring(), bench=bench)
                hit = store.con.execute(
                    "SELECT run_id FROM runs WHERE model_spec = ? AND benchmark_checksum = ? "
                    "AND config_hash = ? ORDER BY created DESC, run_id DESC LIMIT 1",
                    [spec, ensure_checksum(bench), config_hash]).fetchone()
                if hit is None:
                    raise RunnerError(
                        f"cannot rebuild the matrix: no stored run of {safe_text(spec)} on "
                        f"{safe_text(bench.name)} with these settings in {db_path} (run the "
                        f"sweep without --matrix-only to compute it)")
                metrics = store.load_metrics(hit[0])
                rows.append({"model": spec, "benchmark": bench.name,
                             **matrix.cell_from_metrics(metrics,
                                                        bench.manifest.primary_metric),
                             "partial": bool(bench.manifest.partial), "run_id": hit[0],
                             "reused": True})
    return pd.DataFrame(rows, columns=[*matrix.CELL_COLUMNS, "unit", "reused"])
