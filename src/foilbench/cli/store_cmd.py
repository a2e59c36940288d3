"""``foilbench store export|import``: move a results store between DuckDB versions."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("store")
def store() -> None:
    """Move a results store between DuckDB versions through Parquet.

    \b
    DuckDB's file format changes between major versions. Where the store opens:
      foilbench store export foilbench-runs/foilbench.duckdb store-export/
    then with the other DuckDB:
      foilbench store import store-export/ foilbench-runs/foilbench.duckdb
    """


@store.command("export")
@click.argument("db_path", type=click.Path(path_type=Path))
@click.argument("folder", type=click.Path(path_type=Path))
def export_cmd(db_path: Path, folder: Path) -> None:
    """Write every table of the store DB_PATH to FOLDER (new or empty) as Parquet, with a
    store_export.json."""
    from foilbench.store.portable import export_store

    click.echo(f"exported: {export_store(db_path, folder).resolve()}")


@store.command("import")
@click.argument("folder", type=click.Path(path_type=Path))
@click.argument("db_path", type=click.Path(path_type=Path))
def import_cmd(folder: Path, db_path: Path) -> None:
    """Build a new store DB_PATH (it must not exist) from the export FOLDER, with the
    installed DuckDB."""
    from foilbench.store.portable import import_store

    click.echo(f"imported: {import_store(folder, db_path).resolve()}")
