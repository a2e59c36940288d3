"""The report's analysis sections on planted items whose answers are worked out by hand:
CompoSET App. G.3 robustness, the unit of n, Auto-Comp Table 15 per relation, COMPASS
composed/decomposed R@1 with the reading we use; and, in headless Chromium, no raw frame,
unrounded float or cut title in them (tests/_report_checks.py)."""

from __future__ import annotations

import math
import re

import pandas as pd

from foilbench.report.build import RunData
from foilbench.report.compass_view import READING, decomposed_html
from foilbench.report.relations_view import relations_section
from foilbench.report.robustness_view import robustness_section
from foilbench.report.units_view import POOLED, unit_of, units_section

# scene mean margins per model; each half (s0-s3, s4-s7) has mean 0.5, so every
# (model, edit type) mean is 0.5 and removing edit-type means leaves every std unchanged
# (binary fractions, so equal spreads give bit-equal standard deviations)
A = [0.0, 0.125, 0.875, 1.0, 0.375, 0.625, 0.4375, 0.5625]
MU = {"A": A, "B": A, "C": [0.0, 0.875, 0.125, 1.0, *A[4:]]}
D = [1, 1, 2, 2, 3, 3, 4, 4]  # spread per scene (x 1/64); pairs (even, odd) cancel per type
STEPS = (-1.5, -0.5, 0.5, 1.5)


def _run(model: str, items: pd.DataFrame, kind: str = "pair", bench: str = "planted",
         compass: dict | None = None) -> RunData:
    run = {"run_id": f"run-{model}-{bench}", "model_spec": model, "benchmark_name": bench,
           "benchmark_checksum": f"sha256:{bench}", "benchmark_kind": kind, "n_boot": 200,
           "seed": 0, "config": {"primary_metric": "group" if kind == "pair" else "r1"}}
    return RunData(run, pd.DataFrame(), items, compass=compass)


def _g3_items(model: str) -> pd.DataFrame:
    rows = []
    for s in range(8):
        last = "swap_spatial" if s < 4 else "swap_role"
        types = ["modify_color", "modify_material", "add_object", last]
        steps = STEPS if s % 2 == 0 else STEPS[::-1]
        for e, step in zip(types, steps, strict=True):
            m = MU[model][s] + D[s] * step / 64
            rows.append({"item_id": f"s{s}-{e}", "scene_id": f"s{s}", "edit_type": e,
                         "tier": "short", "foil_id": f"s{s}-{e}", "scores": [m, 0.0, 0.0, 0.0],
                         "i2t": float(m > 0), "group": 0.0})
    return pd.DataFrame(rows)


def _cells(html: str, table_no: int) -> list[list[str]]:
    tab = re.findall(r"<table.*?</table>", html, re.S)[table_no]
    return [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr[^>]*>(.*?)</tr>",
                                                                         tab, re.S)[1:]]


def test_robustness_section_on_planted_margins():
    html = robustness_section([_run(m, _g3_items(m)) for m in "ABC"])
    # bottom quartile of means: Q1 = 0.125 + 0.75 x (0.375 - 0.125) = 0.3125 -> {s0, s1} for
    # A and B,
    # {s0, s2} for C; counts s0: 3, s1: 2, s2: 1; majority = ceil(3 / 2) = 2
    assert _cells(html, 0) == [["short", "3", "8", "2 of 3", "2", "5"]]
    # stds unchanged by residualising -> rho 1; top quartile std >= Q3 (3.25) -> {s6, s7}
    stab = _cells(html, 1)
    assert stab == [["short", m, "8", "1.00", "2", "2", "100.0"] for m in "ABC"] + [
        ["short", "mean", "8", "1.00", "6", "6", "100.0"]]
    # scenes with swap_role (s4-s7, d = 3, 3, 4, 4) vs without (d = 1, 1, 2, 2): every std
    # with exceeds every std without -> U = 4 x 4 = 16; std of d x (-1.5, -0.5, 0.5, 1.5) is
    # d / 64 x sqrt(5/3) = d x 0.020172: medians 3.5 x 0.020172 = 0.071, 1.5 x 0.020172 = 0.030
    mw = _cells(html, 2)[0]
    assert mw[:6] == ["short", "4", "4", "0.071", "0.030", "16.0"]
    assert float(mw[6]) < 0.05


def test_robustness_section_needs_two_models_on_a_pair_benchmark():
    assert robustness_section([_run("A", _g3_items("A"))]) == ""
    assert robustness_section([_run(m, _g3_items(m), kind="choice") for m in "AB"]) == ""


