"""SugarCrepe §4 / App. D built as the paper states (issue 25): human validation of the
negatives before Algorithm 1, one prompt template per fine-grained type with 7 or more
demonstrations, the blind models' raw gaps, and a refinement grid a small caption set can
fill (issue 29). Each test quotes its passage; expectations are computed by hand."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from _construct_helpers import caption_set
from foilbench.cli.main import cli
from foilbench.construct.engine.prompts import load_prompt
from foilbench.construct.sugarcrepe.pipeline import TYPES, prompt_name
from foilbench.construct.sugarcrepe.refine import choose_grid
from foilbench.data.format import load_benchmark
from foilbench.review.choice import ChoiceSession
from foilbench.review.choice_export import export_validated
from foilbench.review.units import ReviewError


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def unrefined(tmp_path_factory):
    """Stage 1 only (--no-refine): the set a reviewer validates."""
    root = tmp_path_factory.mktemp("sc")
    caps = caption_set(root / "coco")
    out = root / "sc"
    res = invoke("construct", "sugarcrepe", str(caps), "--out", str(out), "--no-refine",
                 "--no-progress")
    assert res.exit_code == 0, res.output
    return caps, out


def test_validation_verdicts_rates_and_undo(unrefined, tmp_path):
    """§4.1 Stage 2: "we employ human validation to filter out false negatives ... and to
    ensure the generated negative texts are fluent". Discard rate = (true-or-ambiguous +
    not fluent) / judged, per type, with Wilson intervals; undo reverts the latest verdict."""
    _, out = unrefined
    s = ChoiceSession(out, tmp_path / "rv")
    by_type: dict[str, list[str]] = {}
    for u in s.units:
        by_type.setdefault(u.edit_type, []).append(u.item_id)
    t1, t2 = sorted(by_type)[:2]
    a = by_type[t1][:3]
    s.decide(a[0], "false")
    s.decide(a[1], "true_or_ambiguous")
    s.decide(a[2], "not_fluent")
    s.decide(by_type[t2][0], "false")
    s.decide(by_type[t2][1], "false")  # then undone
    assert s.store.undo() == (by_type[t2][1], "false")
    summary = s.summary()
    assert summary["decided"] == 4 and summary["pending"] == len(s.units) - 4
    e1 = summary["by_edit_type"][t1]
    assert e1["counts"] == {"false": 1, "true_or_ambiguous": 1, "not_fluent": 1}
    assert e1["discard"]["rate"] == pytest.approx(2 / 3)
    assert e1["rate_not_fluent"]["rate"] == pytest.approx(1 / 3)
    assert summary["by_edit_type"][t2]["discard"]["rate"] == 0.0
    assert summary["overall"]["discard"]["rate"] == pytest.approx(2 / 4)
    lo, hi = summary["overall"]["discard"]["ci_low"], summary["overall"]["discard"]["ci_high"]
    assert lo < 0.5 < hi
    with pytest.raises(ReviewError, match=r"unknown verdict 'maybe' for item"):
        s.decide(a[0], "maybe")
    with pytest.raises(ReviewError, match="no item 'nope'"):
        s.decide("nope", "false")
    with pytest.raises(ReviewError, match="validation unfinished: .* pending"):
        export_validated(s, tmp_path / "x")


def test_pair_benchmark_is_refused(tmp_path):
    from foilbench.construct.suite import build_suite

    build_suite(tmp_path / "s", size=32, parts=("pairs",), config={"pairs": {"n_scenes": 2}},
                progress=False)
    pairs = next((tmp_path / "s").glob("*/manifest.json")).parent
    with pytest.raises(ReviewError, match="needs a choice benchmark"):
        ChoiceSession(pairs)


def test_export_then_algorithm_1_on_the_validated_set(unrefined, tmp_path):
    """§4.1 order: generate (Stage 1), filter false negatives by humans (Stage 2), then
    adversarial refinement (Stage 3) on what is left. The export keeps only negatives judged
    false of the image (validated = True); `construct sugarcrepe VALIDATED` makes no call,
    runs Algorithm 1 on exactly those items and reports discard rates per type."""
    caps, out = unrefined
    rv = out / "review"
    s = ChoiceSession(out)
    verdicts = {}
    for k, u in enumerate(s.units):  # every 4th negative judged true, every 7th not fluent
        v = "true_or_ambiguous" if k % 4 == 3 else "not_fluent" if k % 7 == 6 else "false"
        s.decide(u.item_id, v)
        verdicts[u.item_id] = (u.edit_type, v)
    s.store.close()
    val = tmp_path / "val"
    res = invoke("review", "export", str(out), "--out", str(val))
    assert res.exit_code == 0, res.output
    # the command it suggests is the one run below (it once named a --validated option)
    assert f"next: foilbench construct sugarcrepe {val} --out FINAL" in res.output
    assert rv.is_dir()
    bench = load_benchmark(val)
    kept = {i for i, (_, v) in verdicts.items() if v == "false"}
    assert set(bench.items.item_id) == kept and bench.items.validated.all()
    report = json.loads((val / "validation_report.json").read_text())
    for t in {t for t, _ in verdicts.values()}:
        mine = [v for tt, v in verdicts.values() if tt == t]
        assert report["by_edit_type"][t]["discard"]["rate"] == pytest.approx(
            sum(v != "false" for v in mine) / len(mine))
    final = tmp_path / "final"
    res = invoke("construct", "sugarcrepe", str(val), "--out", str(final), "--zero-bin",
                 "--no-progress")
    assert res.exit_code == 0, res.output
    assert "calls: 0 made" in res.output
    fb = load_benchmark(final)
    assert fb.items.validated.all() and set(fb.items.item_id) <= kept and len(fb.items) > 0
    def refuse(token):
        raise AssertionError(f"non-JSON token {token}")

    for name in ("manifest.json", "construction.json"):  # standard JSON: no NaN token
        json.loads((final / name).read_text(), parse_constant=refuse)
    extras = fb.manifest.extras
    assert "the paper's order" in extras["order"]
    created = [json.loads(x) for x in (final / "construction_log.jsonl").read_text().splitlines()]
    created = [r for r in created if r.get("event") == "created"]
    assert {r["item"] for r in created} == kept
    qc = extras["qc_report"]
    human = extras["human_validation"]["discard_rate_by_type"]
    for t, entry in qc.items():
        assert entry["human_discard_rate"] == pytest.approx(human[t])
        n = int((bench.items.edit_type == t).sum())
        assert entry["refinement_in"] == n
        assert entry["refinement_kept"] == int((fb.items.edit_type == t).sum())
        assert entry["refinement_discard_rate"] == pytest.approx(1 - entry["refinement_kept"] / n)


def test_unvalidated_folder_is_refused(unrefined, tmp_path):
    _, out = unrefined
    res = invoke("construct", "sugarcrepe", str(out), "--out", str(tmp_path / "f"))
    assert "not a validated negative set" in str(res.exception)  # the CLI prints it, exits 2


def test_one_template_per_type_with_seven_or_more_demonstrations(unrefined):
    """App. D.2: "Each template consists of task instruction for generating the corresponding
    type of hard negatives and several (7 or more) few-shot demonstrations"; Figures 7-9 show
    one per fine-grained type (Replace-Obj/Att/Rel, Swap-Obj/Att, Add-Obj/Att)."""
    _, out = unrefined
    names = set()
    for t, (form, _, _) in TYPES.items():
        step = "swap" if form == "swap" else "new_concept"
        name = prompt_name(step, t)
        names.add(name)
        p = load_prompt(name)
        demos = re.findall(r"^Caption: (?!\$caption)(.+)\n(?:Given: .+\n)?(\{.*\})$", p.user, re.M)
        assert len(demos) >= 7, name
        for caption, reply in demos:
            got = json.loads(reply)
            if form == "swap" and got["possible"]:
                assert got["caption"] != caption and all(c in caption for c in got["concepts"])
            elif form != "swap":
                assert got["new"].lower() not in caption.lower()
    assert len(names) == 7
    used = json.loads((out / "construction.json").read_text())["prompts"]
    assert {n.split("@")[0] for n in used} >= names


def test_bounded_scorer_gap_is_raw_without_sign_fitting(tmp_path):
    """App. D.3: "g_i = M_1(p_i) - M_1(n_i) ... the range of both g(1) and g(2) is [-1, 1]".
    A bounded (probability) scorer's gap is M(p) - M(n) as it is: where the model prefers the
    negative the gap stays negative, even when it does so on most items (a fitted sign would
    flip them all)."""
    from foilbench.audit.blind import oriented_gaps
    from test_fidelity_sugarcrepe import hand_probability, tiny_classifier_dir

    folder = tiny_classifier_dir(tmp_path / "grammar")
    texts = ["a red cube", "cube red a", "the dog runs", "runs dog the", "a blue ball",
             "ball blue a", "the red table", "table the red"]
    probs = {t: hand_probability(folder, t) for t in texts}
    caps = [[texts[k], texts[k + 1]] for k in range(0, 8, 2)]
    want = [probs[p] - probs[n] for p, n in caps]
    assert any(w < 0 for w in want)  # the fixture has negatives the model prefers
    gaps = oriented_gaps(caps, np.full(4, "t"), np.arange(4), f"hf:{folder}", folds=2)
    np.testing.assert_allclose(gaps, want, atol=1e-6)
    flipped = [[n, p] for p, n in caps]
    np.testing.assert_allclose(oriented_gaps(flipped, np.full(4, "t"), np.arange(4),
                                             f"hf:{folder}", folds=2), [-w for w in want],
                               atol=1e-6)


def test_auto_grid_by_hand():
    """Issue 29: a small set leaves 100 x 100 cells unmatched. Gaps a = (.5, -.3, .7, -.6),
    b = (.2, -.25, .9, -.1): on K = 100, 50, 20, 10 no item's cell meets its reflection; on
    K = 4 (bins (-1,-.5] (-.5,0] (0,.5] (.5,1]) item 0 is in (2, 2) and item 1 in its
    reflection (1, 1), items 2 (3, 3) and 3 (0, 1) are unmatched: 2 of 4 kept = half, so
    K = 4 is chosen."""
    k, res = choose_grid(np.array([0.5, -0.3, 0.7, -0.6]), np.array([0.2, -0.25, 0.9, -0.1]),
                         seed=0)
    assert k == 4 and res.kept.tolist() == [0, 1]


def test_small_caption_set_keeps_items_or_says_which_option(tmp_path):
    """Issue 29: "construct sugarcrepe on a small caption set chooses a refinement grid it can
    fill, or says which option to use"."""
    caps = caption_set(tmp_path / "coco")
    res = invoke("construct", "sugarcrepe", str(caps), "--out", str(tmp_path / "a"),
                 "--types", "add_att", "--no-progress")
    said = str(res.exception)  # a ConstructError: the CLI prints it and exits 2
    assert "Algorithm 1 kept no item" in said and "--zero-bin" in said
    # issue 40: the build that Algorithm 1 ended still writes its survival tables
    md = (tmp_path / "a" / "survival.md").read_text()
    assert "(run stopped: Algorithm 1 kept no item;" in md
    assert "| adversarial refinement (Alg. 1) | caption x type | 10 | 0 | 10 | 0.0% |" in md
    res = invoke("construct", "sugarcrepe", str(caps), "--out", str(tmp_path / "b"),
                 "--zero-bin", "--no-progress")
    assert res.exit_code == 0, res.output
    bench = load_benchmark(tmp_path / "b")
    assert len(bench.items) > 0
    refinement = bench.manifest.extras["refinement"]
    assert refinement["grid"] == "auto"
    assert refinement["scorer_kinds"]["length"].startswith("foilbench's offline stand-in")
    assert set(pd.Series({t: r["grid"] for t, r in refinement["by_type"].items()})) <= {
        100, 50, 20, 10, 4, 2}


