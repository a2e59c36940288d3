"""The web page of the Auto-Comp concept check (:mod:`foilbench.review.concepts`).

The same security as the main review app (:mod:`foilbench.review.app`, whose CSRF check,
headers and host check it reuses): loopback by default, an HMAC CSRF token on every POST,
JSON bodies only, images served only when the sample names them and they lie under the
benchmark root, a strict Content-Security-Policy. Keys: m match, x mismatch, u unsure,
j/k next/previous.
"""

from __future__ import annotations

import secrets
from html import escape
from importlib import resources

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from foilbench.review.app import LOOPBACK, SESSION_COOKIE, SecurityHeaders, _Csrf
from foilbench.review.concepts import ConceptChecks
from foilbench.review.units import ReviewError
from foilbench.web_guards import Guards, image_response


def create_concepts_app(checks: ConceptChecks, host: str = "127.0.0.1") -> Starlette:
    secret = checks._meta("csrf_secret")
    if secret is None:
        secret = secrets.token_hex(32)
        with checks.db:
            checks.db.execute("INSERT INTO meta VALUES ('csrf_secret', ?)", (secret,))
    csrf = _Csrf(secret)
    root = checks.bench.root.resolve()
    files = {}
    for u in checks.units:
        path = (root / u.image).resolve()
        if path.is_relative_to(root) and path.is_file():
            files[u.image] = path

    async def index(request: Request) -> Response:
        session_id = request.cookies.get(SESSION_COOKIE) or secrets.token_urlsafe(24)
        page = (resources.files("foilbench.review").joinpath("static", "concepts.html")
                .read_text("utf-8")
                .replace("{{TITLE}}", escape(f"concept check · {checks.bench.name}"))
                .replace("{{CSRF}}", escape(csrf.token(session_id))))
        resp = HTMLResponse(page)
        resp.set_cookie(SESSION_COOKIE, session_id, httponly=True, samesite="strict", path="/")
        return resp

    def state() -> dict:
        verdicts = checks.current()
        return {"units": [{"key": u.key, "image": f"/file?path={u.image}", "concept":
                           u.concept_text(), "caption": u.caption, "group": u.group,
                           "verdict": verdicts.get(u.key)} for u in checks.units],
                "report": checks.report()}

    def api_state(request: Request) -> Response:
        return JSONResponse(state())

    async def api_decide(request: Request) -> Response:
        body = await csrf.json_object(request)
        if isinstance(body, Response):
            return body
        try:
            await run_in_threadpool(checks.decide, str(body.get("key", "")),
                                    str(body.get("verdict", "")))
        except (ReviewError, ValueError) as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        return JSONResponse({"report": (await run_in_threadpool(checks.report))})

    def serve_file(request: Request) -> Response:
        path = files.get(request.query_params.get("path", ""))
        if path is None:
            return JSONResponse({"error": "not an image of this sample"}, status_code=404)
        return image_response(path)

    static_dir = resources.files("foilbench.review").joinpath("static")
    routes = [Route("/", index), Route("/api/state", api_state),
              Route("/api/decide", api_decide, methods=["POST"]), Route("/file", serve_file),
              Route("/favicon.ico", lambda request: Response(status_code=204)),
              Mount("/static", app=StaticFiles(directory=str(static_dir)), name="static")]
    hosts = ["*"] if host in ("0.0.0.0", "::") else sorted({*LOOPBACK, host})
    return Starlette(routes=routes, middleware=[
        Middleware(TrustedHostMiddleware, allowed_hosts=hosts), Middleware(SecurityHeaders),
        Middleware(Guards)])
