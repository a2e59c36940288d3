"""``foilbench export``: a stored run's per-item scores and outcomes as Parquet or CSV."""

from __future__ import annotations

from pathlib import Path

import click

from foilbench.store.db import DEFAULT_DB


@click.command("export")
@click.argument("run")
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet",
              show_default=True, help="File format.")
@click.option("--db", "db_path", type=click.Path(path_type=Path), default=DEFAULT_DB,
              show_default=True, help="Results database.")
@click.option("--out", "out_path", type=click.Path(path_type=Path), default=None,
              help="File to write (default: RUN_ID.items.FORMAT next to the database).")
def export(run: str, fmt: str, db_path: Path, out_path: Path | None) -> None:
    """Write RUN's per-item table (an id or unique prefix): item id and metadata, raw scores,
    and per metric the outcome (strict >), tie and chance."""
    from foilbench.report.items import export_items, resolve_run

    if out_path is None:
        out_path = db_path.parent / f"{resolve_run(db_path, run)}.items.{fmt}"
    path = export_items(db_path, run, out_path, fmt)
    click.echo(f"exported: {path.resolve()}")
