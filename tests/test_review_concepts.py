"""Auto-Comp's concordance study (§6, A.10) as `foilbench review concepts`: a seeded sample
of concepts drawn before the validator's verdict (passes and rejects, from the construction
log), blind verdicts over HTTP, agreement with the validator."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from _autocomp_study import build_study_folder
from _faults_cli import foilbench, no_traceback
from foilbench.review.concept_frame import judged_units
from foilbench.review.concepts import (
    DB_FILE,
    ConceptChecks,
    ConceptUnit,
    agreement,
    balanced_sample,
    concept_units,
)
from foilbench.review.units import ReviewError


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_study_folder(tmp_path_factory.mktemp("ac") / "ac", n_concepts=4)


def _unit(key, task, cond, validator="pass", n=2):
    return ConceptUnit(key, f"{key}.png", task, n, cond, ("cup", "lamp"), ("red", "blue"),
                       "c", validator)


def test_the_frame_holds_the_images_the_validator_rejected(bench):
    """§6 "Concordance": agreement with a judge needs the images it rejected too. The
    construction keeps them (images/ and the log); the built benchmark is unchanged."""
    frame, left_out = judged_units(bench.root)
    rejects = [u for u in frame if u.validator == "reject"]
    passes = [u for u in frame if u.validator == "pass"]
    assert rejects and passes and left_out == {}
    assert all(u.reason.startswith("object presence and count [") for u in rejects)
    assert all((bench.root / u.image).is_file() for u in frame)
    kept = {u.key for u in concept_units(bench)}  # the benchmark's items: passes only
    assert {u.key for u in passes} == kept and not kept & {u.key for u in rejects}
    assert {u.condition for u in rejects} == {"minimal", "contextual"}
    ctx = next(u for u in frame if u.condition == "contextual")
    assert ctx.caption and "white background" not in ctx.caption


def test_sample_is_concepts_balanced_over_task_and_n_with_both_conditions():
    """A.10: "a balanced subset of 200 concepts (resulting in 400 images across Minimal and
    Contextual settings)": n counts concepts, each brings both its images."""
    units = [_unit(f"a{i}/{c}", "color", c) for i in range(6) for c in ("minimal",
                                                                        "contextual")]
    units += [_unit(f"b{i}/{c}", "position", c, "reject")
              for i in range(2) for c in ("minimal", "contextual")]
    got = balanced_sample(units, 4, seed=0)
    assert len(got) == 8
    assert sorted({u.concept_id for u in got if u.task == "position"}) == ["b0", "b1"]
    assert len({u.concept_id for u in got if u.task == "color"}) == 2
    assert [u.key for u in balanced_sample(units, 4, seed=0)] == [u.key for u in got]
    assert len(balanced_sample(units, 50, seed=1)) == 16
    with pytest.raises(ReviewError, match="at least 1"):
        balanced_sample(units, 0, seed=0)


def test_agreement_counts_rejects_by_hand():
    """Planted: 4 passes (human: match, match, match, mismatch) and 4 rejects (human:
    mismatch, mismatch, match, unsure), one pass pending. Agreement = (3 pass&match + 2
    reject&mismatch) / 7 decided = 5/7; Wilson 95% by hand (z = 1.96, n = 7, p = 5/7):
    centre = (p + z^2/14) / (1 + z^2/7) = 0.638356, half = z sqrt(p(1-p)/7 + z^2/196) /
    (1 + z^2/7) = 0.279427 -> [0.358929, 0.917783]. Precision of passes 3/4, of rejects 2/3.
    The passes-only reading (the old sample) would report 3/4 here."""
    units = [_unit(f"p{i}/minimal", "color", "minimal") for i in range(5)]
    units += [_unit(f"r{i}/minimal", "color", "minimal", "reject") for i in range(4)]
    human = {"p0/minimal": "match", "p1/minimal": "match", "p2/minimal": "match",
             "p3/minimal": "mismatch", "r0/minimal": "mismatch", "r1/minimal": "mismatch",
             "r2/minimal": "match", "r3/minimal": "unsure"}
    o = agreement(units, human)["overall"]
    assert o["confusion"] == {
        "pass": {"match": 3, "mismatch": 1, "unsure": 0, "pending": 1},
        "reject": {"match": 1, "mismatch": 2, "unsure": 1, "pending": 0}}
    a = o["agreement"]
    assert (a["k"], a["n"]) == (5, 7) and a["rate"] == pytest.approx(5 / 7)
    assert a["ci_low"] == pytest.approx(0.358929, abs=1e-6)
    assert a["ci_high"] == pytest.approx(0.917783, abs=1e-6)
    assert (o["pass_precision"]["k"], o["pass_precision"]["n"]) == (3, 4)
    assert (o["reject_precision"]["k"], o["reject_precision"]["n"]) == (2, 3)
    assert (o["unsure"], o["pending"], o["images"]) == (1, 1, 9)
    assert agreement(units, {})["overall"]["agreement"]["rate"] is None


