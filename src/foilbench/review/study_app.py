"""The web page of a one-page human study: one GET for the state, one POST per answer.

Auto-Comp's concept check and solvability study share it. The protections are the main review
app's (:mod:`foilbench.review.app`, whose CSRF check, headers and host check it reuses):
loopback by default with trusted hosts, an HMAC CSRF token on every POST (JSON objects only),
bodies bounded before they are read (:class:`foilbench.web_guards.Guards`), a strict
Content-Security-Policy, ``/file`` serving only the images the sample names, each resolved
under the benchmark root and checked to be an image by its bytes, and outside text reaching
the page only as JSON (inserted with ``textContent``; the title HTML-escaped).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from html import escape
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from foilbench.review.app import LOOPBACK, SESSION_COOKIE, SecurityHeaders, _Csrf
from foilbench.review.units import ReviewError
from foilbench.web_guards import Guards, image_response


def image_files(root: Path, images: Iterable[str]) -> dict[str, Path]:
    """``relative path -> file`` for the images that lie under ``root`` and exist."""
    root = root.resolve()
    out = {}
    for rel in images:
        path = (root / rel).resolve()
        if path.is_relative_to(root) and path.is_file():
            out[rel] = path
    return out


def create_study_app(*, page: str, title: str, csrf_secret: str, files: dict[str, Path],
                     state: Callable[[], dict], decide: Callable[[dict], dict],
                     host: str = "127.0.0.1") -> Starlette:
    """The app: ``/`` (static ``page`` with ``{{TITLE}}`` and ``{{CSRF}}`` filled),
    ``GET /api/state`` -> ``state()``, ``POST /api/decide`` -> ``decide(body)`` (a
    :class:`ReviewError` or ``ValueError`` is a 400 with its sentence), ``/file?path=``."""
    csrf = _Csrf(csrf_secret)
    static = resources.files("foilbench.review").joinpath("static")

    async def index(request: Request) -> Response:
        sid = request.cookies.get(SESSION_COOKIE) or secrets.token_urlsafe(24)
        html = (static.joinpath(page).read_text("utf-8")
                .replace("{{TITLE}}", escape(title))
                .replace("{{CSRF}}", escape(csrf.token(sid))))
        resp = HTMLResponse(html)
        resp.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="strict", path="/")
        return resp

    async def api_state(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(state))

    async def api_decide(request: Request) -> Response:
        body = await csrf.json_object(request)
        if isinstance(body, Response):
            return body
        try:
            return JSONResponse(await run_in_threadpool(decide, body))
        except (ReviewError, ValueError, TypeError) as e:
            return JSONResponse({"error": str(e)}, status_code=400)

    def serve_file(request: Request) -> Response:
        path = files.get(request.query_params.get("path", ""))
        if path is None:
            return JSONResponse({"error": "not an image of this sample"}, status_code=404)
        return image_response(path)

    routes = [Route("/", index), Route("/api/state", api_state),
              Route("/api/decide", api_decide, methods=["POST"]), Route("/file", serve_file),
              Route("/favicon.ico", lambda request: Response(status_code=204)),
              Mount("/static", app=StaticFiles(directory=str(static)), name="static")]
    hosts = ["*"] if host in ("0.0.0.0", "::") else sorted({*LOOPBACK, host})
    return Starlette(routes=routes, middleware=[
        Middleware(TrustedHostMiddleware, allowed_hosts=hosts), Middleware(SecurityHeaders),
        Middleware(Guards)])
