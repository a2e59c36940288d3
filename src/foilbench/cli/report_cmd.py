"""``foilbench report``: one self-contained HTML file from stored runs."""

from __future__ import annotations

from pathlib import Path

import click

from foilbench.store.db import DEFAULT_DB


@click.command("report")
@click.argument("runs", nargs=-1)
@click.option("--db", "db_path", type=click.Path(path_type=Path), default=DEFAULT_DB,
              show_default=True, help="Results database.")
@click.option("--out", "out_path", type=click.Path(path_type=Path),
              default=Path("foilbench-runs") / "report.html", show_default=True,
              help="HTML file to write.")
def report(runs: tuple[str, ...], db_path: Path, out_path: Path) -> None:
    """Write the HTML report of RUNS (ids or unique prefixes; all runs when none are given).

    The file works from file:// with no network: figures and example images are inlined.
    """
    from foilbench.report import write_report

    path = write_report(db_path, list(runs), out_path)
    click.echo(f"report: {path.resolve()}")