def _wilson(k: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _cell(k: float, n: int) -> str:
    lo, hi = _wilson(k, n)
    return f"{100 * k / n:.1f} [{100 * lo:.1f}, {100 * hi:.1f}] n = {n}"


def test_units_section_per_tier_instance_pooled_by_hand():
    # 4 instances x 2 tiers, no scene ids (Wilson): short 1,1,0,0; long 1,0,0,0
    rows = [{"item_id": f"{t}{i}", "foil_id": f"f{i}", "tier": t, "group": float(g),
             "scores": [0.0] * 4}
            for t, outs in (("short", (1, 1, 0, 0)), ("long", (1, 0, 0, 0)))
            for i, g in enumerate(outs)]
    run = _run("A", pd.DataFrame(rows))
    assert unit_of(run) == POOLED
    html = units_section([run])
    heads = re.findall(r"<th>(.*?)</th>", html)
    assert heads == ["model", "tier short", "tier long", "per instance (tier mean)", "pooled"]
    # per tier: 2/4 and 1/4; per instance: means 1, 0.5, 0, 0 -> k = 1.5 of n = 4;
    # pooled: 3 of the 8 rows
    assert _cells(html, 0) == [["A", _cell(2, 4), _cell(1, 4), _cell(1.5, 4), _cell(3, 8)]]
    assert "n = 1,776" in html and "wilson" in html


def test_units_section_skips_untiered_benchmarks():
    rows = [{"item_id": f"i{i}", "foil_id": f"f{i}", "tier": "short", "group": 1.0,
             "scores": [0.0] * 4} for i in range(3)]
    run = _run("A", pd.DataFrame(rows))
    assert units_section([run]) == "" and unit_of(run).startswith("items")


def _autocomp_items(outcomes: dict[str, list[int]]) -> pd.DataFrame:
    rows = []
    for rel, outs in outcomes.items():
        for k, r1 in enumerate(outs):
            rows.append({"item_id": f"{rel}{k}", "task": "position", "n_objects": 2,
                         "negative_set": "swap", "values": [rel], "r1": float(r1),
                         "scores": [0.0, 0.0]})
    rows.append({"item_id": "c0", "task": "color", "n_objects": 2, "negative_set": "swap",
                 "values": ["red", "blue"], "r1": 1.0, "scores": [0.0, 0.0]})
    rows.append({"item_id": "p3", "task": "position", "n_objects": 3, "negative_set": "swap",
                 "values": ["above", "left of"], "r1": 1.0, "scores": [0.0, 0.0]})
    return pd.DataFrame(rows)


def test_relations_section_table15_by_hand():
    a = _run("A", _autocomp_items({"above": [1, 1, 0], "under": [0, 0]}), kind="choice")
    b = _run("B", _autocomp_items({"above": [1, 1, 1], "under": [1, 0]}), kind="choice")
    html = relations_section([a, b])
    # one table (position); colour values are no relation; N = 3 items are left out;
    # "under" (Auto-Comp §4's word) counts as a relation and keeps its stored name
    assert html.count("<table") == 1 and "color" not in html.split("</h3>")[0]
    lo, hi = _wilson(2, 3)
    assert _cells(html, 0) == [
        ["above", "3", f"66.7 [{100 * lo:.1f}, {100 * hi:.1f}]", "100.0 [43.8, 100.0]"],
        ["under", "2", "0.0 [0.0, 65.8]", "50.0 [9.5, 90.5]"]]


def test_relations_section_absent_without_relation_tasks():
    items = _autocomp_items({}).iloc[:1]
    assert relations_section([_run("A", items, kind="choice")]) == ""


def test_compass_decomposed_table_and_reading():
    stored = {"gap": [
        {"level": "L1", "N": "1", "n_complexities": 1, "n_captions": 4, "composed": 0.5,
         "decomposed": 0.5, "gap": 0.0},
        {"level": "L1", "N": "all", "n_complexities": 2, "n_captions": 10, "composed": 0.25,
         "decomposed": 0.5, "gap": 0.25},
        {"level": "L2-OA", "N": "all", "n_complexities": 3, "n_captions": 9,
         "composed": 0.125, "decomposed": float("nan"), "gap": float("nan")}]}
    html = decomposed_html({"m": stored})
    assert _cells(html, 0) == [["L1", "m", "2", "10", "25.0", "50.0", "25.0"],
                               ["L2-OA", "m", "3", "9", "12.5", "-", "-"]]
    assert "no equation for decomposed R@1" in READING and "strict >" in READING
    assert decomposed_html({"m": {"table2": []}}) == ""


def test_compass_section_states_the_reading():
    from foilbench.report import sections

    items = pd.DataFrame({"role": ["composed"], "level": ["L1"], "r1": [1.0],
                          "scores": [[0.0, 0.0]]})
    stored = {"table2": [], "skill_load": [],
              "gap": [{"level": "L1", "N": "all", "n_complexities": 1, "n_captions": 1,
                       "composed": 1.0, "decomposed": 1.0, "gap": 0.0}]}
    html = sections.compass([_run("A", items, kind="choice", compass=stored)])
    assert "Composed and decomposed R@1" in html and "Delta = decomposed - composed" in html


def test_new_sections_pass_the_browser_checks(tmp_path):
    from _browser import browser_page
    from _report_checks import page_problems
    from foilbench.report.html import page

    runs = [_run(m, _g3_items(m)) for m in "ABC"]
    runs += [_run("A", _autocomp_items({"above": [1, 0, 1], "left of": [0, 1]}),
                  kind="choice", bench="ac")]
    body = robustness_section(runs) + units_section(runs) + relations_section(runs)
    rows = [{"item_id": f"{t}{i}", "foil_id": f"f{i}", "tier": t, "group": float(i % 2),
             "scores": [0.0] * 4} for t in ("short", "medium", "long") for i in range(6)]
    body += units_section([_run("A", pd.DataFrame(rows), bench="tiered")])
    body += decomposed_html({"A": {"gap": [{"level": "L1", "N": "all", "n_complexities": 2,
                                            "n_captions": 3, "composed": 1 / 3,
                                            "decomposed": 2 / 3, "gap": 1 / 3}]}})
    out = tmp_path / "sections.html"
    out.write_text(page("sections", "planted", body), encoding="utf-8")
    assert body.count("<table") >= 6
    with browser_page(width=1400) as (pg, errors):
        pg.goto(out.resolve().as_uri())
        assert page_problems(pg) == [] and errors == []
