"""Auto-Comp's two human studies in headless Chromium, against the real CLI server: the
concept check (keys m/x) and the solvability study (key 1, a click on an option); what the
study files hold afterwards matches what was pressed, and neither page shows a verdict."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from _autocomp_study import build_study_folder
from _browser import browser_page
from foilbench.review.concepts import ConceptChecks
from foilbench.review.solvability import SolvabilityStudy
from test_review_browser import _env


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_study_folder(tmp_path_factory.mktemp("ac") / "ac", n_concepts=2)


def _serve(*args: str):
    proc = subprocess.Popen([sys.executable, "-m", "foilbench", "review", *args, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=_env())
    for line in proc.stdout:
        m = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        if m:
            return proc, m.group(1)
    proc.wait(timeout=30)
    raise RuntimeError("the study server exited before serving")


def _press(page, key: str) -> None:
    before = page.inner_text("#progress")
    page.keyboard.press(key)
    page.wait_for_function(
        "b => document.querySelector('#progress').textContent !== b", arg=before)


def test_concept_check_by_keyboard(bench, tmp_path):
    rd = tmp_path / "rd"
    proc, url = _serve("concepts", str(bench.root), "--review-dir", str(rd))
    try:
        with browser_page() as (page, errors):
            page.goto(url)
            page.wait_for_function("() => document.querySelector('#concept').textContent")
            page.wait_for_function("() => document.querySelector('#image').naturalWidth > 0")
            _press(page, "m")
            _press(page, "x")
            assert "decided 2" in page.inner_text("#progress")
            assert "agreement" not in page.inner_text("body")
            assert errors == []
    finally:
        proc.kill()
        proc.wait(timeout=30)
    checks = ConceptChecks(bench, rd)
    keys = [u.key for u in checks.units]
    assert checks.current() == {keys[0]: "match", keys[1]: "mismatch"}
    checks.close()


def test_solvability_by_keyboard_and_click(bench, tmp_path):
    rd = tmp_path / "rd"
    study = SolvabilityStudy(bench, rd)
    units = study.units
    study.close()
    proc, url = _serve("solvability", str(bench.root), "--review-dir", str(rd))
    try:
        with browser_page() as (page, errors):
            page.goto(url)
            page.wait_for_function("() => document.querySelectorAll('#options li').length")
            page.wait_for_function("() => document.querySelector('#image').naturalWidth > 0")
            assert page.locator("#options button").count() == len(units[0].options)
            assert page.locator("#options button").all_inner_texts() == list(units[0].options)
            _press(page, "1")
            before = page.inner_text("#progress")
            page.locator("#options button").nth(units[1].answer).click()
            page.wait_for_function(
                "b => document.querySelector('#progress').textContent !== b", arg=before)
            assert "decided 2" in page.inner_text("#progress")
            assert errors == []
    finally:
        proc.kill()
        proc.wait(timeout=30)
    again = SolvabilityStudy(bench, rd)
    assert again.current() == {units[0].key: 0, units[1].key: units[1].answer}
    assert again.report()["overall"]["correct"] == 1 + (units[0].answer == 0)
    again.close()
