"""The web page of a one-page human study: one GET for the state, one POST per answer.

Auto-Comp's concept check and solvability study share it. The protections are the main review
app's (:mod:`foilbench.review.web`, whose CSRF check, headers and host check it reuses):
loopback by default with trusted hosts, an HMAC CSRF token on every POST (JSON objects only),
bodies bounded before they are read (:class:`foilbench.web_guards.Guards`), a strict
Content-Security-Policy, ``/file`` serving only the images the sample names, each resolved
under the benchmark root and checked to be an image by its bytes, and outside text reaching
the page only as JSON (inserted with ``textContent``; the title HTML-escaped).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from foilbench.review.web import Csrf, file_route, page_response, review_app


def create_study_app(*, page: str, title: str, csrf_secret: str, files: dict[str, Path],
                     state: Callable[[], dict], decide: Callable[[dict], dict],
                     host: str = "127.0.0.1") -> Starlette:
    """The app: ``/`` (``page``, :func:`foilbench.review.web.render_page`, titled ``title``),
    ``GET /api/state`` -> ``state()``, ``POST /api/decide`` -> ``decide(body)`` (a
    :class:`ReviewError` or ``ValueError`` is a 400 with its sentence), ``/file?path=``."""
    csrf = Csrf(csrf_secret)

    async def index(request: Request) -> Response:
        return page_response(request, csrf, page, title)

    async def api_state(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(state))

    async def api_decide(request: Request) -> Response:
        answer = await csrf.write(request, decide)
        return answer if isinstance(answer, Response) else JSONResponse(answer)

    return review_app([Route("/", index), Route("/api/state", api_state),
                       Route("/api/decide", api_decide, methods=["POST"]),
                       file_route(files, "sample")], host)
