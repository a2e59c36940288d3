"""Serving a ``foilbench review`` page from the command line, the same for every page: the
line saying where it is served (flushed, so a pipe sees the URL before the first request),
the browser opened on request, and a port that cannot be bound as a one-line error instead
of a traceback."""

from __future__ import annotations

import sys
import webbrowser
from collections.abc import Callable

import click

from foilbench.web_guards import is_loopback


def serve_page(app, host: str, port: int, announce: Callable[[str], str],
               open_browser: bool = False) -> None:
    """Serve ``app`` until Ctrl-C (:func:`foilbench.review.serve.serve_app`), printing
    ``announce(url)`` once the socket is bound."""
    from foilbench.review.serve import serve_app

    def ready(url: str) -> None:
        click.echo(announce(url))
        sys.stdout.flush()
        if open_browser:
            webbrowser.open(url)

    try:
        serve_app(app, host, port, ready)
    except OSError as e:
        raise click.ClickException(f"cannot listen on {host}:{port}: {e.strerror}") from None


def warn_if_reachable(host: str, what: str, anyone_can: str) -> None:
    """Warn (stderr) when ``host`` makes ``what`` reachable from other machines."""
    if not is_loopback(host):
        click.echo(f"warning: binding to {host} makes {what} reachable from other machines; "
                   f"anyone who can reach it can {anyone_can}", err=True)
