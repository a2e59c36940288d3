"""A results store as a folder of Parquet files, to move it between DuckDB versions.

DuckDB's storage format changes between major versions: a store written by one DuckDB may not
open in another (:mod:`foilbench.store.connect`). :func:`export_store` writes every table of a
store to ``TABLE.parquet`` plus ``store_export.json`` (the tables, their column types and row
counts, the schema version and the DuckDB that wrote them); :func:`import_store` builds a new
store from such a folder with the installed DuckDB, in the portable storage format. Parquet
is the bridge because every DuckDB reads and writes it the same way: the round trip is exact
(every row, every value, every column type; ``tests/test_store_portable.py``).

An export of an older schema imports as that schema's tables and is then migrated like any
older store; an export of a newer schema than this foilbench knows is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from foilbench.errors import FoilbenchError
from foilbench.jsonio import write_json
from foilbench.store.connect import StoreError, open_connection, prepare_schema
from foilbench.store.schema import DDL, SCHEMA_VERSION
from foilbench.store.sweeps import DDL as SWEEP_DDL

FORMAT = "foilbench-store-export"
FORMAT_VERSION = 1
MANIFEST = "store_export.json"  # not a benchmark manifest (only data/format.py writes those)


class StoreTransferError(FoilbenchError):
    """A store export or import cannot be done (the folder or file named says why)."""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[list[str]]:
    rows = con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE "
                       "table_name = ? AND database_name = current_database() "
                       "ORDER BY column_index", [table]).fetchall()
    return [[str(name), str(kind)] for name, kind in rows]


def store_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables of the store open on ``con`` (its own database only), sorted."""
    rows = con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = "
                       "current_database() ORDER BY table_name").fetchall()
    return [str(r[0]) for r in rows]


def export_store(db_path: str | Path, folder: str | Path) -> Path:
    """Write every table of the store ``db_path`` to ``folder`` (created; it must be empty
    or absent) as Parquet, with ``store_export.json``; returns the folder."""
    db_path, folder = Path(db_path), Path(folder)
    if not db_path.is_file():
        raise StoreTransferError(f"no results store at {db_path} to export")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise StoreTransferError(f"{folder} exists and is not an empty folder; export into a "
                                 "new folder")
    con = open_connection(db_path, read_only=True)
    try:
        version = prepare_schema(con, db_path, read_only=True)
        folder.mkdir(parents=True, exist_ok=True)
        tables: dict[str, Any] = {}
        for table in store_tables(con):
            target = folder / f"{table}.parquet"
            con.execute(f"COPY (SELECT * FROM {_quote(table)}) TO {_literal(target)} "
                        "(FORMAT PARQUET)")
            rows = con.execute(f"SELECT count(*) FROM {_quote(table)}").fetchone()
            tables[table] = {"file": target.name, "rows": int(rows[0]) if rows else 0,
                             "columns": _columns(con, table)}
    finally:
        con.close()
    write_json(folder / MANIFEST, {"format": FORMAT, "format_version": FORMAT_VERSION,
                                   "schema_version": version,
                                   "duckdb_version": duckdb.__version__, "tables": tables})
    return folder


def read_manifest(folder: Path) -> dict[str, Any]:
    """The export's manifest, checked: this format, a schema this foilbench knows."""
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreTransferError(f"{folder} is not a store export (no {MANIFEST}); make one "
                                 "with `foilbench store export DB FOLDER`") from None
    except (OSError, json.JSONDecodeError) as e:
        raise StoreTransferError(f"{path} cannot be read as JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StoreTransferError(f"{path} is not a foilbench store export manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise StoreTransferError(f"{path}: export format {manifest.get('format_version')!r}, "
                                 f"this foilbench reads format {FORMAT_VERSION}; use the "
                                 "foilbench that wrote it")
    if not isinstance(manifest.get("schema_version"), int) or \
            manifest["schema_version"] > SCHEMA_VERSION:
        raise StoreTransferError(f"{path}: store schema {manifest.get('schema_version')!r} is "
                                 f"newer than the schema {SCHEMA_VERSION} this foilbench "
                                 "knows; upgrade foilbench to import it")
    return manifest


def import_store(folder: str | Path, db_path: str | Path) -> Path:
    """Build a new store at ``db_path`` (which must not exist) from the export ``folder``,
    with the installed DuckDB; returns ``db_path``."""
    folder, db_path = Path(folder), Path(db_path)
    manifest = read_manifest(folder)
    if db_path.exists():
        raise StoreTransferError(f"{db_path} exists; import into a new file (nothing was "
                                 "written)")
    db_path.parent.mkdir(parents=True, exist_ok=True)
    con = open_connection(db_path, read_only=False)
    try:
        con.execute("BEGIN TRANSACTION")
        for sql in [*DDL, SWEEP_DDL]:  # this foilbench's tables, keys included
            con.execute(sql)
        for table, entry in sorted(manifest["tables"].items()):
            _load_table(con, folder, table, entry)
        con.execute("COMMIT")
    except BaseException:
        con.close()
        db_path.unlink(missing_ok=True)
        Path(f"{db_path}.wal").unlink(missing_ok=True)
        raise
    try:  # an older schema's export is now that older store: migrated as any other
        prepare_schema(con, db_path, read_only=False)
    finally:
        con.close()
    return db_path


def _load_table(con: duckdb.DuckDBPyConnection, folder: Path, table: str,
                entry: dict[str, Any]) -> None:
    """Load ``table``'s Parquet file into the table of that name (one of this foilbench's,
    or else created with the exported column types)."""
    source = folder / str(entry.get("file", ""))
    if not source.is_file() or source.parent != folder:
        raise StoreTransferError(f"{folder}: the file of table {table!r} ({source.name}) is "
                                 "missing")
    columns = entry.get("columns") or []
    if not columns:
        raise StoreTransferError(f"{folder / MANIFEST}: table {table!r} lists no columns")
    have = {name for name, _ in _columns(con, table)}
    try:
        if not have:
            body = ", ".join(f"{_quote(name)} {kind}" for name, kind in columns)
            con.execute(f"CREATE TABLE {_quote(table)} ({body})")
        elif not {name for name, _ in columns} <= have:
            extra = sorted({name for name, _ in columns} - have)
            raise StoreTransferError(f"{folder / MANIFEST}: table {table!r} has columns "
                                     f"{', '.join(extra)} that this foilbench's schema lacks")
        names = ", ".join(_quote(name) for name, _ in columns)
        con.execute(f"INSERT INTO {_quote(table)} ({names}) SELECT {names} FROM "
                    f"read_parquet({_literal(source)})")
    except duckdb.Error as e:
        raise StoreTransferError(f"{source}: cannot load table {table!r} ({e})") from None
    got = con.execute(f"SELECT count(*) FROM {_quote(table)}").fetchone()
    if got is None or int(got[0]) != int(entry.get("rows", -1)):
        raise StoreTransferError(f"{source}: {got[0] if got else 0} rows, the manifest says "
                                 f"{entry.get('rows')}; the export is incomplete")


__all__ = ["StoreError", "StoreTransferError", "export_store", "import_store"]
