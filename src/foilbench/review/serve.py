"""Run the review app under uvicorn on a socket we bind ourselves (so port 0 works and the
real address can be printed before the first request)."""

from __future__ import annotations

import socket
from collections.abc import Callable

from foilbench.review.app import create_app
from foilbench.review.state import ReviewSession


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve_app(app, host: str, port: int,
              on_ready: Callable[[str], None] | None = None) -> None:
    """Serve ``app`` on our own socket until interrupted; ``on_ready(url)`` once it is bound
    (an IPv6 host is shown in brackets, as a URL needs). The one serve loop of the review apps."""
    import uvicorn

    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                           lifespan="off"))
    if on_ready is not None:
        on_ready(url)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def run_server(session: ReviewSession, host: str = "127.0.0.1", port: int = 8766,
               on_ready: Callable[[str], None] | None = None) -> None:
    """Serve the pair review app until interrupted."""
    serve_app(create_app(session, host=host), host, port, on_ready)
