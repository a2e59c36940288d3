"""How ``foilbench serve`` is served, apart from its pages: its security headers (data for
:class:`foilbench.web_guards.SecurityHeaders`), uvicorn on a socket bound here, and the
warning for a host reachable from the network."""

from __future__ import annotations

import base64
import hashlib
import threading

from starlette.applications import Starlette

from foilbench.report.html import SORT_JS
from foilbench.web_guards import HeaderPolicy, is_loopback

# the page's one script (table sorting) by its hash: no other script, inline or injected, runs
CSP = ("default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; script-src "
       f"'sha256-{base64.b64encode(hashlib.sha256(SORT_JS.encode()).digest()).decode()}'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
#: the pages' headers (:class:`foilbench.web_guards.SecurityHeaders`): CSP (only the page's own
#: sorting script may run), no sniffing, no referrer, no framing
HEADERS = HeaderPolicy({"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                        "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"})


class AppServer:
    """uvicorn on a socket bound here (port 0 works, the real address is known before the
    first request), with the ``serve_forever`` / ``shutdown`` / ``server_close`` surface of
    :mod:`http.server` that the CLI and the tests use."""

    def __init__(self, app: Starlette, host: str, port: int) -> None:
        import uvicorn

        from foilbench.review.serve import bind

        self.sock = bind(host, port)
        self.server_address = self.sock.getsockname()[:2]
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning",
                                                     access_log=False, lifespan="off"))
        self._done = threading.Event()

    def serve_forever(self) -> None:
        try:
            self._server.run(sockets=[self.sock])
        finally:
            self._done.set()

    def shutdown(self) -> None:
        self._server.should_exit = True
        self._done.wait(10)

    def server_close(self) -> None:
        self.sock.close()


def exposure_warning(host: str) -> str | None:
    """The warning to print when ``host`` makes the app reachable from other machines.

    >>> exposure_warning("127.0.0.1") is None
    True
    >>> exposure_warning("0.0.0.0").startswith("warning: --host 0.0.0.0")
    True
    """
    if is_loopback(host):
        return None
    return (f"warning: --host {host} makes this app reachable from the network: anyone who can "
            "reach this machine can read the stored results and the benchmark images (there is "
            "no login). Use the default 127.0.0.1 unless that is what you want.")