def test_choice_app_refuses_posts_without_token_and_unlisted_files(unrefined, tmp_path):
    """The validation app keeps the pair review's protections: a POST without the CSRF token
    writes nothing (403); /file serves only the items' images."""
    from starlette.testclient import TestClient

    from foilbench.review.choice_app import create_choice_app

    _, out = unrefined
    session = ChoiceSession(out, tmp_path / "rv")
    client = TestClient(create_choice_app(session), base_url="http://127.0.0.1")
    page = client.get("/")
    token = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text).group(1)
    item = session.units[0].item_id
    assert client.post("/api/decide", json={"item": item, "verdict": "false"}).status_code == 403
    assert session.store.current() == {}
    ok = client.post("/api/decide", json={"item": item, "verdict": "false"},
                     headers={"X-CSRF-Token": token})
    assert ok.status_code == 200 and session.store.current() == {item: "false"}
    bad = client.post("/api/decide", json={"item": item, "verdict": "maybe"},
                      headers={"X-CSRF-Token": token})
    assert bad.status_code == 400 and "unknown verdict" in bad.json()["error"]
    assert client.get("/file", params={"path": session.units[0].image}).status_code == 200
    assert client.get("/file", params={"path": "captions.json"}).status_code == 404
    assert client.get("/file", params={"path": "../coco/captions.json"}).status_code == 404
