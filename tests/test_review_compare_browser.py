"""The hard-negative comparison (SugarCrepe App. E.2) in headless Chromium against the real
`foilbench review compare A B --out DIR` server: the page shows the two negatives and the
paper's two questions; keys 1/2/3 and 4/5/6 answer them, u undoes; the store holds what was
pressed, translated from left/right to the benchmarks."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading

from _browser import browser_page
from foilbench.review.compare import CompareSession
from test_review_browser import _env
from test_review_compare import benches  # noqa: F401  (the planted benchmarks)


def _serve(args):
    proc = subprocess.Popen([sys.executable, "-m", "foilbench", "review", "compare", *args,
                             "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=_env())
    lines: queue.Queue[str] = queue.Queue()
    out: list[str] = []

    def pump():
        for line in proc.stdout:
            out.append(line)
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    while True:
        line = lines.get(timeout=60)
        if not line:
            raise RuntimeError("compare server exited:\n" + "".join(out))
        m = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        if m:
            return proc, m.group(1)


def _press(page, key: str) -> None:
    before = page.inner_text("#progress")
    page.keyboard.press(key)
    page.wait_for_function(
        "b => document.querySelector('#progress').textContent !== b", arg=before)


def test_compare_by_keyboard(benches, tmp_path):  # noqa: F811
    a, b = benches
    out = tmp_path / "cmp"
    s = CompareSession(a, b, out)
    pairs = s.pairs
    s.close()
    proc, url = _serve([str(a.root), str(b.root), "--out", str(out)])
    try:
        with browser_page() as (page, errors):
            page.goto(url)
            page.wait_for_function("() => document.querySelector('#left').textContent")
            p0 = pairs[0]
            left, right = (p0.a, p0.b) if p0.left == "a" else (p0.b, p0.a)
            assert page.inner_text("#left") == left.negative
            assert page.inner_text("#right") == right.negative
            assert "grammatical correctness" in page.inner_text("#questions")
            assert page.locator(".answers button").count() == 6
            page.keyboard.press("3")  # commonsense: right better (not saved yet)
            assert page.inner_text("#left") == left.negative
            _press(page, "5")  # grammar: tie -> saved, moves on
            assert page.inner_text("#left") != left.negative or len(pairs) == 1
            page.keyboard.press("1")
            _press(page, "4")
            _press(page, "u")  # takes back the second pair
            assert errors == []
    finally:
        proc.kill()
        proc.wait(timeout=30)
    s = CompareSession(a, b, out)
    right_bench = "b" if p0.left == "a" else "a"
    assert s.store.current() == {p0.pair_id: (right_bench, "tie")}
    s.close()