def test_agreement_per_group_is_table_11s_breakdown():
    units = [_unit("a/minimal", "color", "minimal"), _unit("a/contextual", "color",
                                                           "contextual", "reject"),
             _unit("b/minimal", "position", "minimal", n=3)]
    rep = agreement(units, {"a/minimal": "mismatch", "a/contextual": "mismatch",
                            "b/minimal": "match"})
    assert set(rep["by_group"]) == {"color N=2 minimal", "color N=2 contextual",
                                    "position N=3 minimal"}
    assert rep["by_group"]["color N=2 minimal"]["agreement"]["rate"] == 0.0
    assert rep["by_group"]["color N=2 contextual"]["agreement"]["rate"] == 1.0
    assert rep["overall"]["agreement"]["k"] == 2


def test_sample_is_fixed_on_first_use_and_decisions_persist(bench, tmp_path):
    checks = ConceptChecks(bench, tmp_path, n=3, seed=3)
    keys = [u.key for u in checks.units]
    assert len(keys) == 6 and {u.condition for u in checks.units} == {"minimal", "contextual"}
    checks.decide(keys[0], "match")
    checks.decide(keys[0], "mismatch")  # the latest counts
    with pytest.raises(ReviewError, match="verdict must be one of"):
        checks.decide(keys[1], "yes")
    with pytest.raises(ReviewError, match="not an image of this sample"):
        checks.decide("nope/minimal", "match")
    verdict = checks.units[0].validator
    checks.close()
    again = ConceptChecks(bench, tmp_path, n=3, seed=3)
    assert [u.key for u in again.units] == keys and again.units[0].validator == verdict
    assert again.current() == {keys[0]: "mismatch"}
    assert again.report()["design"] == "before-verdict"
    again.close()
    with pytest.raises(ReviewError, match="seed 3 and size 3"):
        ConceptChecks(bench, tmp_path, n=3, seed=4)


def test_the_default_sample_holds_rejects(bench, tmp_path):
    checks = ConceptChecks(bench, tmp_path)  # 200 concepts asked, all 8 there
    frame, _ = judged_units(bench.root)
    assert len(checks.units) == len(frame) == 16
    assert {u.validator for u in checks.units} == {"pass", "reject"}
    rep = checks.report()
    assert rep["frame"]["reject"] == sum(u.validator == "reject" for u in frame)
    checks.close()


def test_a_review_folder_made_before_still_resumes_as_passes_only(bench, tmp_path):
    """The old sample: keys of validated images (no design), decisions in the same tables."""
    keys = [u.key for u in concept_units(bench)][:3]
    db = sqlite3.connect(tmp_path / DB_FILE)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute("CREATE TABLE decisions (seq INTEGER PRIMARY KEY AUTOINCREMENT, unit TEXT NOT "
               "NULL, verdict TEXT NOT NULL, at TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('sample', ?)", (json.dumps(
        {"seed": 0, "n": 200, "benchmark": bench.name, "keys": keys}),))
    db.execute("INSERT INTO decisions (unit, verdict, at) VALUES (?, 'match', 'x'), "
               "(?, 'mismatch', 'x')", (keys[0], keys[1]))
    db.commit()
    db.close()
    checks = ConceptChecks(bench, tmp_path)
    assert [u.key for u in checks.units] == keys
    rep = checks.report()
    assert rep["design"] == "passes-only" and "precision of passes" in rep["sample"]
    assert rep["overall"]["agreement"]["rate"] == 0.5
    assert rep["overall"]["confusion"]["reject"]["match"] == 0
    checks.decide(keys[2], "match")
    assert checks.report()["overall"]["agreement"]["k"] == 2
    checks.close()


