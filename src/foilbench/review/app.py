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

What every review app shares (the CSRF check, the headers, the page, the assembly) is
:mod:`foilbench.review.web`.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from foilbench.data.format import load_benchmark
from foilbench.review.drift import heatmap_rgba, mask_rgba, png
from foilbench.review.state import ReviewSession
from foilbench.review.store import DB_NAME, DecisionStore, session_tag
from foilbench.review.units import ReviewError, build_units
from foilbench.review.views import DriftCache, config_view, unit_view
from foilbench.review.web import (
    CSRF_HEADER,
    SESSION_COOKIE,
    Csrf,
    file_route,
    image_files,
    page_response,
    review_app,
)
from foilbench.web_guards import LOOPBACK

__all__ = ["CSRF_HEADER", "LOOPBACK", "REVIEW_SUBDIR", "SESSION_COOKIE", "allowed_files",
           "create_app", "open_session", "stale_units"]  # the first two: imported from here

REVIEW_SUBDIR = "review"


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
    return image_files(session.units.bench.root, session.units.image_paths())


def create_app(session: ReviewSession, host: str = "127.0.0.1") -> Starlette:
    """The Starlette application of one review session."""
    csrf = Csrf(session.store.meta("csrf_secret") or secrets.token_hex(32))
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
        return page_response(request, csrf, "review", f"review · {units.bench.name}")

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
        who = reviewer(request)
        decision = await csrf.write(request, lambda body: session.decide(
            str(body.get("phase", "")), str(body.get("key", "")), str(body.get("verdict", "")),
            [str(c) for c in body.get("failed", [])], str(body.get("note", "")), who))
        if isinstance(decision, Response):
            return decision
        return JSONResponse({"decision": {"phase": decision.phase, "key": decision.unit,
                                          "verdict": decision.verdict, "seq": decision.seq},
                             "summary": await run_in_threadpool(summary, who)})

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

    return review_app([
        Route("/", index),
        Route("/api/config", api_config),
        Route("/api/summary", api_summary),
        Route("/api/queue", api_queue),
        Route("/api/unit", api_unit),
        Route("/api/decide", api_decide, methods=["POST"]),
        Route("/api/undo", api_undo, methods=["POST"]),
        file_route(files, "benchmark", {"Cache-Control": "private, max-age=3600"}),
        Route("/overlay/{kind}", overlay),
    ], host)
