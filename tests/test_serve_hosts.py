"""``foilbench serve`` on the Starlette stack (issue 27): requests addressed to another host
name are refused (DNS rebinding, tried in headless Chromium with evil.example resolved to
127.0.0.1), write methods are refused, and benchmarks are never ranked against each other:
one table per benchmark, each number against its own chance (issue 29)."""

from __future__ import annotations

import http.client
import threading

import pytest

from _browser import browser_page
from _reliability import choice_folder
from foilbench import runner
from foilbench.report.server import make_server


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FOILBENCH_HOME", str(tmp / "home"))
        a, b = choice_folder(tmp / "two-way", 6), choice_folder(tmp / "other", 4)
        outcome = runner.run(["tiny-random"], [str(a), str(b)], tmp / "out", report=False,
                             n_boot=100, progress=False, use_cache=False)
    return outcome.db_path


@pytest.fixture
def served(db):
    server = make_server(db, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def request(port: int, method: str = "GET", path: str = "/", host: str | None = None):
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        con.putrequest(method, path, skip_host=host is not None)
        if host is not None:
            con.putheader("Host", host)
        con.putheader("Content-Length", "0")
        con.endheaders()
        res = con.getresponse()
        return res.status, res.read().decode(errors="replace"), dict(res.getheaders())
    finally:
        con.close()


def test_a_request_for_another_host_name_is_refused(served):
    status, body, headers = request(served, host="evil.example")
    assert status == 400 and "two-way" not in body
    status, body, _ = request(served, path="/api/leaderboard.json", host=f"evil.example:{served}")
    assert status == 400 and "tiny-random" not in body
    for ok in ("127.0.0.1", f"localhost:{served}"):
        status, body, headers = request(served, host=ok)
        assert status == 200 and "tiny-random" in body
    assert "script-src 'sha256-" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_write_methods_are_refused(served, method):
    for path in ("/", "/api/leaderboard.json", "/image", "/items"):
        status, _, _ = request(served, method, path)
        assert status == 405, (method, path)


def test_dns_rebinding_in_chromium_reads_nothing(served):
    rules = "--host-resolver-rules=MAP evil.example 127.0.0.1"
    with browser_page((rules,)) as (page, errors):
        page.goto(f"http://127.0.0.1:{served}/")  # control: the same page by its own name
        assert page.locator("#leaderboard tbody tr").count() > 0
        response = page.goto(f"http://evil.example:{served}/")
        assert response.status == 400
        assert "tiny-random" not in page.content() and page.locator("table").count() == 0
        got = page.evaluate("""async (url) => {
            const r = await fetch(url); return [r.status, await r.text()]; }""",
                            f"http://evil.example:{served}/api/leaderboard.json")
        assert got[0] == 400 and "tiny-random" not in got[1]


def test_each_benchmark_is_its_own_table_against_its_own_chance(served):
    status, body, _ = request(served)
    assert status == 200
    assert body.count('id="leaderboard-') == 2  # two benchmarks, two tables, no joint ranking
    assert "<h2>other</h2>" in body and "<h2>two-way</h2>" in body
    assert "above chance (pts)" in body and "never across benchmarks" in body
