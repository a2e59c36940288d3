"""A results store moves between DuckDB versions: new stores are written in DuckDB 1.0's
storage format (which every duckdb the pin allows opens), a store in a format the installed
DuckDB cannot read is refused with the fix, and ``foilbench store export|import`` carries a
store through Parquet exactly (every table, column type and row)."""

from __future__ import annotations

import json
import struct

import duckdb
import pandas as pd
import pytest

from _reliability import choice_folder, fb
from foilbench import runner
from foilbench.store import connect
from foilbench.store.connect import StoreError
from foilbench.store.db import ResultsStore
from foilbench.store.portable import (
    StoreTransferError,
    export_store,
    import_store,
    store_tables,
)
from foilbench.store.schema import SCHEMA_VERSION
from foilbench.store.sweeps import COLUMNS

DUCKDB_1_0_STORAGE = 64  # the version number in the file header of DuckDB 0.10-1.0 files
# what DuckDB 1.0.0 says, verbatim, when it opens a file written by DuckDB 2.0
FOREIGN = ("IO Error: Trying to read a database file with version number 999, but we can only "
           "read version 64.\nThe database file was created with an newer version of DuckDB.")


@pytest.fixture
def stored(tmp_path, monkeypatch):
    """A store with a finished run and a sweep cell."""
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    outcome = runner.run(["tiny-random"], [str(choice_folder(tmp_path / "bench", 6))],
                         tmp_path / "out", report=False, n_boot=100, progress=False,
                         use_cache=False)
    cell = {c: None for c in COLUMNS}
    cell.update(sweep_id="s1", created=pd.Timestamp("2026-12-01 10:00:00"), model="m",
                benchmark="b", metric="acc", value=0.5, ci_low=0.25, ci_high=0.75, n=6,
                partial=False, run_id=outcome.run_ids[0], reused=False)
    with ResultsStore(outcome.db_path) as store:
        store.write_sweep("s1", pd.DataFrame([cell]))
    return outcome.db_path


def header_version(path) -> int:
    with open(path, "rb") as f:
        head = f.read(20)
    assert head[8:12] == b"DUCK"
    return struct.unpack("<Q", head[12:20])[0]


def table_rows(path, table: str) -> pd.DataFrame:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(f"SELECT * FROM {table} ORDER BY ALL").df()
    finally:
        con.close()