def test_concepts_app_over_http_is_blind_to_the_validator(bench, tmp_path):
    from foilbench.review.app import SESSION_COOKIE
    from foilbench.review.concepts_app import create_concepts_app

    checks = ConceptChecks(bench, tmp_path, n=8, seed=0)
    reject = next(u for u in checks.units if u.validator == "reject")
    with TestClient(create_concepts_app(checks), base_url="http://127.0.0.1:8767") as c:
        html = c.get("/").text
        token = re.search(r'name="csrf-token" content="([0-9a-f]+)"', html).group(1)
        state = c.get("/api/state").json()
        assert "validator" not in json.dumps(state) and "agreement" not in json.dumps(state)
        shown = next(u for u in state["units"] if u["key"] == reject.key)
        assert c.get(shown["image"]).status_code == 200  # a rejected image is served
        assert c.get("/file?path=../../etc/passwd").status_code == 404
        body = {"key": reject.key, "verdict": "mismatch"}
        assert c.post("/api/decide", json=body).status_code == 403  # no CSRF token
        r = c.post("/api/decide", json=body, headers={"X-CSRF-Token": token})
        assert r.status_code == 200 and r.json() == {"progress": {
            "images": 16, "decided": 1, "pending": 15}}
        bad = c.post("/api/decide", json={"key": reject.key, "verdict": "<b>"},
                     headers={"X-CSRF-Token": token})
        assert bad.status_code == 400 and "verdict must be one of" in bad.json()["error"]
        big = c.post("/api/decide", content=b"{" + b" " * 70_000 + b"}",
                     headers={"X-CSRF-Token": token, "Content-Type": "application/json"})
        assert big.status_code == 413
        c.cookies.clear()
        c.cookies.set(SESSION_COOKIE, "other")
        assert c.post("/api/decide", json=body,
                      headers={"X-CSRF-Token": token}).status_code == 403
    assert checks.report()["overall"]["confusion"]["reject"]["mismatch"] == 1
    checks.close()


