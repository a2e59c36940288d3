"""The review web app: Starlette routes over a :class:`ReviewSession`, served by uvicorn.

Security, because the app writes and serves files:

- it binds to 127.0.0.1 unless told otherwise (the CLI warns on any other host), and a
  trusted-host check refuses requests addressed to other names (DNS rebinding);
- every POST must carry ``X-CSRF-Token``: an HMAC of the browser's session cookie under a
  secret kept in the review database, checked in constant time; a POST without it, with a
  wrong one, from another origin, or not JSON, gets 403/415 and writes nothing;
- ``/file`` serves only the image and mask paths the items name, each resolved and checked to
  lie under the resolved benchmark root at start-up: any other path is 404, whatever it is;
- responses carry a strict Content-Security-Policy (scripts and styles from the app only) and
  captions reach the page as JSON text, never as markup.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from html import escape
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from foilbench.data.format import load_benchmark
from foilbench.review.drift import heatmap_rgba, mask_rgba, png
from foilbench.review.state import ReviewSession
from foilbench.review.store import DB_NAME, DecisionStore, session_tag
from foilbench.review.units import ReviewError, build_units
from foilbench.review.views import DriftCache, config_view, unit_view
from foilbench.web_guards import Guards, image_response

SESSION_COOKIE = "foilbench_review_session"
CSRF_HEADER = "x-csrf-token"
REVIEW_SUBDIR = "review"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def open_session(bench_dir: str | Path, review_dir: str | Path | None = None, *,
                 read_only: bool = False) -> ReviewSession:
    """Load and validate the benchmark, group its units, open ``DIR/review/decisions.sqlite``
    (``read_only``: only read it, for ``review status``)."""
    bench = load_benchmark(bench_dir)
    units = build_units(bench)
    folder = Path(review_dir) if review_dir else Path(bench_dir) / REVIEW_SUBDIR
    store = DecisionStore(folder / DB_NAME, read_only=read_only)
    if not read_only:
        store.set_meta_once("benchmark", bench.name)
    return ReviewSession(units, store)


def stale_units(session: ReviewSession) -> list[tuple[str, str]]:
    """Decisions whose unit no longer exists (the benchmark changed since they were made);
    units that exist but changed are :meth:`ReviewSession.changed`."""
    known = {(p, k) for p in ("base", "instance", "verbosity") for k in session.units.keys(p)}
    return sorted(k for k in session.store.current() if k not in known)


def allowed_files(session: ReviewSession) -> dict[str, Path]:
    """Item-listed paths -> resolved files, each checked to lie under the resolved root."""
    root = session.units.bench.root.resolve()
    out = {}
    for rel in session.units.image_paths():
        path = (root / rel).resolve()
        if path.is_relative_to(root) and path.is_file():
            out[rel] = path
    return out


class _Csrf:
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


class SecurityHeaders:
    """Pure ASGI middleware: CSP and friends on every response, no caching of the API."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", CSP)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", "no-referrer")
                if path == "/" or path.startswith("/api/"):
                    headers["Cache-Control"] = "no-store"
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _static_text(name: str) -> str:
    return resources.files("foilbench.review").joinpath("static", name).read_text("utf-8")


