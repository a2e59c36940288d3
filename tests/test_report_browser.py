"""The report and the results browser, driven in headless Chromium."""

from __future__ import annotations

import threading
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from _browser import browser_page
from foilbench.data.format import Manifest, make_benchmark
from foilbench.evaluation import evaluate_and_store
from foilbench.models.tiny import build_tiny_random
from foilbench.report import write_report
from foilbench.report.server import make_server
from foilbench.store.cache import EmbeddingCache
from foilbench.store.db import ResultsStore

# Markup in a caption: a <script> element (runs if the page's HTML contains it) and an
# onerror handler (runs even when injected through innerHTML). Either sets window.__pwned.
XSS = ('<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
       '<b>bold?</b>')


def assert_caption_is_inert_text(page, container: str) -> None:
    """No script from the caption ran, no element was made of it, and its markup is shown
    as visible text."""
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator(f"{container} b", has_text="bold?").count() == 0
    assert page.locator(f"{container} img[onerror]").count() == 0
    shown = page.locator(container).get_by_text("<b>bold?</b>", exact=False).first
    assert shown.is_visible()
    assert XSS in page.inner_text(container)


def assert_payload_would_run(page) -> None:
    """Control: the same payload placed in a page unescaped does set the flag, so the
    checks above can fail."""
    page.set_content(f"<div id='c'>a red square{XSS}</div>")
    page.wait_for_function("window.__pwned !== undefined")
    assert page.evaluate("window.__pwned") in (1, 2)


def _bench(root: Path):
    rows = []
    for k, (a, b) in enumerate([("red", "blue"), ("green", "yellow"), ("purple", "orange")]):
        for name, colour in (("base", a), ("foil", b)):
            Image.new("RGB", (24, 24), colour).save(root / f"{k}_{name}.png")
        rows.append({"item_id": f"i{k}", "image_base": f"{k}_base.png",
                     "image_foil": f"{k}_foil.png",
                     "caption_base": f"a {a} square" + (XSS if k == 0 else ""),
                     "caption_foil": f"a {b} square", "scene_id": f"s{k}",
                     "edit_type": "modify_color", "tier": "short"})
    return make_benchmark(Manifest(name="xss-bench", kind="pair"), pd.DataFrame(rows), root)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("report")
    bench = _bench(tmp)
    with ResultsStore(tmp / "runs.duckdb") as store:
        rec = evaluate_and_store(build_tiny_random(), bench, store,
                                 cache=EmbeddingCache(tmp / "cache"), n_boot=200,
                                 progress=False)
    return tmp / "runs.duckdb", rec.run_id


def test_report_in_browser(db, tmp_path):
    db_path, run_id = db
    out = write_report(db_path, [run_id], tmp_path / "report.html")
    with ResultsStore(db_path, read_only=True) as store:
        metrics = store.load_metrics(run_id)
    overall = metrics[metrics["group_by"] == ""].set_index("metric")
    with browser_page() as (page, errors):
        page.goto(out.resolve().as_uri())
        assert page.locator("#metrics details").get_attribute("open") is None  # collapsed
        page.click("#contents a[href='#metrics']")  # a collapsed section opens when followed
        assert page.locator("#metrics details").get_attribute("open") is not None
        rows = page.locator("#headline tbody tr")
        assert rows.count() == 3
        shown = {}
        for k in range(rows.count()):
            cells = rows.nth(k).locator("td").all_inner_texts()
            shown[cells[2].rstrip(" *")] = float(cells[3])
        for metric in ("i2t", "t2i", "group"):
            assert shown[metric] == pytest.approx(100 * overall.loc[metric, "value"], abs=0.05)
        page.click("#contents a[href='#examples']")  # a collapsed section opens when followed
        assert_caption_is_inert_text(page, "#examples")
        assert errors == []
        assert_payload_would_run(page)


def test_report_escapes_markup_as_text(db, tmp_path):
    db_path, run_id = db
    html = write_report(db_path, [run_id], tmp_path / "r.html").read_text()
    assert "<script>window.__pwned" not in html
    assert "&lt;script&gt;window.__pwned" in html


def test_app_in_browser(db, tmp_path):
    db_path, run_id = db
    server = make_server(db_path, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with browser_page() as (page, errors):
            page.goto(base + "/")
            assert page.locator("#leaderboard tbody tr").count() == 3
            page.select_option("select[name=benchmark]", "xss-bench")
            page.click("button[type=submit]")
            assert page.locator("#leaderboard tbody tr").count() == 3
            page.click("#leaderboard-0 th:nth-child(4)")  # sort by value
            page.click("#leaderboard a:text-is('items') >> nth=0")  # the link, not a unit cell
            assert "a red square" in page.inner_text("body")
            assert_caption_is_inert_text(page, "body")
            page.goto(base + f"/image?run={run_id}&path=../../../../etc/passwd")
            assert "root:" not in page.content()
            assert errors == [] or all("404" in e for e in errors)
    finally:
        server.shutdown()
        server.server_close()
