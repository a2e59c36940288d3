"""Auto-Comp's solvability study (§6 "(2) Solvability", A.10) as `foilbench review
solvability`: a person picks the true caption among an item's Swap or Confusion options (at
most 50); accuracy with Wilson intervals and chance, per task x N x set x condition."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from _autocomp_study import build_study_folder
from _faults_cli import foilbench, no_traceback
from foilbench.review.solvability import (
    MAX_OPTIONS,
    SolvabilityStudy,
    SolvabilityUnit,
    accuracy,
    item_options,
    solvability_report,
    solvability_units,
)
from foilbench.review.units import ReviewError


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_study_folder(tmp_path_factory.mktemp("ac") / "ac", n_concepts=3)


def _unit(key, options, answer=0, task="color", cond="minimal", nset="confusion"):
    opts = tuple(f"{key} caption {i}" for i in range(options))
    return SolvabilityUnit(key, f"{key}.png", key, task, 2, cond, nset, opts, answer,
                           options - 1, 0)


def test_the_50_option_cap_keeps_the_true_caption_and_is_seeded():
    """A.10: "a set of low-entropy distractors (limited to 50 options for feasibility)"."""
    caps = ["the true one"] + [f"negative {i}" for i in range(80)]
    options, answer, false = item_options("item-1", caps, set(), seed=0)
    assert len(options) == MAX_OPTIONS == 50 and false == 80
    assert options[answer] == "the true one" and options.count("the true one") == 1
    assert len(set(options)) == 50 and set(options) <= set(caps)
    assert item_options("item-1", caps, set(), seed=0) == (options, answer, false)
    assert item_options("item-1", caps, set(), seed=1)[0] != options
    few = item_options("item-2", caps[:4], set(), seed=0)[0]  # under the cap: all, shuffled
    assert sorted(few) == sorted(caps[:4])


def test_negatives_true_of_the_image_are_not_offered():
    caps = ["a red cup and a blue lamp", "a blue lamp and a red cup", "a blue cup and a red "
            "lamp"]
    options, answer, false = item_options("i", caps, {1}, seed=0)
    assert sorted(options) == sorted([caps[0], caps[2]]) and false == 1
    assert options[answer] == caps[0]


def test_accuracy_and_chance_by_hand():
    """Planted: 4 decided items, 3 picked right: accuracy 3/4; Wilson (z = 1.96, n = 4,
    p = 3/4) by hand: centre = (0.75 + 3.8416/8) / (1 + 3.8416/4) = 1.2302 / 1.9604 =
    0.627525, half = 1.96 sqrt(0.046875 + 0.060025) / 1.9604 = 0.326889 -> [0.300636,
    0.954414]. Chance =
    mean(1/2, 1/2, 1/50, 1/50) = 0.26; the pending item counts in neither."""
    units = [_unit("a", 2, 0), _unit("b", 2, 1, nset="swap"), _unit("c", 50, 7),
             _unit("d", 50, 3), _unit("e", 50, 0)]
    rep = accuracy(units, {"a": 0, "b": 1, "c": 7, "d": 4})
    o = rep["overall"]
    assert (o["decided"], o["correct"], o["pending"]) == (4, 3, 1)
    assert o["accuracy"]["rate"] == 0.75
    assert o["accuracy"]["ci_low"] == pytest.approx(0.300636, abs=1e-6)
    assert o["accuracy"]["ci_high"] == pytest.approx(0.954414, abs=1e-6)
    assert o["chance"] == pytest.approx(0.26)
    assert rep["by_set"]["swap"]["accuracy"]["rate"] == 1.0
    assert rep["by_set"]["confusion"]["correct"] == 2
    assert set(rep["by_group"]) == {"color N=2 swap minimal", "color N=2 confusion minimal"}


def test_a_person_who_always_picks_a_negative_scores_zero(bench, tmp_path):
    """Anti-case: every pick a negative -> accuracy 0 (Wilson [0, ...]), not chance."""
    study = SolvabilityStudy(bench, tmp_path, n=200, seed=0)
    for u in study.units:
        study.decide(u.key, (u.answer + 1) % len(u.options))
    o = study.report()["overall"]
    assert o["decided"] == len(study.units) > 0 and o["correct"] == 0
    assert o["accuracy"]["rate"] == 0.0 and o["accuracy"]["ci_low"] == 0.0
    assert o["chance"] > 0
    study.close()


def test_the_sample_covers_both_sets_and_conditions_and_resumes(bench, tmp_path):
    units = solvability_units(bench)
    assert {u.negative_set for u in units} == {"swap", "confusion"}
    study = SolvabilityStudy(bench, tmp_path, n=2, seed=5)
    concepts = {u.concept_id for u in study.units}
    assert len(concepts) == 2 and {u.task for u in study.units} == {"color", "position"}
    shown = [(u.key, u.options, u.answer) for u in study.units]
    first = study.units[0]
    study.decide(first.key, first.answer)
    study.decide(first.key, (first.answer + 1) % len(first.options))  # the latest counts
    with pytest.raises(ReviewError, match="option number from 0"):
        study.decide(first.key, len(first.options))
    with pytest.raises(ReviewError, match="option number from 0"):
        study.decide(first.key, True)
    with pytest.raises(ReviewError, match="not an item of this sample"):
        study.decide("nope", 0)
    study.close()
    again = SolvabilityStudy(bench, tmp_path, n=2, seed=5)
    assert [(u.key, u.options, u.answer) for u in again.units] == shown
    assert again.report()["overall"]["correct"] == 0
    assert again.report()["overall"]["decided"] == 1
    again.close()
    with pytest.raises(ReviewError, match="seed 5 and size 2"):
        SolvabilityStudy(bench, tmp_path, n=2, seed=6)


def test_solvability_app_over_http(bench, tmp_path):
    from dataclasses import replace

    from foilbench.review.app import SESSION_COOKIE
    from foilbench.review.solvability_app import create_solvability_app

    study = SolvabilityStudy(bench, tmp_path, n=1, seed=0)
    study.bench = replace(bench, manifest=replace(bench.manifest, name="<b>x</b>"))
    unit = study.units[0]
    with TestClient(create_solvability_app(study), base_url="http://127.0.0.1:8768") as c:
        html = c.get("/").text
        assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x" not in html  # the name is data
        token = re.search(r'name="csrf-token" content="([0-9a-f]+)"', html).group(1)
        state = c.get("/api/state").json()
        assert "answer" not in json.dumps(state) and "accuracy" not in json.dumps(state)
        shown = state["units"][0]
        assert shown["options"] == list(unit.options) and shown["pick"] is None
        assert c.get(shown["image"]).status_code == 200
        assert c.get("/file?path=manifest.json").status_code == 404
        body = {"key": unit.key, "choice": unit.answer}
        assert c.post("/api/decide", json=body).status_code == 403  # no CSRF token
        r = c.post("/api/decide", json=body, headers={"X-CSRF-Token": token})
        assert r.status_code == 200 and r.json()["progress"]["decided"] == 1
        bad = c.post("/api/decide", json={"key": unit.key, "choice": "0"},
                     headers={"X-CSRF-Token": token})
        assert bad.status_code == 400 and "option number" in bad.json()["error"]
        big = c.post("/api/decide", content=b"[" + b"0," * 40_000 + b"0]",
                     headers={"X-CSRF-Token": token, "Content-Type": "application/json"})
        assert big.status_code == 413
        c.cookies.clear()
        c.cookies.set(SESSION_COOKIE, "other")
        assert c.post("/api/decide", json=body,
                      headers={"X-CSRF-Token": token}).status_code == 403
    assert study.report()["overall"]["correct"] == 1
    study.close()


def test_cli_report_and_export(bench, tmp_path):
    from foilbench.cli.review_cmd import review

    rd = tmp_path / "rd"
    study = SolvabilityStudy(bench, rd, n=1, seed=0)
    for u in study.units:
        study.decide(u.key, u.answer)
    study.close()
    args = ["solvability", str(bench.root), "--n", "1", "--review-dir", str(rd)]
    res = CliRunner().invoke(review, [*args, "--report", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["overall"]["accuracy"]["rate"] == 1.0
    assert rep == solvability_report(bench.root, rd, n=1, seed=0)
    text = CliRunner().invoke(review, [*args, "--report"]).output
    assert "swap:" in text and "confusion:" in text and "at most 50" in text
    out = tmp_path / "export"
    res = CliRunner().invoke(review, [*args, "--export", str(out)])
    assert res.exit_code == 0, res.output
    picks = pd.read_parquet(out / "solvability_decisions.parquet")
    assert len(picks) == rep["overall"]["decided"] and picks["correct"].all()
    assert json.loads((out / "solvability_report.json").read_text())["overall"]["correct"] \
        == rep["overall"]["correct"]


def test_not_an_autocomp_benchmark_is_one_error_line(tmp_path, capsys):
    from PIL import Image

    from foilbench.data.format import Manifest, make_benchmark, write_benchmark

    items = pd.DataFrame({"item_id": ["x"], "image": ["a.png"], "captions": [["a", "b"]]})
    (tmp_path / "b").mkdir()
    Image.new("RGB", (4, 4)).save(tmp_path / "b" / "a.png")
    write_benchmark(make_benchmark(Manifest(name="plain", kind="choice", license="x",
                                            source="t", description="t"), items,
                                   tmp_path / "b"), tmp_path / "b")
    code, out, err = foilbench(capsys, "review", "solvability", str(tmp_path / "b"),
                               "--report")
    assert code == 2 and "not an Auto-Comp benchmark" in err and "negative_set" in err
    no_traceback(out + err)


def test_a_real_confusion_set_past_50_is_capped_with_the_true_caption_kept(tmp_path):
    """Colour at N = 3 has N^(2N) - 1 = 728 Confusion arrangements: the page offers 50."""
    from foilbench.construct.autocomp.bench import build_autocomp

    benches = build_autocomp(tmp_path, n_concepts=1, ns=(3,), tasks=("color",), size=32,
                             progress=False)
    (unit,) = [u for u in solvability_units(benches["confusion"]) if u.condition == "minimal"]
    item = benches["confusion"].items.set_index("item_id").loc[unit.key]
    assert len(item["captions"]) - 1 > 700 and unit.negatives > 700
    assert len(unit.options) == MAX_OPTIONS
    assert unit.options[unit.answer] == item["captions"][0]
    assert set(unit.options) <= set(item["captions"])
    swap = [u for u in solvability_units(benches["swap"]) if u.condition == "minimal"][0]
    assert len(swap.options) == 1 + swap.negatives <= 6  # N! - 1 = 5 negatives at most


def test_a_suite_folder_names_the_auto_comp_benchmark_inside(bench, tmp_path, capsys):
    """A folder without a manifest (a suite's) is one error naming it and the folder inside
    `review solvability` can open, never the pair benchmarks beside it (the pair review's hint)."""
    import shutil

    from _review_fixtures import write_review_bench

    suite = tmp_path / "suite"
    write_review_bench(suite / "world-pairs")
    shutil.copytree(bench.root, suite / "ac", ignore=shutil.ignore_patterns("review"))
    code, out, err = foilbench(capsys, "review", "solvability", str(suite), "--report")
    assert code == 2
    assert f"{suite} is not a benchmark folder (no manifest.json)" in err
    assert f"Auto-Comp benchmark(s) ac: try `foilbench review solvability {suite / 'ac'}`" in err
    assert "world-pairs" not in err and "pair" not in err
    no_traceback(out + err)


def test_a_folder_without_a_manifest_is_one_sentence_naming_it(tmp_path, capsys):
    code, out, err = foilbench(capsys, "review", "solvability", str(tmp_path), "--report")
    assert code == 2
    assert f"{tmp_path} is not a benchmark folder (no manifest.json)" in err
    assert "try" not in err and err.count(". ") == 0
    no_traceback(out + err)
