"""Auto-Comp's human validation (§6, A.10) as a `foilbench review concepts` phase: a seeded,
balanced sample of validated images, keyboard verdicts over HTTP, the agreement rate."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from foilbench.review.concepts import (
    ConceptChecks,
    ConceptUnit,
    agreement,
    balanced_sample,
    concept_units,
)
from foilbench.review.units import ReviewError


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    from foilbench.construct.autocomp.pipeline import AutocompConfig
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.construct.engine.runner import run_pipeline

    out = tmp_path_factory.mktemp("ac") / "ac"
    backends = {"text": resolve_backend("text", "template"),
                **{r: resolve_backend(r, "world") for r in ("image", "detector", "vqa")}}
    config = AutocompConfig(tasks=("color", "position"), ns=(2,), n_concepts=3, size=48,
                            vocab="paper")
    return run_pipeline("autocomp", config, backends, out, progress=False).benchmark


def _unit(key, task, cond):
    return ConceptUnit(key, f"{key}.png", task, 2, cond, ("cup", "lamp"), ("red", "blue"), "c")


def test_balanced_sample_round_robins_groups_with_the_seed():
    """A.10: "Each evaluator assessed a balanced subset of 200 concepts"; ours: round-robin
    over (task, N, condition) groups, each shuffled with the seed."""
    units = [_unit(f"a{i}", "color", "minimal") for i in range(6)] + \
        [_unit(f"b{i}", "position", "minimal") for i in range(2)]
    got = balanced_sample(units, 4, seed=0)
    assert sorted(u.task for u in got) == ["color", "color", "position", "position"]
    assert [u.key for u in balanced_sample(units, 4, seed=0)] == [u.key for u in got]
    assert len(balanced_sample(units, 50, seed=1)) == 8
    with pytest.raises(ReviewError, match="at least 1"):
        balanced_sample(units, 0, seed=0)


def test_agreement_is_matches_over_decided_by_hand():
    """§6: "our automated VLM judge achieved >94% agreement with humans": every sampled image
    passed the validator, so agreement = match / (match + mismatch); 3 match, 1 mismatch,
    1 unsure, 1 pending -> 3/4 = 75%, Wilson interval around it."""
    units = [_unit(f"u{i}", "color", "minimal") for i in range(6)]
    rep = agreement(units, {"u0": "match", "u1": "match", "u2": "match", "u3": "mismatch",
                            "u4": "unsure"})
    o = rep["overall"]
    assert (o["match"], o["mismatch"], o["unsure"], o["pending"]) == (3, 1, 1, 1)
    assert o["agreement"]["rate"] == 0.75 and o["agreement"]["n"] == 4
    assert o["agreement"]["ci_low"] < 0.75 < o["agreement"]["ci_high"]
    assert agreement(units, {})["overall"]["agreement"]["rate"] is None


def test_sample_is_fixed_on_first_use_and_decisions_persist(bench, tmp_path):
    units = concept_units(bench)
    assert {u.condition for u in units} == {"minimal", "contextual"}
    checks = ConceptChecks(bench, tmp_path, n=5, seed=3)
    keys = [u.key for u in checks.units]
    checks.decide(keys[0], "match")
    checks.decide(keys[0], "mismatch")  # the latest counts
    with pytest.raises(ReviewError, match="verdict must be one of"):
        checks.decide(keys[1], "yes")
    with pytest.raises(ReviewError, match="not an image of this sample"):
        checks.decide("nope/minimal", "match")
    checks.close()
    again = ConceptChecks(bench, tmp_path, n=5, seed=3)
    assert [u.key for u in again.units] == keys
    assert again.current() == {keys[0]: "mismatch"}
    again.close()
    with pytest.raises(ReviewError, match="seed 3 and size 5"):
        ConceptChecks(bench, tmp_path, n=5, seed=4)


def test_concepts_app_over_http(bench, tmp_path):
    from foilbench.review.app import SESSION_COOKIE
    from foilbench.review.concepts_app import create_concepts_app

    checks = ConceptChecks(bench, tmp_path, n=4, seed=0)
    with TestClient(create_concepts_app(checks), base_url="http://127.0.0.1:8767") as c:
        html = c.get("/").text
        token = re.search(r'name="csrf-token" content="([0-9a-f]+)"', html).group(1)
        state = c.get("/api/state").json()
        key = state["units"][0]["key"]
        assert c.get(state["units"][0]["image"]).status_code == 200
        assert c.get("/file?path=../../etc/passwd").status_code == 404
        body = {"key": key, "verdict": "match"}
        assert c.post("/api/decide", json=body).status_code == 403  # no CSRF token
        r = c.post("/api/decide", json=body, headers={"X-CSRF-Token": token})
        assert r.status_code == 200
        assert r.json()["report"]["overall"]["agreement"]["rate"] == 1.0
        c.cookies.clear()
        c.cookies.set(SESSION_COOKIE, "other")
        assert c.post("/api/decide", json=body,
                      headers={"X-CSRF-Token": token}).status_code == 403
    checks.close()


def test_cli_report(bench, tmp_path):
    from foilbench.cli.review_cmd import review

    res = CliRunner().invoke(review, ["concepts", str(bench.root), "--n", "4",
                                      "--review-dir", str(tmp_path), "--report", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["overall"]["images"] == 4 and rep["overall"]["pending"] == 4