def create_app(session: ReviewSession, host: str = "127.0.0.1") -> Starlette:
    """The Starlette application of one review session."""
    csrf = _Csrf(session.store.meta("csrf_secret") or secrets.token_hex(32))
    files = allowed_files(session)
    drift = DriftCache(session.units)
    units = session.units

    def error(e: Exception, status: int = 400) -> JSONResponse:
        return JSONResponse({"error": str(e)}, status_code=status)

    def summary(reviewer: str | None = None) -> dict:
        out = session.snapshot().summary()
        out["can_undo"] = session.store.can_undo(reviewer)
        return out

    def reviewer(request: Request) -> str:
        return session_tag(request.cookies.get(SESSION_COOKIE, ""))

    async def index(request: Request) -> Response:
        session_id = request.cookies.get(SESSION_COOKIE) or secrets.token_urlsafe(24)
        page = (_static_text("review.html")
                .replace("{{TITLE}}", escape(f"review · {units.bench.name}"))
                .replace("{{CSRF}}", escape(csrf.token(session_id))))
        resp = HTMLResponse(page)
        resp.set_cookie(SESSION_COOKIE, session_id, httponly=True, samesite="strict",
                        path="/")
        return resp

    async def api_config(request: Request) -> Response:
        return JSONResponse(config_view(units))

    def api_summary(request: Request) -> Response:
        return JSONResponse(summary(reviewer(request)))

    def api_queue(request: Request) -> Response:
        q = request.query_params
        try:
            rows = session.snapshot().queue(q.get("phase", "base"), q.get("edit_type", ""),
                                            q.get("verdict", ""))
        except ReviewError as e:
            return error(e)
        return JSONResponse({"units": rows})

    def api_unit(request: Request) -> Response:
        q = request.query_params
        try:
            view = unit_view(units, session.snapshot(), q.get("phase", ""), q.get("key", ""),
                             drift)
        except ReviewError as e:
            return error(e, 404)
        return JSONResponse(view)

    def serve_file(request: Request) -> Response:
        path = files.get(request.query_params.get("path", ""))
        if path is None:
            return JSONResponse({"error": "not an image of this benchmark"}, status_code=404)
        return image_response(path, {"Cache-Control": "private, max-age=3600"})

    def overlay(request: Request) -> Response:
        kind = request.path_params["kind"]
        inst = units.instance_by_key.get(request.query_params.get("key", ""))
        if inst is None or kind not in ("drift", "mask", "outline"):
            return JSONResponse({"error": "no such overlay"}, status_code=404)
        drift_arr, mask, _ = drift.get(inst)
        if kind in ("mask", "outline"):
            if mask is None:
                return JSONResponse({"error": "this instance has no mask"}, status_code=404)
            fill = 60 if kind == "mask" else 0
            return Response(png(mask_rgba(mask, fill)), media_type="image/png")
        return Response(png(heatmap_rgba(drift_arr)), media_type="image/png")

    async def api_decide(request: Request) -> Response:
        body = await csrf.json_object(request)
        if isinstance(body, Response):
            return body
        try:
            decision = await run_in_threadpool(
                session.decide, str(body.get("phase", "")), str(body.get("key", "")),
                str(body.get("verdict", "")), [str(c) for c in body.get("failed", [])],
                str(body.get("note", "")), reviewer(request))
        except (ReviewError, ValueError, TypeError) as e:
            return error(e)
        return JSONResponse({"decision": {"phase": decision.phase, "key": decision.unit,
                                          "verdict": decision.verdict, "seq": decision.seq},
                             "summary": await run_in_threadpool(summary, reviewer(request))})

    async def api_undo(request: Request) -> Response:
        refused = csrf.check(request)
        if refused is not None:
            return refused
        who = reviewer(request)  # undo takes back this browser session's decisions only
        undone = await run_in_threadpool(session.undo, who)
        return JSONResponse({"undone": None if undone is None else
                             {"phase": undone.phase, "key": undone.unit,
                              "verdict": undone.verdict},
                             "summary": await run_in_threadpool(summary, who)})

    static_dir = resources.files("foilbench.review").joinpath("static")
    routes = [
        Route("/", index),
        Route("/api/config", api_config),
        Route("/api/summary", api_summary),
        Route("/api/queue", api_queue),
        Route("/api/unit", api_unit),
        Route("/api/decide", api_decide, methods=["POST"]),
        Route("/api/undo", api_undo, methods=["POST"]),
        Route("/file", serve_file),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/overlay/{kind}", overlay),
        Mount("/static", app=StaticFiles(directory=str(static_dir)), name="static"),
    ]
    hosts = ["*"] if host in ("0.0.0.0", "::") else sorted({*LOOPBACK, host})
    return Starlette(routes=routes, middleware=[
        Middleware(TrustedHostMiddleware, allowed_hosts=hosts),
        Middleware(SecurityHeaders), Middleware(Guards)])
