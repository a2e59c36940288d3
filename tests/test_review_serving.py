"""How every ``foilbench review`` page is served from the CLI (cli/review_serving.py): a port
already taken is a one-line error naming it, and only a host other machines can reach gets
the warning."""

from __future__ import annotations

import socket

import click
import pytest
from starlette.applications import Starlette

from foilbench.cli.review_serving import serve_page, warn_if_reachable


def test_a_taken_port_is_one_line_naming_it():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        with pytest.raises(click.ClickException, match=f"cannot listen on 127.0.0.1:{port}: "):
            serve_page(Starlette(), "127.0.0.1", port, lambda url: f"at {url}")
    finally:
        taken.close()


@pytest.mark.parametrize(("host", "warned"), [("127.0.0.1", False), ("127.0.0.2", False),
                                             ("::1", False), ("0.0.0.0", True)])
def test_only_a_reachable_host_is_warned(capsys, host, warned):
    warn_if_reachable(host, "the page", "record decisions")
    err = capsys.readouterr().err
    assert (err == f"warning: binding to {host} makes the page reachable from other "
                   "machines; anyone who can reach it can record decisions\n") is warned
    assert (err == "") is not warned


def test_a_study_page_on_a_reachable_host_is_warned_before_serving(capsys):
    """Both Auto-Comp study commands (``review concepts``, ``review solvability``) warn as
    ``review`` and ``review compare`` do; the study is closed even when serving fails."""
    from foilbench.cli.review_studies import run_study

    class Study:
        closed = False

        def close(self):
            self.closed = True

    taken = socket.socket()
    taken.bind(("0.0.0.0", 0))
    taken.listen(1)
    study = Study()
    try:
        with pytest.raises(click.ClickException, match="cannot listen on 0.0.0.0:"):
            run_study(study, export_dir=None, report_only=False, as_json=False,
                      export=str, lines=str, app=Starlette, announce=str, host="0.0.0.0",
                      port=taken.getsockname()[1])
    finally:
        taken.close()
    assert capsys.readouterr().err.startswith(
        "warning: binding to 0.0.0.0 makes the study page reachable from other machines")
    assert study.closed
