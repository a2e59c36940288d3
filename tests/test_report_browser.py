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

XSS = '<script>window.__pwned = 1</script><b>bold?</b>'


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
        rows = page.locator("#headline tbody tr")
        assert rows.count() == 3
        shown = {}
        for k in range(rows.count()):
            cells = rows.nth(k).locator("td").all_inner_texts()
            shown[cells[2].rstrip(" *")] = float(cells[3])
        for metric in ("i2t", "t2i", "group"):
            assert shown[metric] == pytest.approx(100 * overall.loc[metric, "value"], abs=0.05)
        assert page.evaluate("window.__pwned") is None
        assert "<script>window.__pwned" in page.inner_text("#examples") or \
            XSS not in page.content()
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        assert errors == []
    assert (tmp_path / "report.png").stat().st_size > 10_000


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
            page.click("#leaderboard th:nth-child(5)")  # sort by value
            page.click("text=items >> nth=0")
            assert "a red square" in page.inner_text("body")
            assert page.evaluate("window.__pwned") is None
            page.screenshot(path=str(tmp_path / "app.png"))
            page.goto(base + f"/image?run={run_id}&path=../../../../etc/passwd")
            assert "root:" not in page.content()
            assert errors == [] or all("404" in e for e in errors)
    finally:
        server.shutdown()
        server.server_close()