def columns(path) -> dict[str, list[tuple[str, str]]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute("SELECT table_name, column_name, data_type FROM duckdb_columns() "
                           "WHERE database_name = current_database() "
                           "ORDER BY table_name, column_index").fetchall()
    finally:
        con.close()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, name, kind in rows:
        out.setdefault(table, []).append((name, kind))
    return out


def test_a_new_store_is_written_in_duckdb_1_0_storage(stored):
    assert header_version(stored) == DUCKDB_1_0_STORAGE
    with ResultsStore(stored) as store:  # written again: the format stays
        store.con.execute("CHECKPOINT")
    assert header_version(stored) == DUCKDB_1_0_STORAGE


def test_export_then_import_round_trips_every_table_exactly(stored, tmp_path, capsys):
    code, out, err = fb(["store", "export", stored, tmp_path / "exp"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "exp" / "store_export.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["duckdb_version"] == duckdb.__version__
    code, out, err = fb(["store", "import", tmp_path / "exp", tmp_path / "new.duckdb"], capsys)
    assert code == 0, err
    new = tmp_path / "new.duckdb"
    assert header_version(new) == DUCKDB_1_0_STORAGE
    assert columns(new) == columns(stored)  # the same tables, columns and types
    con = duckdb.connect(str(stored), read_only=True)
    tables = store_tables(con)
    con.close()
    assert {"runs", "item_results", "item_outcomes", "metrics", "meta",
            "sweep_cells"} <= set(tables)
    for table in tables:
        before, after = table_rows(stored, table), table_rows(new, table)
        assert len(before) == manifest["tables"][table]["rows"]
        pd.testing.assert_frame_equal(before, after, check_exact=True)
    assert len(table_rows(new, "item_results")) > 0 and len(table_rows(new, "sweep_cells")) == 1
    with ResultsStore(new) as store:  # a working store: keys kept, writes go through
        assert store.schema_version == SCHEMA_VERSION
        run = store.get_run(store.list_runs()["run_id"].iloc[0])
        assert run["environment"]["libraries"]["duckdb"] == duckdb.__version__
        with pytest.raises(duckdb.ConstraintException):
            store.con.execute("INSERT INTO runs (run_id) VALUES (?)", [run["run_id"]])


def test_an_older_schema_export_imports_and_is_migrated(stored, tmp_path):
    folder = export_store(stored, tmp_path / "exp")
    manifest = json.loads((folder / "store_export.json").read_text())
    manifest["schema_version"] = 3  # as a schema-3 store exported it: no runs.environment
    manifest["tables"]["runs"]["columns"] = [
        c for c in manifest["tables"]["runs"]["columns"] if c[0] != "environment"]
    (folder / "store_export.json").write_text(json.dumps(manifest))
    told: list[str] = []
    import_store(folder, tmp_path / "new.duckdb")
    with ResultsStore(tmp_path / "new.duckdb", notify=told.append) as store:
        assert store.schema_version == SCHEMA_VERSION
    assert told == []  # the import migrated it already
    assert table_rows(tmp_path / "new.duckdb", "runs")["environment"].isna().all()
    assert len(table_rows(tmp_path / "new.duckdb", "runs")) == manifest["tables"]["runs"]["rows"]


def test_a_store_in_a_foreign_storage_format_names_the_fix(stored, monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise duckdb.IOException(FOREIGN)

    monkeypatch.setattr(connect.duckdb, "connect", refuse)
    with pytest.raises(StoreError) as caught:
        ResultsStore(stored, read_only=True)
    msg = str(caught.value)
    assert str(stored) in msg and "version number 999" in msg
    assert f"duckdb {duckdb.__version__} cannot read" in msg
    assert "foilbench store export" in msg and "foilbench store import" in msg
    assert msg.count(". ") == 0  # one sentence
    code, _, err = fb(["show", "--db", stored], capsys)
    assert code == 2 and "foilbench store export" in err


def test_transfer_errors_name_the_file_or_folder(stored, tmp_path, capsys):
    folder = export_store(stored, tmp_path / "exp")
    with pytest.raises(StoreTransferError, match="not an empty folder"):
        export_store(stored, folder)
    with pytest.raises(StoreTransferError, match="no results store"):
        export_store(tmp_path / "absent.duckdb", tmp_path / "e2")
    with pytest.raises(StoreTransferError, match="exists; import into a new file"):
        import_store(folder, stored)
    with pytest.raises(StoreTransferError, match=r"no store_export\.json"):
        import_store(tmp_path, tmp_path / "x.duckdb")
    manifest = json.loads((folder / "store_export.json").read_text())
    manifest["schema_version"] = SCHEMA_VERSION + 1
    (folder / "store_export.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreTransferError, match="newer than the schema"):
        import_store(folder, tmp_path / "x.duckdb")
    manifest["schema_version"] = SCHEMA_VERSION
    manifest["tables"]["metrics"]["rows"] += 1
    (folder / "store_export.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreTransferError, match="incomplete"):
        import_store(folder, tmp_path / "x.duckdb")
    assert not (tmp_path / "x.duckdb").exists()  # nothing half-written is left
    manifest["tables"]["metrics"]["rows"] -= 1
    (folder / "store_export.json").write_text(json.dumps(manifest))
    (folder / "runs.parquet").unlink()
    code, _, err = fb(["store", "import", folder, tmp_path / "y.duckdb"], capsys)
    assert code == 2 and "runs.parquet" in err and "missing" in err
