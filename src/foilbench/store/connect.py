"""Opening the results store: waiting for a lock, clear errors, and schema versions.

DuckDB lets one process hold a database file for writing, or several hold it for reading,
never both at once. foilbench therefore never keeps the store open while it works: a writer
opens it for the moment it writes one finished run (:mod:`foilbench.store.shared`), a reader
for one command or one web request. A process that finds the file locked waits, says so once,
and retries until ``$FOILBENCH_STORE_WAIT`` seconds (default 300) have passed; then it stops
with a message naming the file and the process holding it.

DuckDB's storage format: a new store is created in the format of DuckDB 1.0
(:data:`STORAGE_VERSION`; DuckDB keeps a file's format when it writes to it later), so every
DuckDB the pin admits (``duckdb>=1.4.4,<3``) opens and writes it and two people with
different DuckDB versions can share one (tested with 1.4.4, 1.5.6 and 2.0.1 in turn on one
store; DuckDB 1.0-1.3 are outside the pin: 1.0.0 cannot read the key indexes of such a file,
1.1-1.3 cannot take pandas 3's string columns). A file in a newer format (made by a DuckDB
>= 1.1 outside foilbench, or by an older foilbench) that the installed DuckDB cannot read is
refused with the fix: ``foilbench store export`` where it opens, ``foilbench store import``
here (:mod:`foilbench.store.portable`).

Versions: ``meta.schema_version`` says which schema wrote the store. A newer one is refused
(reading or writing: this code would misread it, or relabel it as its own); an older one is
read as it is and, when opened for writing, migrated explicitly (each step in
:data:`MIGRATIONS`, in one transaction, with a message). A file that is not a DuckDB database,
or a DuckDB database without foilbench's tables, is refused by name.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from foilbench.errors import FoilbenchError
from foilbench.store.schema import DDL, SCHEMA_VERSION
from foilbench.store.sweeps import DDL as SWEEP_DDL

# the storage format new stores are created in (DuckDB's oldest; module docstring)
STORAGE_VERSION = "v1.0.0"
WAIT_ENV = "FOILBENCH_STORE_WAIT"
DEFAULT_WAIT_S = 300.0
Notify = Callable[[str], None]

# version -> (what the step adds, statements) taking a store from that version to the next
MIGRATIONS: dict[int, tuple[str, list[str]]] = {
    1: ("tables compass_tables and blind_reference; columns runs.config_hash, "
        "runs.eval_stats, item_results.item_index",
        [*DDL, SWEEP_DDL,
         "ALTER TABLE runs ADD COLUMN IF NOT EXISTS config_hash VARCHAR",
         "ALTER TABLE runs ADD COLUMN IF NOT EXISTS eval_stats JSON",
         "ALTER TABLE item_results ADD COLUMN IF NOT EXISTS item_index INTEGER"]),
    2: ("column metrics.unit (the unit of n of each row; older rows keep none)",
        ["ALTER TABLE metrics ADD COLUMN IF NOT EXISTS unit VARCHAR"]),
    3: ("column runs.environment (library versions and device of each run; older rows "
        "keep none)",
        ["ALTER TABLE runs ADD COLUMN IF NOT EXISTS environment JSON"]),
}


class StoreError(FoilbenchError):
    """The results store cannot be opened: not a store, a newer schema, or locked too long."""


def wait_seconds() -> float:
    """How long to wait for a locked store: ``$FOILBENCH_STORE_WAIT`` or 300 seconds."""
    raw = os.environ.get(WAIT_ENV, "").strip()
    if not raw:
        return DEFAULT_WAIT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 0:
        raise StoreError(f"{WAIT_ENV}={raw!r}: expected a number of seconds >= 0")
    return value


def to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _lock_holder(message: str) -> str:
    pid = re.search(r"\(PID (\d+)\)", message)
    return f"process {pid.group(1)}" if pid else "another process"


def open_connection(path: Path, *, read_only: bool, wait_s: float | None = None,
                    notify: Notify | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection to ``path``, waiting (bounded) while another process holds it."""
    limit = wait_seconds() if wait_s is None else wait_s
    notify = notify or to_stderr
    deadline = time.monotonic() + limit
    pause, told = 0.05, False
    while True:
        try:
            if not read_only and not path.exists():
                create_portable(path)
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as e:
            text = str(e)
            if "database file with version number" in text:
                raise StoreError(foreign_storage_message(path, text)) from None
            if "not a valid DuckDB database" in text:
                raise StoreError(f"{path} is not a DuckDB database, so it cannot be the results "
                                 "store; move it away or point --out/--db elsewhere") from None
            if "lock" not in text.lower():
                raise StoreError(f"cannot open the results store {path}: {text}") from None
            holder = _lock_holder(text)
            if time.monotonic() + pause > deadline:
                raise StoreError(f"the results store {path} is still in use by {holder} after "
                                 f"waiting {limit:.0f} s; try again when it has finished (or "
                                 f"set {WAIT_ENV} to wait longer)") from None
            if not told:
                notify(f"the results store {path} is in use by {holder}; waiting for it (at "
                       f"most {limit:.0f} s)")
                told = True
            time.sleep(pause)
            pause = min(pause * 2, 1.0)
        except duckdb.Error as e:  # e.g. a file written by a newer DuckDB
            raise StoreError(f"cannot open the results store {path}: {e}") from None


