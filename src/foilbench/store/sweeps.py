"""Sweep matrices in the results database: which run fills each (model, benchmark) cell.

A sweep is one ``foilbench sweep`` invocation. Its cells are stored beside the runs (table
``sweep_cells``), so the Table-8 matrix can be rebuilt later from the database alone; values
are copied from each run's overall primary-metric row for convenience, the run stays the
source of truth.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd

DDL = """CREATE TABLE IF NOT EXISTS sweep_cells (
    sweep_id VARCHAR,
    created TIMESTAMP,
    model VARCHAR,
    benchmark VARCHAR,
    metric VARCHAR,
    value DOUBLE,
    ci_low DOUBLE,
    ci_high DOUBLE,
    n INTEGER,
    partial BOOLEAN,
    run_id VARCHAR,
    reused BOOLEAN
)"""
COLUMNS = ["sweep_id", "created", "model", "benchmark", "metric", "value", "ci_low", "ci_high",
           "n", "partial", "run_id", "reused"]


def write_sweep(con, sweep_id: str, cells: pd.DataFrame) -> None:
    """Insert one sweep's cells (columns of :data:`COLUMNS` except sweep_id/created)."""
    con.execute(DDL)
    frame = cells.assign(sweep_id=sweep_id,
                         created=datetime.now(timezone.utc).replace(tzinfo=None))[COLUMNS]
    con.register("_incoming_sweep", frame)
    try:
        con.execute(f"INSERT INTO sweep_cells ({', '.join(COLUMNS)}) "
                    f"SELECT {', '.join(COLUMNS)} FROM _incoming_sweep")
    finally:
        con.unregister("_incoming_sweep")


def load_sweep(con, sweep_id: str) -> pd.DataFrame:
    con.execute(DDL)
    return con.execute("SELECT * FROM sweep_cells WHERE sweep_id = ? ORDER BY created",
                       [sweep_id]).df()
