"""What the local web apps share (:mod:`foilbench.web_guards`' header policy, the review apps'
page shell and common script in :mod:`foilbench.review.web`): each app gets its own policy on
every response, the shared script is served same-origin under the review CSP, and the page
shell fills its slots once (a title that looks like a slot stays text)."""

from __future__ import annotations

import re

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from foilbench.review.study_app import create_study_app
from foilbench.review.web import HEADERS, STYLES, render_page
from foilbench.web_guards import HeaderPolicy, SecurityHeaders


def _study_client() -> TestClient:
    app = create_study_app(page="concepts", title="t", csrf_secret="s", files={},
                           state=lambda: {"units": [], "progress": {"decided": 0}},
                           decide=lambda body: {}, host="127.0.0.1")
    return TestClient(app, base_url="http://127.0.0.1")


def test_a_policy_overrides_the_response_and_marks_only_its_no_store_paths():
    policy = HeaderPolicy({"X-Frame-Options": "DENY"}, no_store=("/", "/api/*"))

    def endpoint(request):
        return PlainTextResponse("x", headers={"X-Frame-Options": "SAMEORIGIN"})

    app = Starlette(routes=[Route(p, endpoint) for p in ("/", "/api/a/b", "/apix", "/file")],
                    middleware=[Middleware(SecurityHeaders, policy=policy)])
    client = TestClient(app)
    for path, no_store in (("/", True), ("/api/a/b", True), ("/apix", False),
                           ("/file", False)):
        r = client.get(path)
        assert r.headers["x-frame-options"] == "DENY", path
        assert (r.headers.get("cache-control") == "no-store") is no_store, path


def test_the_shared_script_is_served_same_origin_under_the_review_policy():
    client = _study_client()
    page = client.get("/")
    scripts = re.findall(r'<script src="([^"]+)"></script>', page.text)
    assert scripts == ["/static/common.js", "/static/concepts.js"]
    assert "<script>" not in page.text  # no inline script: the CSP allows 'self' only
    js = client.get("/static/common.js")
    assert js.status_code == 200 and "function api(" in js.text
    for r in (page, js):
        for name, value in HEADERS.headers.items():
            assert r.headers[name] == value
    assert page.headers["cache-control"] == "no-store"
    assert js.headers.get("cache-control") != "no-store"


def test_every_page_loads_its_sheets_and_fills_each_slot_once():
    for page, sheets in STYLES.items():
        html = render_page(page, "{{CSRF}} <b>", "tok")
        assert "{{" not in html.replace("{{CSRF}} &lt;b&gt;", ""), page
        assert re.findall(r'href="/static/([^"]+)"', html) == list(sheets), page
        assert '<meta name="csrf-token" content="tok">' in html
        assert "<title>{{CSRF}} &lt;b&gt;</title>" in html
        assert html.index("/static/common.js") < html.index(f"/static/{page}.js")