def test_cli_report(bench, tmp_path):
    from foilbench.cli.review_cmd import review

    args = ["concepts", str(bench.root), "--n", "2", "--review-dir", str(tmp_path), "--report"]
    res = CliRunner().invoke(review, [*args, "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["overall"]["images"] == 4 and rep["overall"]["pending"] == 4
    assert rep["frame"]["pass"] + rep["frame"]["reject"] == 16
    text = CliRunner().invoke(review, args).output
    assert "precision of rejects" in text and "pass m/x/u" in text and "16 judged" in text


def test_a_folder_without_construction_log_is_one_error_line(bench, tmp_path, capsys):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(bench.root, copy, ignore=shutil.ignore_patterns("construction_log.jsonl"))
    code, out, err = foilbench(capsys, "review", "concepts", str(copy), "--report")
    assert code == 2 and "construction_log.jsonl" in err and "passed and rejected" in err
    no_traceback(out + err)


def test_export_and_one_call_report(bench, tmp_path):
    import pandas as pd

    from foilbench.cli.review_cmd import review
    from foilbench.review.concepts import concepts_report

    rd = tmp_path / "rd"
    checks = ConceptChecks(bench, rd, n=8)
    reject = next(u for u in checks.units if u.validator == "reject")
    accept = next(u for u in checks.units if u.validator == "pass")
    checks.decide(reject.key, "match")  # disagrees
    checks.decide(accept.key, "match")  # agrees
    checks.close()
    rep = concepts_report(bench.root, rd, n=8)
    assert (rep["overall"]["agreement"]["k"], rep["overall"]["agreement"]["n"]) == (1, 2)
    out = tmp_path / "out"
    res = CliRunner().invoke(review, ["concepts", str(bench.root), "--n", "8",
                                      "--review-dir", str(rd), "--export", str(out)])
    assert res.exit_code == 0, res.output
    rows = pd.read_parquet(out / "concept_checks_decisions.parquet")
    assert rows.set_index("unit")["agrees"].to_dict() == {reject.key: False, accept.key: True}
    assert json.loads((out / "concept_checks_report.json").read_text()) == rep
    again = CliRunner().invoke(review, ["concepts", str(bench.root), "--n", "8",
                                        "--review-dir", str(rd), "--export", str(out)])
    assert again.exit_code != 0 and "not an empty folder" in str(again.exception)


def test_the_frame_reads_each_verdict_from_a_planted_log(tmp_path):
    """Planted construction log: a pass, a reject at the object check, a reject at the
    background check, an image whose VQA call failed (no verdict: left out, counted)."""
    cid = "ac-color-n2-x"
    recs = [{"event": "created", "item": cid, "kind": "concept", "stage": "concepts",
             "inputs": {"task": "color", "objects": ["cup", "lamp"], "values": ["red", "blue"]}},
            {"item": cid, "stage": "captions + semantic preservation", "attempt": 0,
             "outputs": {"contextual": "a red cup by a blue lamp"},
             "verdicts": {"preserved": True}}]
    for cond in ("minimal", "contextual"):
        recs.append({"event": "created", "item": f"{cid}-{cond}", "kind": "track",
                     "parent": cid, "stage": "split tracks"})
        recs.append({"item": f"{cid}-{cond}", "stage": f"text-to-image [{cond}]",
                     "outputs": {"image": f"images/{cid}-{cond}.png"}})
    recs.append({"item": f"{cid}-contextual", "stage": "attribute/relation check [contextual]",
                 "verdicts": {"qa": []}})
    recs.append({"event": "outcome", "item": f"{cid}-minimal", "kind": "track",
                 "outcome": "dropped", "stage": "background check [minimal]",
                 "reason": "background not white"})
    cid2 = "ac-color-n2-y"
    recs += [{"event": "created", "item": cid2, "kind": "concept", "stage": "concepts",
              "inputs": {"task": "color", "objects": ["box", "cone"], "values": ["red",
                                                                                "blue"]}},
             {"event": "created", "item": f"{cid2}-minimal", "kind": "track", "parent": cid2},
             {"item": f"{cid2}-minimal", "stage": "text-to-image [minimal]",
              "outputs": {"image": "images/y.png"}},
             {"event": "outcome", "item": f"{cid2}-minimal", "kind": "track",
              "outcome": "dropped", "stage": "attribute/relation check [minimal]",
              "reason": "call failed", "error": "timeout"},
             {"event": "created", "item": f"{cid2}-contextual", "kind": "track",
              "parent": cid2},
             {"item": f"{cid2}-contextual", "stage": "text-to-image [contextual]",
              "outputs": {"image": "images/y2.png"}},
             {"event": "outcome", "item": f"{cid2}-contextual", "kind": "track",
              "outcome": "dropped", "stage": "object presence and count [contextual]",
              "reason": "objects missing or miscounted"}]
    (tmp_path / "construction_log.jsonl").write_text(
        "\n".join(json.dumps(r) for r in recs) + "\n")
    units, left_out = judged_units(tmp_path)
    got = {u.key: (u.validator, u.reason) for u in units}
    assert got == {
        f"{cid}/contextual": ("pass", ""),
        f"{cid}/minimal": ("reject", "background check [minimal]: background not white"),
        f"{cid2}/contextual": ("reject", "object presence and count [contextual]: objects "
                                         "missing or miscounted")}
    assert sum(left_out.values()) == 1 and "call failed" in next(iter(left_out))
    by_key = {u.key: u for u in units}
    assert by_key[f"{cid}/contextual"].caption == "a red cup by a blue lamp"
    assert by_key[f"{cid}/minimal"].caption.endswith("on a white background")
    assert by_key[f"{cid}/minimal"].concept_text() == "cup: red; lamp: blue"


def test_a_suite_folder_names_the_auto_comp_construction_folder_inside(bench, tmp_path, capsys):
    """A folder without a manifest (a suite's) is one error naming it and the folder inside
    `review concepts` can open, never the pair benchmarks beside it (the pair review's hint)."""
    import shutil

    from _review_fixtures import write_review_bench

    suite = tmp_path / "suite"
    write_review_bench(suite / "world-pairs")
    shutil.copytree(bench.root, suite / "ac", ignore=shutil.ignore_patterns("review"))
    code, out, err = foilbench(capsys, "review", "concepts", str(suite), "--report")
    assert code == 2
    assert f"{suite} is not a benchmark folder (no manifest.json)" in err
    assert f"Auto-Comp construction folder(s) ac: try `foilbench review concepts {suite / 'ac'}`" in err
    assert "world-pairs" not in err and "pair" not in err
    no_traceback(out + err)


def test_a_folder_without_a_manifest_is_one_sentence_naming_it(tmp_path, capsys):
    code, out, err = foilbench(capsys, "review", "concepts", str(tmp_path), "--report")
    assert code == 2
    assert f"{tmp_path} is not a benchmark folder (no manifest.json)" in err
    assert "try" not in err and err.count(". ") == 0
    no_traceback(out + err)
