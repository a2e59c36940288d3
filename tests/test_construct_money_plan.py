"""Plans you can trust (issue 40): a stage keeps at most what it asked for (extra proposals are
cut and logged), so the dry run's call counts and USD bound hold; measured against the STRICT
provider fake, which proposes six foils per scene whatever it is asked. Each method's
measured e2e build, bound against bill, is in test_construct_money_builds.py."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from _strict_providers import StrictProviders
from _strict_scripts import (
    composet_answer,
    composet_image,
    dry_bound,
    sugarcrepe_answer,
)
from foilbench.cli.main import cli

SPECS = ["--text", "api:openai:gpt-5-mini", "--image", "api:gemini-image:gemini-2.5-flash-image",
         "--edit", "api:gemini-image:gemini-2.5-flash-image"]


@pytest.fixture
def strict(monkeypatch, tmp_path):
    server = StrictProviders(answer=composet_answer, image=composet_image)
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    yield server
    server.close()


def test_foils_per_scene_is_enforced_and_the_plan_holds(strict, tmp_path):
    out = tmp_path / "o"
    cmd = ["construct", "composet", *SPECS, "--n-scenes", "2", "--foils-per-scene", "1",
           "--min-foils", "0", "--size", "64", "--no-progress", "--out", str(out),
           "--max-spend", "50"]
    dry = CliRunner().invoke(cli, [*cmd, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    calls, usd = dry_bound(dry.output)
    res = CliRunner().invoke(cli, cmd)
    assert res.exit_code == 0, res.output
    edits = [r for r in strict.requests if ":generateContent" in r["path"]
             and b"inline_data" in r["raw"] + b"inlineData"]
    print(f"--foils-per-scene 1 --n-scenes 2: planned at most {calls} calls, ${usd:.4f}; made "
          f"{len(strict.requests)} requests, billed ${strict.billed_usd:.4f}")
    assert len(strict.requests) <= calls and strict.billed_usd <= usd
    log = [json.loads(x) for x in (out / "construction_log.jsonl").read_text().splitlines()]
    cuts = [r for r in log if r.get("stage") == "foil enumeration (step 4)"
            and r.get("outputs", {}).get("truncated_by_variant")]
    assert len(cuts) == 2 and all(r["outputs"]["truncated_by_variant"] == {"main": 5}
                                  for r in cuts)
    assert all(r["inputs"]["foils_asked"] == 1 for r in cuts)
    assert len(edits) <= 2 * 2  # two scenes, one foil each: one base render and one edit


class RandomComposet:
    """CompoSET answers with random outcomes (seeded): 0-12 foils proposed whatever was asked,
    random self-check verdicts, and replies padded to random lengths, some past their output
    budget (cut, then asked again at twice the budget)."""

    def __init__(self, seed: int) -> None:
        import random

        self.rng = random.Random(seed)

    def __call__(self, provider, model, system, prompt, images) -> str:
        from _construct_fake_api import FOILS, STEPS, ComposetResponder

        step = next(v for k, v in STEPS.items() if k in system)
        if step == "foils":
            k = self.rng.randint(0, 12)
            foils = ComposetResponder.foils(prompt)["foils"]
            reply = {"foils": [foils[i % len(FOILS)] for i in range(k)]}
        elif step == "self_check":
            n = len(re.findall(r"^\d+\. ", prompt, re.M))
            reply = {"verdicts": [{"index": i, "keep": self.rng.random() < 0.7, "issue": ""}
                                  for i in range(n)]}
        else:
            reply = json.loads(composet_answer(provider, model, system, prompt, images))
        reply["note"] = "x" * self.rng.choice([0, 200, 2000, 9000])
        return json.dumps(reply)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_dry_run_bounds_random_stage_outcomes(strict, tmp_path, seed):
    """Property (seeded random; hypothesis is not a dependency): whatever the model proposes
    and however long it answers, the bill stays under the dry run's bound."""
    strict.answer = RandomComposet(seed)
    out = tmp_path / "o"
    cmd = ["construct", "composet", *SPECS, "--n-scenes", "2", "--foils-per-scene", "3",
           "--min-foils", "0", "--size", "64", "--no-progress", "--out", str(out),
           "--max-spend", "50"]
    dry = CliRunner().invoke(cli, [*cmd, "--dry-run"])
    calls, usd = dry_bound(dry.output)
    CliRunner().invoke(cli, cmd)  # may end with no survivor: what was billed still counts
    assert strict.rejected == [] and strict.requests
    print(f"seed {seed}: billed ${strict.billed_usd:.4f} over {len(strict.requests)} "
          f"requests; bound ${usd:.4f} over {calls} calls")
    assert strict.billed_usd <= usd  # a cut reply's second request is in the USD bound


def _openai_sent(request) -> tuple[str, int, int]:
    body = json.loads(request["raw"])
    text = "".join(m["content"] if isinstance(m["content"], str)
                   else "".join(p.get("text", "") for p in m["content"])
                   for m in body["messages"])
    step = next(s for s in ("locate", "new_concept", "compose", "swap")
                if {"locate": "List every", "new_concept": "Give a new",
                    "compose": "Rewrite the caption", "swap": "First decide"}[s] in text)
    return step, len(text.encode("utf-8")), body["max_completion_tokens"]


