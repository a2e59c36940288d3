"""The review app end to end in headless Chromium, against the real CLI server process.

Ten instances in three scenes are reviewed by keyboard only across the three phases; the
server is killed (SIGKILL) midway and restarted; the review resumes where it stopped, undo
works across the restart, and the export's benchmark and discard rates match the decisions.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import foilbench
from _browser import browser_page
from _review_fixtures import write_review_bench
from foilbench.data.format import load_benchmark
from foilbench.review.app import open_session

SRC = str(Path(foilbench.__file__).resolve().parents[1])


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Server:
    """``foilbench review DIR`` in a child process; ``url`` once it says it is serving."""

    def __init__(self, bench: Path, port: int = 0):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "foilbench", "review", str(bench), "--port", str(port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env())
        lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []

        def pump():
            for line in self.proc.stdout:
                self.output.append(line)
                lines.put(line)
            lines.put("")

        threading.Thread(target=pump, daemon=True).start()
        while True:
            line = lines.get(timeout=60)
            if not line:
                raise RuntimeError("review server exited:\n" + "".join(self.output))
            m = re.search(r"at (http://127\.0\.0\.1:(\d+)/)", line)
            if m:
                self.url, self.port = m.group(1), int(m.group(2))
                return

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL: no shutdown handler runs
        self.proc.wait(timeout=30)


IDLE = "() => !document.body.dataset.busy && document.querySelector('#unit-key') !== null"


def _press(page, key: str) -> None:
    """Press a decision key and wait until the decision is counted and the app is idle."""
    before = page.inner_text("#progress-label")
    page.keyboard.press(key)
    page.wait_for_function(
        "b => document.querySelector('#progress-label').textContent !== b", arg=before)
    page.wait_for_function(IDLE)


def _at(page, phase: str, key: str) -> None:
    page.wait_for_function(
        "([p, k]) => document.querySelector('#phases button.active')?.dataset.phase === p && "
        "document.querySelector('#unit-key')?.textContent === k", arg=[phase, key])


def _reject(page, *criteria: int) -> None:
    for c in criteria:
        page.keyboard.press(str(c))
    page.wait_for_function(IDLE)
    assert page.locator("#criteria li.failed").count() == len(criteria)
    _press(page, "r")


def test_review_by_keyboard_with_a_killed_server(tmp_path):
    bench = write_review_bench(tmp_path / "bench")
    server = Server(bench)
    try:
        with browser_page() as (page, errors):
            page.goto(server.url)
            page.wait_for_selector("body[data-ready='1']")
            # phase 1: base review, scene s2 fails "image clean" (criterion 3)
            _at(page, "base", "s0")
            _press(page, "a")
            _press(page, "a")
            _at(page, "base", "s2")
            _reject(page, 3)
            # phase 2 starts by itself; s2's three instances are invalidated
            _at(page, "instance", "s0-f00")
            _press(page, "a")
            _reject(page, 1)  # s0-f01: count not preserved
            _press(page, "a")  # s0-f02
            _at(page, "instance", "s1-f00")
            _press(page, "a")
            done_before = page.inner_text("#progress-label")
            # a POST without the CSRF header is refused, from the page itself
            status = page.evaluate("""() => fetch('/api/decide', {method: 'POST',
                headers: {'Content-Type': 'application/json'},
                body: JSON.stringify({phase: 'instance', key: 's1-f01', verdict: 'accept'})})
                .then(r => r.status)""")
            assert status == 403

            server.kill()  # midway: 4 of 7 instance decisions made
            server = Server(bench, port=server.port)
            page.reload()
            page.wait_for_selector("body[data-ready='1']")
            _at(page, "instance", "s1-f01")  # resumed at the first pending unit
            assert page.inner_text("#progress-label") == done_before

            page.keyboard.press("u")  # undo crosses the restart: s1-f00 is pending again
            _at(page, "instance", "s1-f00")
            page.wait_for_function(
                "() => document.querySelector('.unit-head .status').textContent === 'pending'")
            _press(page, "a")  # s1-f00 again
            _at(page, "instance", "s1-f01")
            _press(page, "a")
            _press(page, "a")  # s1-f02
            _reject(page, 2, 3)  # s1-f03: something else changed, edit does not match
            # phase 3: verbosity of the five kept instances
            _at(page, "verbosity", "s0-f00")
            assert "reworded" not in page.inner_text("#unit")
            for _ in range(4):
                _press(page, "a")  # s0-f00, s0-f02, s1-f00, s1-f01
            _at(page, "verbosity", "s1-f02")
            assert "reworded" in page.inner_text("#unit")  # the fixture's reworded medium
            _reject(page, 1)
            page.wait_for_function(
                "() => document.querySelector('#progress-label').textContent"
                ".startsWith('23 / 23')")
            assert page.inner_text("#overall-rate") == "60.0%"
            assert page.inner_text("#phase2-rate") == "28.6%"
            page.screenshot(path=str(tmp_path / "review.png"))
            assert errors == [] or all("403" in e for e in errors), errors
    finally:
        server.kill()

    out = tmp_path / "accepted"
    res = subprocess.run([sys.executable, "-m", "foilbench", "review", "export", str(bench),
                          "--out", str(out)], capture_output=True, text=True, env=_env(),
                         timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    exported = load_benchmark(out)
    kept = ["s0-f00", "s0-f02", "s1-f00", "s1-f01"]
    assert sorted(exported.items["foil_id"].unique()) == kept
    assert len(exported) == 12
    report = json.loads((out / "qc_report.json").read_text())
    assert report["complete"]
    assert (report["overall"]["kept"], report["overall"]["discarded"]) == (4, 6)
    assert report["phases"]["instance"]["discard"]["k"] == 2
    assert report["phases"]["instance"]["discard"]["n"] == 7
    assert report["phases"]["instance"]["by_criterion"]["count_preserved"]["k"] == 1
    assert report["phases"]["instance"]["by_criterion"]["nothing_else_changed"]["k"] == 1
    assert report["phases"]["verbosity"]["by_criterion"]["medium_keeps_phrase"]["k"] == 1
    # discard rates per edit type follow from the decisions
    session = open_session(bench)
    rejected = {"s0-f01", "s1-f03"}
    for et, s in report["by_edit_type"].items():
        keys = [i.key for i in session.units.instances if i.edit_type == et]
        decided = [k for k in keys if not k.startswith("s2")]
        want = sum(k in rejected for k in decided) / len(decided) if decided else None
        assert s["instance_discard"]["rate"] == pytest.approx(want), et
        assert s["kept"] == sum(k in kept for k in keys), et
    undos = [e for e in session.store.events() if e["action"] == "undo"]
    assert len(undos) == 1
    session.store.close()
