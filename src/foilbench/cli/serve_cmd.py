"""``foilbench serve``: browse the results database in a local web app."""

from __future__ import annotations

from pathlib import Path

import click

from foilbench.store.db import DEFAULT_DB


@click.command("serve")
@click.option("--db", "db_path", type=click.Path(path_type=Path), default=DEFAULT_DB,
              show_default=True, help="Results database (opened read-only).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to bind; the default keeps the app on this machine.")
@click.option("--port", default=8765, show_default=True, type=int, help="0 picks a free port.")
def serve(db_path: Path, host: str, port: int) -> None:
    """Leaderboard across runs (sort, filter by benchmark, edit type, tier), a model
    drill-down and an item browser. Read-only; serves only the images the stored runs list, from
    inside their benchmark folders. Refuses to start when --db does not exist. Needs
    foilbench[review] (starlette, uvicorn): pip install 'foilbench[review]'."""
    from foilbench.report.app_server import exposure_warning
    from foilbench.report.server import make_server

    warning = exposure_warning(host)
    if warning:
        click.echo(warning, err=True)
    server = make_server(db_path, host, port)
    click.echo(f"serving {db_path} at http://{host}:{server.server_address[1]}/ (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
