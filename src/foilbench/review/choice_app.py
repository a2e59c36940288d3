"""The negative-validation phase in the browser: image, positive, negative, three verdicts.

SugarCrepe §4.1, Stage 2 (see :mod:`foilbench.review.choice` for the verdicts). The app has
the pair review's protections (:mod:`foilbench.review.app`): loopback binding and trusted
hosts, an HMAC CSRF token on every POST, JSON only, a strict CSP, ``/file`` serving only the
images the items name (each resolved under the benchmark root), and text reaching the page as
JSON (inserted with ``textContent``).
"""

from __future__ import annotations

import secrets

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from foilbench.review.choice import VERDICTS, ChoiceSession
from foilbench.review.web import Csrf, file_route, image_files, page_response, review_app


def create_choice_app(session: ChoiceSession, host: str = "127.0.0.1") -> Starlette:
    """The Starlette application of one negative-validation session."""
    csrf = Csrf(session.store.meta("csrf_secret", secrets.token_hex(32)))
    files = image_files(session.bench.root, {u.image for u in session.units})

    async def index(request: Request) -> Response:
        return page_response(request, csrf, "choice",
                             f"validate negatives · {session.bench.name}")

    def api_items(request: Request) -> Response:
        current = session.store.current()
        return JSONResponse({
            "benchmark": session.bench.name,
            "verdicts": [{"verdict": v, "key": k, "label": label}
                         for v, (k, label) in VERDICTS.items()],
            "items": [{"item_id": u.item_id, "image": u.image, "positive": u.positive,
                       "negative": u.negative, "edit_type": u.edit_type,
                       "verdict": current.get(u.item_id)} for u in session.units]})

    def api_summary(request: Request) -> Response:
        return JSONResponse(session.summary())

    async def api_decide(request: Request) -> Response:
        done = await csrf.write(request, lambda body: session.decide(
            str(body.get("item", "")), str(body.get("verdict", ""))))
        if isinstance(done, Response):
            return done
        return JSONResponse({"summary": await run_in_threadpool(session.summary)})

    async def api_undo(request: Request) -> Response:
        refused = csrf.check(request)
        if refused is not None:
            return refused
        undone = await run_in_threadpool(session.store.undo)
        return JSONResponse({"undone": None if undone is None else
                             {"item": undone[0], "verdict": undone[1]},
                             "summary": await run_in_threadpool(session.summary)})

    return review_app([
        Route("/", index),
        Route("/api/items", api_items),
        Route("/api/summary", api_summary),
        Route("/api/decide", api_decide, methods=["POST"]),
        Route("/api/undo", api_undo, methods=["POST"]),
        file_route(files, "benchmark", {"Cache-Control": "private, max-age=3600"}),
    ], host)


def run_choice_server(session: ChoiceSession, host: str = "127.0.0.1", port: int = 8766,
                      on_ready=None) -> None:
    """Serve until interrupted (:func:`foilbench.review.serve.serve_app`)."""
    from foilbench.review.serve import serve_app

    serve_app(create_choice_app(session, host=host), host, port, on_ready)
