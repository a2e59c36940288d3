"""The report read as a reader reads it, in headless Chromium at 1400 px: a headline figure
and one generated sentence per benchmark, per-edit-type bars and paired differences, COMPASS
Tables 2 and 3 in the paper's layout, blind rows without duplicates and with ties, the mask
beside the pair; and no cut title or raw data frame anywhere."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from _browser import browser_page
from _report_checks import page_problems
from foilbench import runner
from foilbench.construct.compass.build import build_compass_benchmark
from foilbench.data.format import Manifest, make_benchmark, write_benchmark
from foilbench.models.base import CallableDualEncoder
from foilbench.models.tiny import TinyRandomEncoder
from foilbench.report import write_report
from foilbench.report.headline import sentence
from foilbench.runner.settings import RunSettings
from foilbench.store.db import ResultsStore

EDITS = ("modify_color", "modify_material", "swap_spatial", "add_object")


def _pair_bench(root: Path):
    """24 pairs over 8 scenes and 4 edit types, each foil with a square edit mask."""
    rng = np.random.default_rng(0)
    rows = []
    for k in range(24):
        base = rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)
        foil = base.copy()
        foil[8:20, 8:20] = rng.integers(0, 255, 3, dtype=np.uint8)
        mask = np.zeros((32, 32), np.uint8)
        mask[8:20, 8:20] = 255
        Image.fromarray(base).save(root / f"{k}_b.png")
        Image.fromarray(foil).save(root / f"{k}_f.png")
        Image.fromarray(mask).save(root / f"{k}_m.png")
        rows.append({"item_id": f"p{k}", "image_base": f"{k}_b.png", "image_foil": f"{k}_f.png",
                     "mask": f"{k}_m.png", "caption_base": f"a red cube number {k}",
                     "caption_foil": f"a blue cube number {k}", "scene_id": f"s{k % 8}",
                     "edit_type": EDITS[k % 4], "tier": "short"})
    return make_benchmark(Manifest(name="pairs-small", kind="pair"), pd.DataFrame(rows), root)


def _models():
    second = TinyRandomEncoder(seed=1, spec="tiny-b")
    return [TinyRandomEncoder(seed=0),
            CallableDualEncoder(second.embed_images, second.embed_texts, name="tiny-b")]


@pytest.fixture(scope="module")
def report_html(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("layout")
    (tmp / "pairs").mkdir()
    compass = build_compass_benchmark(tmp / "compass", seed=0, n_scenes=6, size=48,
                                      progress=False)
    write_benchmark(compass, tmp / "compass")
    from foilbench.data.format import load_benchmark

    benches = [_pair_bench(tmp / "pairs"), load_benchmark(tmp / "compass")]
    settings = RunSettings(n_boot=300, progress=False)
    with ResultsStore(tmp / "runs.duckdb") as store:
        for bench in benches:
            for model in _models():
                runner.write_cell(store, runner.evaluate_cell(model, bench, settings))
            runner.blind_reference(bench, store)
    return write_report(tmp / "runs.duckdb", [], tmp / "report.html")


def test_report_reads_at_a_glance_and_has_no_raw_frames(report_html, tmp_path):
    with browser_page(width=1400) as (page, errors):
        page.goto(report_html.resolve().as_uri())
        assert page_problems(page) == []
        # headline: one figure line per run, one sentence per benchmark, named models
        findings = page.locator("#summary ul.findings li").all_inner_texts()
        assert len(findings) == 2
        assert any(f.startswith("pairs-small (group, chance") for f in findings)
        assert all("tiny-random" in f and "tiny-b" in f and "paired bootstrap" in f
                   for f in findings)
        assert page.locator("#summary svg circle").count() == 4
        # per edit type: 4 edit types x 2 models bars, each with a chance tick
        bars = page.locator("#edit-types svg rect title").evaluate_all(
            "els => els.map(e => e.textContent)")
        assert sum("chance" in t for t in bars) == 8
        # paired differences: one row per benchmark (two models)
        assert page.locator("#differences svg circle").count() == 2
        # COMPASS tables as the paper lays them out
        t2_head = page.locator("#compass-table2 thead th").all_inner_texts()
        # one column per model (in the store's run order, which is not asserted here)
        assert t2_head[0] == "Type" and sorted(t2_head[1:]) == ["tiny-b", "tiny-random"]
        assert all(re.fullmatch(r"-?\d+\.\d\d ± (\d+\.\d\d|–)", c) for c in
                   page.locator("#compass-table2 tbody td.num").all_inner_texts())
        t3_head = page.locator("#compass-table3 thead th").all_inner_texts()
        assert t3_head[:5] == ["Type", "Model", "Object negatives", "Attribute negatives",
                               "Relation negatives"]
        # blind audit: no '(all)' next to 'all', a ties column
        blind = page.locator("#blind table").first
        assert "ties" in blind.locator("th").all_inner_texts()
        labels = blind.locator("tbody tr td:nth-child(2)").all_inner_texts()
        assert "(all)" not in labels and not ({"all", "all types"} <= set(labels))
        # the mask outline sits beside the pair, not over the edit (a pair benchmark's example:
        # the store's order of two runs written in one instant decides which section is first)
        pair_items = page.locator("#examples .item").filter(has=page.locator(".mask"))
        assert pair_items.count() > 0
        first = pair_items.first
        assert first.locator("img").count() == 3 and first.locator(".mask img").count() == 1
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        assert errors == []
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_the_checks_catch_cut_titles_and_raw_frames():
    """Control: a page with a title running out of its SVG and a raw frame fails them."""
    html = ('<svg width="100" height="40" viewBox="0 0 100 40"><text x="50" y="16" '
            'text-anchor="middle">a title much longer than one hundred pixels</text></svg>'
            '<table><tr><th>index</th><th>gap</th></tr><tr><td>0</td><td>0.0123456</td></tr>'
            '<tr><td>1</td><td>nan</td></tr></table>')
    with browser_page(width=1400) as (page, _):
        page.set_content(html)
        problems = page_problems(page)
    assert any("cuts" in p for p in problems)
    assert any("header index" in p for p in problems)
    assert any("unrounded" in p for p in problems) and any("cell nan" in p for p in problems)


def test_sentence_from_hand_numbers():
    rows = pd.DataFrame({"benchmark": ["b"] * 3, "metric": ["group"] * 3,
                         "model": ["A", "B", "C"], "value": [0.40, 0.20, 0.05],
                         "ci_low": [0.30, 0.10, 0.01], "ci_high": [0.50, 0.30, 0.09],
                         "chance": [1 / 6] * 3})
    deltas = pd.DataFrame({"a": ["A", "A", "B"], "b": ["B", "C", "C"],
                           "delta": [0.20, 0.35, 0.15], "ci_low": [0.05, 0.25, -0.02],
                           "ci_high": [0.35, 0.45, 0.30], "clustered": [True] * 3})
    assert sentence(rows, deltas) == (
        "b (group, chance 16.7%): A is above chance; B is not distinguishable from chance; "
        "C is below chance. A is better than B (+20.0 pp [+5.0, +35.0]) and C (+35.0 pp "
        "[+25.0, +45.0]) (paired bootstrap over scenes, 95% interval of the difference).")
    flipped = deltas.assign(a=["B", "C", "B"], b=["A", "A", "C"], delta=[-0.02, -0.35, 0.15],
                            ci_low=[-0.10, -0.45, -0.02], ci_high=[0.06, -0.25, 0.30])
    assert "A is better than C (+35.0 pp [+25.0, +45.0]); A is not reliably better than B " \
           "(+2.0 pp [-6.0, +10.0])" in sentence(rows, flipped)
    # on fewer than 30 scenes the scene bootstrap is too narrow: nobody is called better
    few = deltas.assign(n_clusters=[12] * 3)
    assert "No model is reliably better than another: A (highest) vs B" in sentence(rows, few)
    assert "fewer than 30 scenes: too few to call a model better" in sentence(rows, few)
    assert "is better than" not in sentence(rows, few)


def test_blind_rows_have_no_duplicate_overall_and_show_ties():
    from foilbench.report.sections import _blind_rows

    stat = {"accuracy": 0.0, "n": 4, "ci_low": 0.0, "ci_high": 0.49, "chance": 0.5}
    single = {"scorers": {"length": {"overall": stat, "by_type": {"all": stat}}},
              "flags": {"ties:length": {"all": 4}}}
    assert _blind_rows(single) == [["length", "all types", "0.0", "[0.0, 49.0]", "50.0", 4, 4]]
    half = {**stat, "n": 2}
    two = {"scorers": {"ngram": {"overall": stat, "by_type": {"a": half, "b": half}}},
           "flags": {"ties:ngram": {"a": 2, "b": 0}}}
    assert [r[1] for r in _blind_rows(two)] == ["all types", "a", "b"]
    assert [r[5] for r in _blind_rows(two)] == [2, 2, 0]


def test_compass_tables_in_the_papers_layout():
    from foilbench.report.compass_view import table2_html, table3_html

    stored = {
        "A": {"table2": [{"level": "L2-OA", "delta_pp": "2.39 ± 1.23", "n_complexities": 3,
                          "n_captions": 40},
                         {"level": "L3", "delta_pp": "-5.66 ± 3.45", "n_complexities": 2,
                          "n_captions": 9}],
              "skill_load": [{"level": "L2-OA", "skill": "A", "b_O": "+0.73** (0.10)",
                              "b_A": "-3.76** (0.20)", "b_R": None, "a": "+50.00 (1.00)"}]},
        "B": {"table2": [{"level": "L2-OA", "delta_pp": "nan ± -", "n_complexities": 0,
                          "n_captions": 0}], "skill_load": []},
    }
    t2 = table2_html(stored)
    assert "<th>Type</th><th>A</th><th>B</th>" in t2
    assert '<td class="num" title="3 complexities, 40 captions">2.39 ± 1.23</td>' in t2
    assert 'class="num shade"' in t2 and "-5.66 ± 3.45" in t2  # composed easier: shaded
    assert "nan" not in t2
    t3 = table3_html(stored)
    assert '<th colspan="3">Attribute negatives</th>' in t3
    # Attribute negatives of A at L2-OA: b_O, b_A (self-load, ** so shaded), b_R missing
    assert ('<td class="num">+0.73** (0.10)</td><td class="num shade">-3.76** (0.20)</td>'
            '<td class="num">-</td>') in t3
    assert "B</td>" not in t3  # no skill-load rows for B: no empty line for it


def _fake_run(run_id, model, outcomes, n_metric=None):
    from foilbench.report.build import RunData

    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(len(outcomes))],
                          "group": outcomes, "scene_id": [f"s{k // 2}" for k in
                                                          range(len(outcomes))]})
    metrics = pd.DataFrame({"metric": ["group"], "group_by": [""], "value": [np.mean(outcomes)],
                            "ci_low": [0.0], "ci_high": [1.0], "chance": [1 / 6],
                            "n": [n_metric or len(outcomes)], "ties": [0],
                            "ci_method": ["bootstrap:scene_id"]})
    run = {"run_id": run_id, "model_spec": model, "benchmark_checksum": "c",
           "benchmark_name": "b", "benchmark_kind": "pair", "n_boot": 500, "seed": 0,
           "config": {}}
    return RunData(run, metrics, items)


def test_paired_difference_by_hand():
    from foilbench.report.headline import paired_differences

    a = _fake_run("r1", "A", [1, 1, 1, 1, 0, 0, 1, 0])
    b = _fake_run("r2", "B", [0, 1, 0, 1, 0, 0, 1, 0])
    [row] = paired_differences([a, b], "group").to_dict(orient="records")
    assert row["delta"] == pytest.approx(2 / 8)  # A - B = (5 - 3) / 8
    assert row["clustered"] and row["n"] == 8 and row["a"] == "A" and row["b"] == "B"
    assert row["n_clusters"] == 4
    # per-scene differences are (1+0)/2, (1+0)/2, 0, 0: every resample lies in [0, 0.5]
    assert 0.0 <= row["ci_low"] <= row["delta"] <= row["ci_high"] <= 0.5
    # scored per unit (n differs from the items): no item-level pairing
    c = _fake_run("r3", "C", [1, 1, 1, 1, 0, 0, 1, 0], n_metric=4)
    assert paired_differences([c, b], "group").empty
    # an item without an outcome in one run is left out of the pair, never a NaN p-value
    d = _fake_run("r4", "D", [1, 1, 1, 1, 0, 0, 1, np.nan])
    [row] = paired_differences([d, b], "group").to_dict(orient="records")
    assert row["n"] == 7 and row["delta"] == pytest.approx(2 / 7)
    assert 0.0 <= row["p_value"] <= 1.0 and np.isfinite(row["ci_low"])


def test_paired_delta_refuses_missing_values():
    from foilbench.stats.bootstrap import paired_delta_ci

    with pytest.raises(ValueError, match="paired values must be finite"):
        paired_delta_ci([1.0, 0.0, np.nan], [0.0, 0.0, 1.0], None, n_boot=10)


def test_figures_with_long_labels_cut_nothing():
    """Long model specs and edit types are shortened with an ellipsis inside the canvas."""
    from foilbench.report.figures_ci import bars_ci, delta_plot, headline_plot

    long_model = "openclip:ViT-B-32:/a/very/long/path/to/some/checkpoint/epoch_32_final.pt"
    long_type = "a_rather_long_edit_type_name_that_goes_on_and_on_forever"
    head = pd.DataFrame({"benchmark": ["b", "b"], "metric": ["group"] * 2,
                         "model": [long_model, "m2"], "value": [0.3, 0.1],
                         "ci_low": [0.2, 0.05], "ci_high": [0.4, 0.2], "chance": [1 / 6] * 2})
    bars = pd.DataFrame({"group": [long_type, "x"], "series": [long_model, long_model],
                         "value": [0.5, 0.2], "ci_low": [0.4, 0.1], "ci_high": [0.6, 0.3],
                         "chance": [0.5, 0.5]})
    deltas = pd.DataFrame({"label": [f"{long_model} - m2 · b (group)"], "delta": [0.1],
                           "ci_low": [0.02], "ci_high": [0.2], "p_value": [0.01]})
    svgs = [headline_plot(head, "t").svg, bars_ci(bars, "t").svg, delta_plot(deltas, "t").svg]
    with browser_page(width=1400) as (page, _):
        page.set_content("".join(svgs))
        assert page_problems(page) == []
