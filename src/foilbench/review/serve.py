"""Run the review app under uvicorn on a socket we bind ourselves (so port 0 works and the
real address can be printed before the first request)."""

from __future__ import annotations

import socket
from collections.abc import Callable

from foilbench.review.app import LOOPBACK, create_app
from foilbench.review.state import ReviewSession


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def run_server(session: ReviewSession, host: str = "127.0.0.1", port: int = 8766,
               on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted; ``on_ready(url)`` is called once the socket is bound."""
    import uvicorn

    app = create_app(session, host=host)
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/"
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(url)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
