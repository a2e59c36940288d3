"""The dry run's bound against the bill of each method's e2e build (issue 40): measured
through the STRICT provider fakes, answered as a correct model answers each stage
(``_stage_replies``), with and without ``--count-tokens``; the ceilings below are the
measured ratios with small headroom (docs/construct-money.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from _strict_providers import StrictProviders
from _strict_scripts import composet_answer, composet_image, dry_bound, dry_estimate
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


def method_runs(tmp_path: Path, strict) -> dict[str, list[str]]:
    from _construct_helpers import caption_set
    from _stage_replies import compass_reply, sugarcrepe_reply
    from _strict_scripts import AutocompAnswers

    common = ["--no-progress", "--max-spend", "50"]
    return {
        "composet": (composet_answer, ["composet", *SPECS, "--n-scenes", "2",
                                       "--foils-per-scene", "6", "--min-foils", "0", "--size",
                                       "64", *common]),
        "sugarcrepe": (sugarcrepe_reply, ["sugarcrepe", str(caption_set(tmp_path / "coco")),
                                           "--text", "api:openai:gpt-4o-mini", "--no-refine",
                                           *common]),
        "autocomp": (AutocompAnswers(), ["autocomp", "--text", "api:openai:gpt-5-mini",
                                         "--image", "world", "--detector", "world", "--vqa",
                                         "api:gemini:gemini-2.5-flash", "--tasks", "color",
                                         "--n", "1,2", "--concepts", "3", *common]),
        # the paper's configuration: non-thinking models (Auto-Comp used Gemma-3-12B) and
        # its benchmarks' N = 2 and 3 (§3-5; N = 1 is only Table 14's baseline), the default
        "autocomp_paper": (AutocompAnswers(), ["autocomp", "--text", "api:openai:gpt-4o-mini",
                                               "--image", "world", "--detector", "world",
                                               "--vqa", "api:gemini:gemini-2.0-flash",
                                               "--tasks", "color", "--concepts", "3",
                                               *common]),
        "compass": (compass_reply, ["compass", "--text", "api:anthropic:claude-haiku-4-5",
                                     "--n-scenes", "3", *common]),
    }


def failed_calls(out: Path) -> list[str]:
    """Items a stage dropped because their call failed: the fake's script raised (the fake
    then closes the connection), so what a correct model's reply would have cost is missing
    from the bill."""
    log = [json.loads(x) for x in (out / "construction_log.jsonl").read_text().splitlines()]
    return [r["item"] for r in log if r.get("reason") == "call failed"]


#: most bound/billed through the strict fake (issue 40 asks for 3x). CompoSET meets it (its bill
#: is mostly images, priced by formula). The others cannot while the bound stays a bound for
#: every provider: their bill is mostly prompt text, which the bound counts at one token a
#: byte (no tokenizer makes more) and the fake bills at 4 bytes a token, so 4x is their floor;
#: Auto-Comp's is the thinking room of its two thinking models (1,024 tokens each, plus the
#: one retry at twice the room; the fake thinks 300); the paper's non-thinking configuration
#: (``autocomp_paper``) is bounded by its 3 contextual tries a concept at 150 tokens each.
#: Their dry run prints an estimate too, held within 3x of the bill both ways below. These
#: ceilings are the measured ratios with small headroom, so a plan cannot drift back to the
#: flat 512-token budgets and the retry of every cut reply (before: CompoSET 2.7x, SugarCrepe
#: 45.5x, Auto-Comp 22.2x, COMPASS 20.5x). Measured with a correct model's replies
#: (``_stage_replies``): CompoSET 2.48x, SugarCrepe 6.54x -> 5.98x (ASCII budgets at two bytes
#: a token), Auto-Comp 21.81x -> 21.70x (VQA budgets from their choices; paper's models
#: 6.18x at N = 1, 2 -> 4.74x at the paper's N = 2, 3 -> 4.57x), COMPASS 8.17x -> 5.85x (ASCII budgets) -> 5.40x (facts per graph and level).
MOST_BOUND_OVER_BILL = {"composet": 2.6, "sugarcrepe": 6.3, "autocomp": 22.5, "autocomp_paper": 5.0,
                        "compass": 5.7}


@pytest.mark.parametrize("method", ["composet", "sugarcrepe", "autocomp", "autocomp_paper",
                                    "compass"])
def test_the_dry_run_bounds_each_methods_bill(strict, tmp_path, monkeypatch, method):
    answer, cmd = method_runs(tmp_path, strict)[method]
    if method.startswith("autocomp"):
        import foilbench.construct.backends.world as world

        monkeypatch.setattr(world, "tag", answer.record(world.tag))
    strict.answer = answer
    out = tmp_path / method
    dry = CliRunner().invoke(cli, ["construct", *cmd, "--out", str(out), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    calls, usd = dry_bound(dry.output)
    guess = dry_estimate(dry.output)
    res = CliRunner().invoke(cli, ["construct", *cmd, "--out", str(out)])
    assert strict.rejected == []
    assert strict.requests, res.output
    assert failed_calls(out) == []  # a script that raised would lower the bill unseen
    billed = strict.billed_usd
    print(f"{method}: dry-run bound ${usd:.4f} over {calls} calls, estimate ${guess:.4f}; "
          f"billed ${billed:.4f} over {len(strict.requests)} requests; bound/billed "
          f"{usd / billed:.2f}x, estimate/billed {guess / billed:.2f}x")
    assert len(strict.requests) <= calls
    assert billed <= usd
    assert usd <= MOST_BOUND_OVER_BILL[method] * billed
    assert billed / 3 <= guess <= 3 * billed


#: most bound/billed of ``--dry-run --count-tokens`` through the strict fake: each stage's
#: fixed prompt counted by the provider's count endpoint (the fake's own tokenizer), its
#: fields at one token a byte but those known at plan time, counted too (one more count
#: request, the stage's sum bounded from it): SugarCrepe's captions, Auto-Comp's concept
#: captions, questions and choices, COMPASS's words (its kind inside the fixed part). The
#: measured ratios with small headroom, with a correct model's replies: CompoSET 2.48x ->
#: 2.46x (its prompts named), SugarCrepe 3.38x -> 3.29x (captions counted) -> 2.73x (ASCII
#: budgets), COMPASS 6.36x -> 4.04x (ASCII budgets) -> 3.60x (facts per graph and level) ->
#: 3.55x (kind and words counted), Auto-Comp 21.81x -> 21.47x -> 21.36x, its paper's
#: models 3.99x at N = 1, 2 -> 3.13x at the paper's N = 2, 3 -> 2.96x (each VQA request's
#: budget from its longest choice, not a flat 32 tokens). Within 3x: CompoSET, SugarCrepe
#: and Auto-Comp with the paper's (non-thinking) models. Not:
#: COMPASS (its proposals alone are 2.55x: a 128-token budget for ~28-token lists, output
#: priced 5x input; its realisations 11x, bounded at each graph's longest facts for 12
#: planned calls of which 8 are made: a level left unfilled because no primitive of its
#: walks has a valid replacement depends on the proposals' replies, so the plan cannot
#: know it) and Auto-Comp with thinking models (their room; its captions: 3 contextual tries
#: reserved a concept, 150 tokens each, for ~12-token captions), docs/construct-money.md.
MOST_COUNTED_BOUND_OVER_BILL = {"composet": 2.6, "sugarcrepe": 2.9, "autocomp": 22.5,
                                "autocomp_paper": 3.0, "compass": 3.7}


@pytest.mark.parametrize("method", ["composet", "sugarcrepe", "autocomp", "autocomp_paper",
                                    "compass"])
def test_the_counted_dry_run_still_bounds_each_methods_bill(strict, tmp_path, monkeypatch,
                                                            method):
    """``--count-tokens``: the bound, tighter where a plan names its fixed prompts, is still
    at least the bill; the counts are free (the fake bills none) and asked once a prompt."""
    answer, cmd = method_runs(tmp_path, strict)[method]
    if method.startswith("autocomp"):
        import foilbench.construct.backends.world as world

        monkeypatch.setattr(world, "tag", answer.record(world.tag))
    strict.answer = answer
    out = tmp_path / method
    plain = CliRunner().invoke(cli, ["construct", *cmd, "--out", str(out), "--dry-run"])
    counted = CliRunner().invoke(cli, ["construct", *cmd, "--out", str(out), "--dry-run",
                                       "--count-tokens"])
    assert plain.exit_code == 0 and counted.exit_code == 0, counted.output
    _, bound = dry_bound(plain.output)
    calls, usd = dry_bound(counted.output)
    asked = [r["raw"] for r in strict.requests]
    assert strict.billed_usd == 0 and strict.rejected == []
    assert len(asked) == len(set(asked)) == len(strict.counts)  # each prompt counted once
    strict.requests.clear()
    CliRunner().invoke(cli, ["construct", *cmd, "--out", str(out)])
    assert strict.rejected == [] and strict.requests
    assert failed_calls(out) == []
    billed = strict.billed_usd
    print(f"{method}: bound/billed {bound / billed:.2f}x without --count-tokens, "
          f"{usd / billed:.2f}x with ({len(asked)} count request(s))")
    assert len(strict.requests) <= calls
    assert billed <= usd <= bound
    assert usd <= MOST_COUNTED_BOUND_OVER_BILL[method] * billed
    assert asked and "input" in counted.output and usd < bound  # every plan names its prompts


def _find(tree, key: str):
    """The first value under ``key`` anywhere in a JSON tree (None if absent)."""
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        tree = list(tree.values())
    if isinstance(tree, list):
        for x in tree:
            got = _find(x, key)
            if got is not None:
                return got
    return None


def test_the_measured_compass_build_gets_a_correct_models_replies(strict, tmp_path):
    """The bill the ratios above are measured on comes from replies the pipeline takes as
    they are: every word gets 8-12 proposals (none unusable), and every caption the model
    worded passes the structural check without the template fallback."""
    from _stage_replies import compass_reply

    strict.answer = compass_reply
    out = tmp_path / "compass"
    cmd = method_runs(tmp_path, strict)["compass"][1]
    res = CliRunner().invoke(cli, ["construct", *cmd, "--out", str(out)])
    assert res.exit_code == 0, res.output
    counts = _find(json.loads((out / "manifest.json").read_text()), "proposals")
    assert counts["words"] > 0 and counts["proposed"] == counts["words"], counts
    log = [json.loads(x) for x in (out / "construction_log.jsonl").read_text().splitlines()]
    checked = [r["verdicts"] for r in log if r.get("stage") == "structural check"
               and "verdicts" in r]
    assert checked and all(v["template_fallbacks"] == 0 for v in checked)
    def text(content) -> str:
        return content if isinstance(content, str) else "".join(
            p.get("text", "") for p in content)

    sent = [json.loads(r["raw"]) for r in strict.requests]
    lists = [json.loads(compass_reply("anthropic", b["model"], text(b["system"]),
                                      text(b["messages"][-1]["content"]), []))["candidates"]
             for b in sent if "candidates" in text(b["system"])]
    assert len(lists) == counts["words"]
    assert all(8 <= len(x) <= 12 for x in lists)


def test_the_measured_sugarcrepe_build_gets_a_correct_models_replies(strict, tmp_path):
    """Every SugarCrepe reply is taken as it is: the only drops are a correct model's own
    answers (a caption with no attribute, a caption with no exchangeable pair), and each of
    the seven types yields negatives."""
    from _stage_replies import sugarcrepe_reply

    strict.answer = sugarcrepe_reply
    out = tmp_path / "sugarcrepe"
    cmd = method_runs(tmp_path, strict)["sugarcrepe"][1]
    res = CliRunner().invoke(cli, ["construct", *cmd, "--out", str(out)])
    assert res.exit_code == 0, res.output
    log = [json.loads(x) for x in (out / "construction_log.jsonl").read_text().splitlines()]
    reasons = {r["reason"] for r in log if r.get("outcome") == "dropped"}
    assert reasons == {"no attribute in the caption", "no swappable pair (the model says no)"}
    import pandas as pd

    items = pd.read_parquet(out / "items.parquet")
    assert set(items["edit_type"]) == {"replace_obj", "replace_att", "replace_rel",
                                       "swap_obj", "swap_att", "add_obj", "add_att"}
