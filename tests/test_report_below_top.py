"""The report below its top: sections collapsed under a table of contents, charts in percent
with intervals and chance, a 16-edit-type chart whose text is drawn at 11 px or more at 1400
and at 800 px wide windows, Auto-Comp cells with intervals and pooled when small (the rule
stated); in headless Chromium."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from _browser import browser_page
from _report_checks import page_problems
from foilbench.report import sections
from foilbench.report.autocomp import MIN_CELL, autocomp_section, cell_columns
from foilbench.report.build import RunData
from foilbench.report.html import DETAILS_JS, SORT_JS, contents, page

EDITS = [f"edit_type_number_{k:02d}" for k in range(16)]
MIN_FONT_JS = """sel => { let m = 1e9; document.querySelectorAll(sel + ' svg text').forEach(t => {
  const svg = t.ownerSVGElement, scale = svg.getBoundingClientRect().width
    / svg.viewBox.baseVal.width;
  m = Math.min(m, parseFloat(t.getAttribute('font-size')) * scale); }); return m; }"""


def _edit_run(model: str, shift: float) -> RunData:
    rows = [{"metric": "group", "group_by": "", "group_value": "", "value": 0.2 + shift,
             "ci_low": 0.1, "ci_high": 0.3, "chance": 1 / 6, "n": 1600, "ties": 0,
             "ci_method": "bootstrap:scene_id"}]
    for k, e in enumerate(EDITS):
        v = (k + 1) / 20 + shift
        rows.append({"metric": "group", "group_by": "edit_type", "group_value": e,
                     "value": v, "ci_low": v - 0.05, "ci_high": v + 0.05, "chance": 1 / 6,
                     "n": 100, "ties": 0, "ci_method": "bootstrap:scene_id"})
    run = {"run_id": f"run-{model}", "model_spec": model, "benchmark_name": "sixteen",
           "benchmark_checksum": "sha256:16", "benchmark_kind": "pair", "n_boot": 200,
           "seed": 0, "config": {"primary_metric": "group"}}
    return RunData(run, pd.DataFrame(rows), pd.DataFrame({"item_id": ["i0"]}))


def _autocomp_run(model: str, per_cell: int) -> RunData:
    rng = np.random.default_rng(len(model))
    rows = []
    for neg in ("swap", "confusion"):
        for n in (2, 3):
            for cond in ("minimal", "contextual"):
                for k in range(per_cell):
                    ok = float(rng.random() < 0.4)
                    rows.append({"item_id": f"{neg}-{n}-{cond}-{k}", "negative_set": neg,
                                 "task": "color", "n_objects": n, "condition": cond,
                                 "operation": neg, "scene_id": f"s{k}", "r1": ok,
                                 "r1_valid": ok, "tie_r1": False, "tie_r1_valid": False,
                                 "chance_r1": 0.25, "chance_r1_valid": 0.25,
                                 "n_true_negatives": 0})
    run = {"run_id": f"run-{model}", "model_spec": model, "benchmark_name": "ac",
           "benchmark_checksum": "sha256:ac", "benchmark_kind": "choice", "n_boot": 200,
           "seed": 0, "config": {"primary_metric": "r1_valid"}}
    return RunData(run, pd.DataFrame(), pd.DataFrame(rows))


def test_autocomp_cells_are_pooled_below_the_minimum_and_carry_intervals():
    small = [_autocomp_run(m, 16) for m in ("A", "B")]
    frames = [r.items.assign(model=r.run["model_spec"]) for r in small]
    assert cell_columns(frames) == ["negative_set", "n_objects"]  # 16 < MIN_CELL: pooled
    big = [r.items.assign(model=r.run["model_spec"]) for r in
           (_autocomp_run(m, MIN_CELL) for m in ("A", "B"))]
    assert cell_columns(big) == ["negative_set", "task", "n_objects", "condition"]
    html = autocomp_section(small)
    rows = re.findall(r"<tr class=\"\">(.*?)</tr>", html, re.S)
    assert len(rows) == 2 * 4  # 2 models x (swap, confusion) x N 2, 3
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in rows]
    assert all(c[3] == "32" for c in cells)  # two conditions of 16 pooled
    assert all(re.fullmatch(r"\d+\.\d \[\d+\.\d, \d+\.\d\]", c[6]) for c in cells)
    assert "else pooled to negative set x N" in html
    bars = re.findall(r"<rect[^>]*><title>(.*?)</title>", html)
    assert len(bars) == 8 and all("chance 25.0%" in b and "[" in b for b in bars)


@pytest.mark.parametrize("width", [1400, 800])
def test_sixteen_edit_types_read_at_11px_and_sections_collapse(width, tmp_path):
    runs = [_edit_run("model-a", 0.0), _edit_run("model-b", 0.02)]
    body = sections.edit_type_bars(runs) + sections.every_metric(runs)
    path = tmp_path / "r.html"
    path.write_text(page("t", "s", contents(body) + body, script=SORT_JS + DETAILS_JS))
    with browser_page(width=width) as (pg, errors):
        pg.goto(path.resolve().as_uri())
        assert pg.locator("#contents li").all_inner_texts() == [
            "Per edit type, with intervals and chance", "Every metric"]
        assert pg.locator("section details[open]").count() == 0  # collapsed
        pg.click("#contents a[href='#edit-types']")
        assert pg.locator("#edit-types details").get_attribute("open") is not None
        assert pg.evaluate(MIN_FONT_JS, "#edit-types") >= 11
        assert pg.evaluate("document.documentElement.scrollWidth") <= width
        labels = pg.locator("#edit-types svg text").all_text_contents()
        assert all(e in labels for e in EDITS)  # no label cut or dropped
        assert page_problems(pg) == [] and errors == []
