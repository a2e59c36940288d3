"""Property (seeded random; hypothesis is not a dependency): whatever SugarCrepe's,
COMPASS's and Auto-Comp's models answer, however long, the bill stays under the dry run's
bound, with and without ``--count-tokens``, and the requests under its call count (issue 40).
Replies are padded to random lengths, some past their output budget: a model that does not
think is not asked again (cut, dropped), so the bound counts one request a call; Auto-Comp's
captions fail their check at random, so concepts use their retries. CompoSET's is in
tests/test_construct_money_plan.py."""

from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner

from _strict_providers import StrictProviders
from _strict_scripts import dry_bound, sugarcrepe_answer
from foilbench.cli.main import cli

PADS = [0, 100, 600, 3000]


@pytest.fixture
def strict(monkeypatch, tmp_path):
    server = StrictProviders()
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    yield server
    server.close()


class RandomSugarcrepe:
    """Random located concepts (a caption's words, sometimes one longer than the caption),
    new concepts (sometimes past 64 bytes), swap verdicts, and padding."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def __call__(self, provider, model, system, prompt, images) -> str:
        reply = json.loads(sugarcrepe_answer(provider, model, system, prompt, images))
        caption = re.findall(r"^Caption: (.*)$", prompt, re.M)[-1]
        words = caption.rstrip(".").split()
        if "concepts" in reply:
            reply["concepts"] = self.rng.sample(words, self.rng.randint(0, min(4, len(words))))
            if self.rng.random() < 0.2:
                reply["concepts"].append("w" * (len(caption) + 1))
        if "new" in reply:
            reply["new"] = self.rng.choice(["zebra", "violet", "n" * 70, words[-1]])
        if "possible" in reply:
            reply = {"possible": self.rng.random() < 0.5, "concepts": words[:2],
                     "caption": " ".join(reversed(words)) + "."}
        reply["note"] = "x" * self.rng.choice(PADS)
        return json.dumps(reply)


class RandomCompass:
    """Random proposal lists (0-15 words, some not a list) and captions, and padding."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def __call__(self, provider, model, system, prompt, images) -> str:
        if "replacement words" in system:
            pool = ["chair", "table", "blue", "green", "under", "behind", "cube", "sphere"]
            reply = {"candidates": self.rng.sample(pool, self.rng.randint(0, len(pool)))}
        else:
            reply = {"caption": self.rng.choice(["A plain picture.", "A red cube on a table."])}
        reply["note"] = "x" * self.rng.choice(PADS)
        return json.dumps(reply)


class RandomAutocomp:
    """Contextual captions that lose their concept (a retry) or run past 150 tokens, VQA
    answers that are wrong or run past their budget, at random."""

    def __init__(self, seed: int) -> None:
        from _strict_scripts import AutocompAnswers

        self.rng, self.right = random.Random(seed), AutocompAnswers()
        self.record = self.right.record

    def __call__(self, provider, model, system, prompt, images) -> str:
        reply = self.right(provider, model, system, prompt, images)
        if "Choose the answer from this list" in prompt:
            if self.rng.random() < 0.2:
                reply = self.rng.choice(re.findall(r"^- (.+)$", prompt, re.M))
        elif self.rng.random() < 0.4:
            reply = "A quiet picture."
        return reply + " " + "x" * self.rng.choice(PADS[:3])


def runs(tmp_path):
    from _construct_helpers import caption_set

    common = ["--no-progress", "--max-spend", "50"]
    return {"sugarcrepe": (RandomSugarcrepe, [
                "sugarcrepe", str(caption_set(tmp_path / "coco")), "--text",
                "api:openai:gpt-4o-mini", "--no-refine", *common]),
            "compass": (RandomCompass, [
                "compass", "--text", "api:anthropic:claude-haiku-4-5", "--n-scenes", "2",
                *common]),
            "autocomp": (RandomAutocomp, [
                "autocomp", "--text", "api:openai:gpt-4o-mini", "--image", "world",
                "--detector", "world", "--vqa", "api:gemini:gemini-2.0-flash", "--tasks",
                "color,position", "--n", "2", "--concepts", "3", *common])}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("method", ["sugarcrepe", "compass", "autocomp"])
def test_the_dry_run_bounds_random_stage_outcomes(strict, tmp_path, monkeypatch, method, seed):
    make, cmd = runs(tmp_path)[method]
    strict.answer = make(seed)
    if method == "autocomp":
        import foilbench.construct.backends.world as world

        monkeypatch.setattr(world, "tag", strict.answer.record(world.tag))
    fit, cuts = strict._answer_fit, []

    def counted(*args):
        text, tokens, cut = fit(*args)
        cuts.append(cut)
        return text, tokens, cut

    strict._answer_fit = counted
    out = tmp_path / "o"
    dry = CliRunner().invoke(cli, ["construct", *cmd, "--out", str(out), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    calls, usd = dry_bound(dry.output)
    counted = CliRunner().invoke(cli, ["construct", *cmd, "--out", str(out), "--dry-run",
                                       "--count-tokens"])
    assert counted.exit_code == 0, counted.output
    _, counted_usd = dry_bound(counted.output)
    strict.requests.clear()  # the count requests (free)
    CliRunner().invoke(cli, ["construct", *cmd, "--out", str(out)])  # may keep nothing
    assert strict.rejected == [] and strict.requests
    assert any(cuts) and not all(cuts)  # the padding cut some replies, not every one
    print(f"{method} seed {seed}: billed ${strict.billed_usd:.4f} over "
          f"{len(strict.requests)} requests ({sum(cuts)} cut); bound ${usd:.4f} over "
          f"{calls} calls, ${counted_usd:.4f} with --count-tokens")
    assert len(strict.requests) <= calls
    assert strict.billed_usd <= counted_usd <= usd
