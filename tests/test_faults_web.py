"""The local web apps bound what they accept and serve (issue 42, item 7).

- ``/file`` served a benchmark file by its name's type: one named ``.html`` ran as a page on
  the review app's origin. Only bytes Pillow reads as a raster image are served, with that
  format's type and ``nosniff``; HTML or SVG bytes are refused (415) whatever their name.
- JSON posts are bounded before they are read: over 64 KiB is 413, by ``Content-Length`` or,
  without one, by counting the streamed bytes.
- A decision the disk cannot take is a JSON 507, not a 500 text page.
- ``serve``'s ``/items`` page is built once per page, however many clients ask at once.
"""

from __future__ import annotations

import re
import sqlite3
import threading

import pandas as pd
import pytest
from PIL import Image
from starlette.testclient import TestClient

from _review_fixtures import write_review_bench
from foilbench.review.app import create_app, open_session
from foilbench.web_guards import MAX_BODY, image_response, image_type

BASE_URL = "http://127.0.0.1:8766"


def _token(client) -> str:
    html = client.get("/").text
    return re.search(r'name="csrf-token" content="([0-9a-f]+)"', html).group(1)


@pytest.fixture()
def bench(tmp_path):
    """The review fixture with one image renamed ``.html`` (its bytes still a PNG)."""
    root = write_review_bench(tmp_path / "bench")
    items = pd.read_parquet(root / "items.parquet")
    old = items.loc[0, "image_base"]
    (root / old).rename(root / (old[:-4] + ".html"))
    items["image_base"] = items["image_base"].replace(old, old[:-4] + ".html")
    items.to_parquet(root / "items.parquet", index=False)
    return root, old[:-4] + ".html"


@pytest.fixture()
def client(bench):
    session = open_session(bench[0])
    with TestClient(create_app(session), base_url=BASE_URL) as c:
        c.session = session
        yield c
    session.store.close()


def test_image_type_reads_the_bytes_not_the_name(tmp_path):
    Image.new("RGB", (4, 4)).save(tmp_path / "a.png")
    (tmp_path / "a.png").rename(tmp_path / "page.html")
    (tmp_path / "x.png").write_text("<html><script>alert(1)</script></html>")
    (tmp_path / "y.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>')
    assert image_type(tmp_path / "page.html") == "image/png"
    assert image_type(tmp_path / "x.png") is None
    assert image_type(tmp_path / "y.svg") is None
    assert image_response(tmp_path / "x.png").status_code == 415


def test_a_file_named_html_is_served_as_the_image_it_is(client, bench):
    r = client.get("/file", params={"path": bench[1]})
    assert r.status_code == 200
    assert r.headers["content-type"] == "image/png"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["content-disposition"] == "inline"


def test_a_file_whose_bytes_are_html_is_refused(client, bench):
    root, rel = bench
    (root / rel).write_text("<html><script>fetch('/api/undo')</script></html>")
    r = client.get("/file", params={"path": rel})
    assert r.status_code == 415 and "text/html" not in r.headers["content-type"]


DECISION = {"phase": "base", "key": "s0", "verdict": "accept"}


def test_a_body_over_the_limit_is_refused_before_it_is_read(client):
    token = _token(client)
    big = {**DECISION, "note": "x" * MAX_BODY}
    r = client.post("/api/decide", json=big, headers={"X-CSRF-Token": token})
    assert r.status_code == 413 and "bytes refused" in r.json()["error"]

    def chunks():  # no Content-Length: counted as it streams
        yield b'{"phase": "base", "key": "s0", "verdict": "accept", "note": "'
        for _ in range(64):
            yield b"x" * 4096
        yield b'"}'

    r = client.post("/api/decide", content=chunks(),
                    headers={"X-CSRF-Token": token, "Content-Type": "application/json"})
    assert r.status_code == 413
    assert client.session.store.events() == []  # nothing was written
    r = client.post("/api/decide", json=DECISION, headers={"X-CSRF-Token": token})
    assert r.status_code == 200  # a normal decision still goes through


def test_a_full_disk_is_a_json_answer(client, monkeypatch):
    token = _token(client)

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(client.session, "decide", full)
    r = client.post("/api/decide", json=DECISION, headers={"X-CSRF-Token": token})
    assert r.status_code == 507
    assert "disk is full" in r.json()["error"]


def test_serve_builds_each_items_page_once(monkeypatch, tmp_path):
    import foilbench.report.server as server

    calls = []

    def slow_page(db_path, run, q):
        calls.append(run)
        threading.Event().wait(0.2)
        return f"<p>{run} page {q.get('page', '0')}</p>"

    monkeypatch.setattr(server, "items_page", slow_page)
    pages = server.ItemPages()
    threads = [threading.Thread(target=pages.get, args=(tmp_path, "r1", {"page": "0"}))
               for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["r1"]
    assert pages.get(tmp_path, "r1", {"page": "1"}) == "<p>r1 page 1</p>"
    assert calls == ["r1", "r1"]
