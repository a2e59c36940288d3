"""What every review app shares, so that each app is its own routes and nothing else.

- the session cookie and the CSRF token (:class:`Csrf`): an HMAC of the browser's session
  cookie under a secret kept in the app's store, checked in constant time on every POST,
  and every write through :meth:`Csrf.write` (a bad request a 400 with its sentence);
- the security headers, as data (:data:`HEADERS`, applied by
  :class:`foilbench.web_guards.SecurityHeaders`): scripts, styles, images and requests from
  the app only, and no caching of the page or the API;
- the image allow-list (:func:`image_files`) and ``/file`` over it (:func:`file_route`);
- the page (:func:`page_response`): its body, ``static/<page>.html``, inside the one shell
  ``static/page.html``, which loads ``static/common.js`` (the helpers every page uses) and
  then ``static/<page>.js``; the title HTML-escaped, everything else reaching the page as JSON;
- the app (:func:`review_app`): the routes plus ``/favicon.ico`` and ``/static``, behind the
  trusted-host check, the headers and the bounded bodies (:class:`foilbench.web_guards.Guards`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterable
from html import escape
from importlib import resources
from pathlib import Path
from typing import TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from foilbench.review.units import ReviewError
from foilbench.web_guards import (
    Guards,
    HeaderPolicy,
    SecurityHeaders,
    image_response,
    trusted_hosts,
)

SESSION_COOKIE = "foilbench_review_session"
CSRF_HEADER = "x-csrf-token"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = HeaderPolicy({"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                        "Referrer-Policy": "no-referrer"}, no_store=("/", "/api/*"))
#: each page's stylesheets (its body is static/<page>.html, its script static/<page>.js)
STYLES = {"review": ("review.css",), "choice": ("choice.css",),
          "compare": ("choice.css", "compare.css"), "concepts": ("review.css",),
          "solvability": ("review.css",)}
_SLOT = re.compile(r"\{\{([A-Z]+)\}\}")
T = TypeVar("T")


class Csrf:
    """The token a page sends back on every POST, and the check of it."""

    def __init__(self, secret: str):
        self.secret = secret.encode()

    def token(self, session_id: str) -> str:
        return hmac.new(self.secret, session_id.encode(), hashlib.sha256).hexdigest()

    def check(self, request: Request) -> Response | None:
        """None when the POST may proceed, else the refusal to send."""
        session_id = request.cookies.get(SESSION_COOKIE, "")
        sent = request.headers.get(CSRF_HEADER, "")
        if not session_id or not sent or not hmac.compare_digest(sent, self.token(session_id)):
            return JSONResponse({"error": "missing or invalid CSRF token; reload the page"},
                                status_code=403)
        origin = request.headers.get("origin")
        if origin and origin.split("://", 1)[-1] != request.headers.get("host", ""):
            return JSONResponse({"error": f"cross-origin request from {origin} refused"},
                                status_code=403)
        if not request.headers.get("content-type", "").startswith("application/json"):
            return JSONResponse({"error": "send JSON"}, status_code=415)
        return None

    async def json_object(self, request: Request) -> dict | Response:
        """The POST's JSON object once :meth:`check` passes; else the refusal (403 / 415), or a
        400 for a body that is not a JSON object. Every review app's write goes through it."""
        refused = self.check(request)
        if refused is not None:
            return refused
        try:
            body = await request.json()
        except ValueError as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "send a JSON object"}, status_code=400)
        return body

    async def write(self, request: Request, action: Callable[[dict], T]) -> T | Response:
        """``action(body)`` in a worker thread once :meth:`json_object` gives the body; else
        the refusal, or a 400 with the sentence of a ReviewError, ValueError or TypeError
        that ``action`` raised, as the response to send."""
        body = await self.json_object(request)
        if isinstance(body, Response):
            return body
        try:
            return await run_in_threadpool(action, body)
        except (ReviewError, ValueError, TypeError) as e:
            return JSONResponse({"error": str(e)}, status_code=400)


def image_files(root: Path, images: Iterable[str]) -> dict[str, Path]:
    """``relative path -> file`` for the images that lie under ``root`` and exist, each
    resolved (so a link or ``..`` cannot lead outside) at start-up."""
    root = root.resolve()
    out = {}
    for rel in images:
        path = (root / rel).resolve()
        if path.is_relative_to(root) and path.is_file():
            out[rel] = path
    return out


def file_route(files: dict[str, Path], owner: str,
               headers: dict[str, str] | None = None) -> Route:
    """``/file?path=REL``: one of ``files`` as an image (checked by its bytes), any other
    path a 404 saying it is not an image of the ``owner`` (benchmark, sample)."""

    def serve_file(request: Request) -> Response:
        path = files.get(request.query_params.get("path", ""))
        if path is None:
            return JSONResponse({"error": f"not an image of this {owner}"}, status_code=404)
        return image_response(path, headers)

    return Route("/file", serve_file)


def render_page(page: str, title: str, token: str) -> str:
    """The HTML of ``page``: its body in the shell, ``{{TITLE}}`` (escaped) and ``{{CSRF}}``
    filled in one pass each, so no filled text is read again as a slot."""
    static = resources.files("foilbench.review").joinpath("static")
    slots = {"TITLE": escape(title), "CSRF": escape(token)}
    body = _SLOT.sub(lambda m: slots[m.group(1)],
                     static.joinpath(f"{page}.html").read_text("utf-8"))
    slots |= {"PAGE": page, "BODY": body.rstrip("\n"),
              "STYLES": "\n".join(f'<link rel="stylesheet" href="/static/{sheet}">'
                                  for sheet in STYLES[page])}
    return _SLOT.sub(lambda m: slots[m.group(1)],
                     static.joinpath("page.html").read_text("utf-8"))


def page_response(request: Request, csrf: Csrf, page: str, title: str) -> HTMLResponse:
    """``page`` for this browser, with its CSRF token; a new session cookie when it has none."""
    session_id = request.cookies.get(SESSION_COOKIE) or secrets.token_urlsafe(24)
    resp = HTMLResponse(render_page(page, title, csrf.token(session_id)))
    resp.set_cookie(SESSION_COOKIE, session_id, httponly=True, samesite="strict", path="/")
    return resp


def review_app(routes: list[BaseRoute], host: str) -> Starlette:
    """A review app: ``routes``, ``/favicon.ico`` (empty) and ``/static``, behind the trusted
    hosts of ``host``, :data:`HEADERS` and :class:`~foilbench.web_guards.Guards`."""
    static = resources.files("foilbench.review").joinpath("static")
    return Starlette(routes=[
        *routes,
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Mount("/static", app=StaticFiles(directory=str(static)), name="static"),
    ], middleware=[
        Middleware(TrustedHostMiddleware, allowed_hosts=trusted_hosts(host)),
        Middleware(SecurityHeaders, policy=HEADERS), Middleware(Guards)])
