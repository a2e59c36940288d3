"""``foilbench report``: one self-contained HTML file from stored runs."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import click

from foilbench.store.db import DEFAULT_DB


def default_report_path(runs: tuple[str, ...]) -> Path:
    """``foilbench-runs/report-<runs>.html``: the given ids (each cut to 8 characters) joined,
    or a hash of them beyond three; ``report-all.html`` for none.

    >>> default_report_path(("3f2a9c01deadbeef", "77aa0b12"))
    PosixPath('foilbench-runs/report-3f2a9c01-77aa0b12.html')
    """
    parts = [re.sub(r"[^A-Za-z0-9_.-]", "_", r)[:8] for r in runs]
    if not parts:
        name = "all"
    elif len(parts) <= 3:
        name = "-".join(parts)
    else:
        name = f"{len(parts)}runs-{hashlib.sha256(' '.join(runs).encode()).hexdigest()[:10]}"
    return Path("foilbench-runs") / f"report-{name}.html"


@click.command("report")
@click.argument("runs", nargs=-1)
@click.option("--db", "db_path", type=click.Path(path_type=Path), default=DEFAULT_DB,
              show_default=True, help="Results database.")
@click.option("--out", "out_path", type=click.Path(path_type=Path), default=None,
              help="HTML file to write. Default: foilbench-runs/report-RUNS.html, one file per "
                   "comparison (named after the runs given, 'all' for none).")
@click.option("--force", is_flag=True, help="Overwrite an existing --out file without asking.")
def report(runs: tuple[str, ...], db_path: Path, out_path: Path | None, force: bool) -> None:
    """Write the HTML report of RUNS (ids or unique prefixes; all runs when none are given).

    The file works from file:// with no network: figures and example images are inlined.
    """
    from foilbench.report import write_report

    out_path = out_path or default_report_path(runs)
    if out_path.exists() and not force:
        if not sys.stdin.isatty():
            raise click.ClickException(f"{out_path} exists; pass --force to overwrite it or "
                                       "--out to write another file")
        click.confirm(f"{out_path} exists; overwrite it?", abort=True)
    path = write_report(db_path, list(runs), out_path)
    click.echo(f"report: {path.resolve()}")