def create_portable(path: Path) -> None:
    """Create an empty database file at ``path`` in :data:`STORAGE_VERSION`'s format.

    Through a throw-away in-memory connection, so the store's own connections stay plain
    (DuckDB refuses two connections to one file with different configurations). DuckDB 1.0
    has no ``STORAGE_VERSION`` option and writes that format anyway: the file is then made by
    the first ordinary connection."""
    con = duckdb.connect()
    try:
        quoted = str(path).replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS fresh_store (STORAGE_VERSION '{STORAGE_VERSION}')")
        con.execute("DETACH fresh_store")
    except duckdb.IOException:
        raise  # e.g. another process creating it at this moment: the caller's lock handling
    except duckdb.Error:
        pass  # DuckDB 1.0: no STORAGE_VERSION (its own format is that one)
    finally:
        con.close()


def foreign_storage_message(path: Path, error: str) -> str:
    """One sentence for a store in a DuckDB storage format the installed DuckDB cannot read,
    naming the fix."""
    found = re.search(r"version number (\d+)", error)
    return (f"the results store {path} is in a DuckDB storage format (version number "
            f"{found.group(1) if found else '?'}) that the installed duckdb "
            f"{duckdb.__version__} cannot read: where it opens (the DuckDB that wrote it), run "
            f"`foilbench store export {path} FOLDER`, then here `foilbench store import FOLDER "
            "NEW.duckdb` (or install that duckdb here)")


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def stored_version(con: duckdb.DuckDBPyConnection, path: Path) -> int | None:
    """The store's schema version; None for an empty database (a new store)."""
    tables = _tables(con)
    if "meta" in tables:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is not None:
            try:
                return int(row[0])
            except (TypeError, ValueError):
                raise StoreError(f"results store {path}: schema_version {row[0]!r} is not a "
                                 "number") from None
    if "runs" in tables:
        return 1  # the first stores did not always record their version
    if tables:
        raise StoreError(f"{path} is a DuckDB database but not a foilbench results store (it "
                         f"holds {', '.join(sorted(tables))} and no 'runs' table)")
    return None


def prepare_schema(con: duckdb.DuckDBPyConnection, path: Path, *, read_only: bool,
                   notify: Notify | None = None) -> int:
    """Check the store's version; create (new) or migrate (older) it when writable. Returns
    the version the store now has."""
    version = stored_version(con, path)
    if version is not None and version > SCHEMA_VERSION:
        from foilbench import __version__

        raise StoreError(f"results store {path} has schema version {version}, newer than the "
                         f"schema {SCHEMA_VERSION} this foilbench ({__version__}) reads and "
                         "writes; upgrade foilbench, or use another --out/--db (nothing was "
                         "written)")
    if read_only:
        if version is None:
            raise StoreError(f"{path} holds no foilbench results (an empty database)")
        return version
    if version is None:
        _apply(con, [*DDL, SWEEP_DDL])
        return SCHEMA_VERSION
    while version < SCHEMA_VERSION:
        what, statements = MIGRATIONS[version]
        (notify or to_stderr)(f"results store {path}: migrating schema {version} -> "
                              f"{version + 1} (adds {what})")
        _apply(con, statements, version + 1)
        version += 1
    return version


def _apply(con: duckdb.DuckDBPyConnection, statements: list[str],
           version: int = SCHEMA_VERSION) -> None:
    """Run ``statements`` and record ``version``, all in one transaction."""
    con.execute("BEGIN TRANSACTION")
    try:
        for sql in statements:
            con.execute(sql)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(version)])
        con.execute("COMMIT")
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:  # a failed COMMIT (a full disk) has ended the transaction
            pass
        raise
