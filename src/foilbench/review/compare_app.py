"""The side-by-side comparison in the browser (SugarCrepe App. E.2; :mod:`.compare`).

The page shows the positive caption(s) and two hard negatives, left and right in the pair's
seeded order, never naming their benchmarks, and asks the paper's two questions (keys 1/2/3:
commonsense left / tie / right; 4/5/6: grammatical correctness left / tie / right; the
decision is saved once both are answered). The app has the review apps' protections
(:mod:`foilbench.review.app`): loopback binding and trusted hosts, an HMAC CSRF token on
every POST, JSON only, bodies bounded (:class:`~foilbench.web_guards.Guards`), a strict CSP,
and benchmark text reaching the page as JSON, cut to a bound and inserted with
``textContent``. It serves no files: E.2's reviewer judges the texts only.
"""

from __future__ import annotations

import secrets

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from foilbench.display import safe_text
from foilbench.review.compare import CRITERIA, CompareSession
from foilbench.review.compare_pairs import TEXT_LIMIT, ComparePair
from foilbench.review.web import Csrf, page_response, review_app


def pair_view(pair: ComparePair, answers: tuple[str, str] | None) -> dict:
    """What the page gets for one pair: sides as shown, no benchmark named."""
    left, right = (pair.a, pair.b) if pair.left == "a" else (pair.b, pair.a)

    def shown(answer: str) -> str:
        if answer == "tie":
            return "tie"
        return "left" if answer == pair.left else "right"

    shared = pair.match == "positive"
    return {"pair_id": pair.pair_id, "family": pair.family,
            "positive": safe_text(left.positive, TEXT_LIMIT) if shared else None,
            "left": {"negative": safe_text(left.negative, TEXT_LIMIT),
                     "positive": None if shared else safe_text(left.positive, TEXT_LIMIT)},
            "right": {"negative": safe_text(right.negative, TEXT_LIMIT),
                      "positive": None if shared else safe_text(right.positive, TEXT_LIMIT)},
            "answers": None if answers is None else
            {c: shown(a) for c, a in zip(CRITERIA, answers, strict=True)}}


def create_compare_app(session: CompareSession, host: str = "127.0.0.1") -> Starlette:
    """The Starlette application of one comparison."""
    csrf = Csrf(session.store.secret(secrets.token_hex(32)))

    async def index(request: Request) -> Response:
        return page_response(request, csrf, "compare", "foilbench review · compare hard negatives")

    def api_pairs(request: Request) -> Response:
        current = session.store.current()
        return JSONResponse({"questions": CRITERIA,
                             "pairs": [pair_view(p, current.get(p.pair_id))
                                       for p in session.pairs]})

    def progress() -> dict:
        s = session.summary()["overall"]
        return {"pairs": s["pairs"], "decided": s["decided"], "pending": s["pending"]}

    async def api_decide(request: Request) -> Response:
        done = await csrf.write(request, lambda body: session.decide_shown(
            str(body.get("pair", "")), str(body.get("commonsense", "")),
            str(body.get("grammar", ""))))
        if isinstance(done, Response):
            return done
        return JSONResponse({"progress": await run_in_threadpool(progress)})

    async def api_undo(request: Request) -> Response:
        refused = csrf.check(request)
        if refused is not None:
            return refused
        undone = await run_in_threadpool(session.store.undo)
        return JSONResponse({"undone": undone,
                             "progress": await run_in_threadpool(progress)})

    def api_progress(request: Request) -> Response:
        return JSONResponse(progress())

    return review_app([
        Route("/", index),
        Route("/api/pairs", api_pairs),
        Route("/api/progress", api_progress),
        Route("/api/decide", api_decide, methods=["POST"]),
        Route("/api/undo", api_undo, methods=["POST"]),
    ], host)