def test_each_sugarcrepe_request_fits_its_stages_plan_and_asks_for_what_it_needs(
        strict, tmp_path):
    """Issue 40: every request's prompt and output budget are within its stage's plan, and
    the budget is sized from the request's own caption (not a flat 512 tokens)."""
    from _construct_helpers import caption_set
    from _stage_replies import sugarcrepe_reply
    from foilbench.construct.sugarcrepe.pipeline import (
        SugarcrepeConfig,
        answer_tokens,
        plan,
        read_captions,
    )

    strict.answer = sugarcrepe_reply  # every step answered, adds composed too
    captions = caption_set(tmp_path / "coco")
    res = CliRunner().invoke(cli, ["construct", "sugarcrepe", str(captions), "--text",
                                   "api:openai:gpt-4o-mini", "--no-refine", "--no-progress",
                                   "--out", str(tmp_path / "o"), "--max-spend", "5"])
    assert res.exit_code == 0, res.output
    planned = plan(SugarcrepeConfig(captions=captions))
    stage = {"locate": planned["locate concept (T=0)"]["text"],
             "new_concept": planned["new concept (T=1.5)"]["text"],
             "compose": planned["compose (T=0)"]["text"],
             "swap": planned["swap, one step (T=0)"]["text"]}
    sent = [_openai_sent(r) for r in strict.requests]
    for step, calls in stage.items():
        mine = [(b, t) for s, b, t in sent if s == step]
        assert mine and len(mine) <= int(calls)
        assert all(b <= calls.prompt_bytes and t <= calls.max_tokens for b, t in mine)
    assert max(t for *_, t in sent) < 512
    config = SugarcrepeConfig(captions=captions)
    texts = [c["caption"] for c in read_captions(config)]
    assert all(t.isascii() for t in texts)  # so one token per two bytes (twice b / 2)
    sizes = {len(t.encode()) for t in texts}
    assert {t for s, _, t in sent if s == "locate"} == {32 + b for b in sizes}
    assert {answer_tokens("locate", b, ascii=True) for b in sizes} == {32 + b for b in sizes}
    assert {answer_tokens("locate", b) for b in sizes} == {32 + 2 * b for b in sizes}


def test_a_new_concept_past_its_bytes_is_dropped_before_compose(strict, tmp_path):
    """The compose prompt's bound counts a new concept at CONCEPT_BYTES: a longer one is
    dropped with its reason, so no compose request is longer than planned."""
    from _construct_helpers import caption_set
    from foilbench.construct.sugarcrepe.pipeline import CONCEPT_BYTES

    def long_concepts(provider, model, system, prompt, images):
        if "Given:" in prompt[prompt.rfind("Caption:"):]:
            return json.dumps({"new": "z" * (CONCEPT_BYTES + 1)})
        return sugarcrepe_answer(provider, model, system, prompt, images)

    strict.answer = long_concepts
    out = tmp_path / "o"
    CliRunner().invoke(cli, ["construct", "sugarcrepe", str(caption_set(tmp_path / "coco")),
                             "--text", "api:openai:gpt-4o-mini", "--no-refine",
                             "--no-progress", "--types", "replace_obj", "--out", str(out),
                             "--max-spend", "5"])
    log = [json.loads(x) for x in (out / "construction_log.jsonl").read_text().splitlines()]
    drops = [r for r in log if r.get("stage") == "new concept (T=1.5)"
             and r.get("reason") == f"new concept longer than {CONCEPT_BYTES} bytes"]
    assert drops
    assert not any(b"Rewrite the caption" in r["raw"] for r in strict.requests)


def test_composet_steps_4_and_5_ask_for_what_they_need(strict, tmp_path):
    """Issue 40: step 4's budget is the foils asked x one proposal's bytes, step 5's the
    proposals listed x one verdict's (reasoning room on top); a proposal whose listing line
    is longer than FOIL_BYTES is dropped before the self-check, whose prompt the plan bounds
    with it."""
    from _construct_fake_api import STEPS
    from foilbench.construct.composet.plan import FOIL_BYTES, check_tokens, foil_tokens

    def one_long(provider, model, system, prompt, images):
        reply = json.loads(composet_answer(provider, model, system, prompt, images))
        if "foils" in reply:
            reply["foils"][0]["foil_caption"] = "a mug " * 80
        return json.dumps(reply)

    strict.answer = one_long
    out = tmp_path / "o"
    CliRunner().invoke(cli, ["construct", "composet", *SPECS, "--n-scenes", "1",
                             "--foils-per-scene", "2", "--min-foils", "0", "--size", "64",
                             "--no-progress", "--out", str(out), "--max-spend", "50"])
    sent: dict[str, list[int]] = {}
    for r in strict.requests:
        body = json.loads(r["raw"])
        if "messages" not in body:
            continue
        system = body["messages"][0]["content"]
        step = next(v for k, v in STEPS.items() if k in system)
        sent.setdefault(step, []).append(body["max_completion_tokens"])
    log = [json.loads(x) for x in (out / "construction_log.jsonl").read_text().splitlines()]
    long = [r for r in log if r.get("reason") == f"proposal longer than {FOIL_BYTES} bytes"]
    assert len(long) == 1
    assert sent["foils"] == [foil_tokens(2) + 1024] and foil_tokens(2) == 32 + 2 * FOIL_BYTES
    assert sent["self_check"] == [check_tokens(1) + 1024]  # one proposal left to list
