"""Current API models end to end against the STRICT provider fake (issue 24): a gpt-5-class text
model runs CompoSET and Auto-Comp (no ``temperature`` sent, room to reason), and thinking VQA
models (Gemini 2.5 with a thinking budget, an OpenAI reasoning model, Claude with extended
thinking) validate Auto-Comp's images; the fake rejects any request off the documented
shapes, and the folder ledger equals what the fake billed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from _strict_providers import StrictProviders
from _strict_scripts import AutocompAnswers, composet_answer, composet_image
from foilbench.cli.main import cli
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.data.format import load_benchmark


@pytest.fixture
def strict(monkeypatch, tmp_path):
    server = StrictProviders()
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    yield server
    server.close()


def test_composet_with_a_gpt5_text_model(strict, tmp_path):
    strict.answer, strict.image = composet_answer, composet_image
    out = tmp_path / "cs"
    res = CliRunner().invoke(cli, [
        "construct", "composet", "--text", "api:openai:gpt-5?effort=low",
        "--image", "api:gemini-image:gemini-2.5-flash-image",
        "--edit", "api:openai-image:gpt-image-1?quality=low", "--n-scenes", "2",
        "--foils-per-scene", "6", "--min-foils", "0", "--size", "64", "--no-progress", "--out", str(out),
        "--max-spend", "10"])
    assert res.exit_code == 0, res.output
    assert strict.rejected == []
    chats = [json.loads(r["raw"]) for r in strict.requests if r["path"] == "/v1/chat/completions"]
    assert chats and all("temperature" not in b and b["reasoning_effort"] == "low"
                         for b in chats)
    assert len(load_benchmark(out)) > 0
    assert SpendLedger(out, 10).settled == pytest.approx(strict.billed_usd)


@pytest.mark.parametrize("vqa", ["api:gemini:gemini-2.5-flash", "api:openai:gpt-5-mini",
                                 "api:anthropic:claude-sonnet-4-5?thinking=1024"])
def test_autocomp_with_a_gpt5_text_model_and_a_thinking_vqa_model(strict, tmp_path, monkeypatch,
                                                                   vqa):
    import foilbench.construct.backends.world as world

    answers = AutocompAnswers()
    monkeypatch.setattr(world, "tag", answers.record(world.tag))
    strict.answer = answers
    out = tmp_path / "ac"
    res = CliRunner().invoke(cli, [
        "construct", "autocomp", "--text", "api:openai:gpt-5-mini", "--image", "world",
        "--detector", "world", "--vqa", vqa, "--tasks", "color", "--n", "1,2",
        "--concepts", "3", "--no-progress", "--out", str(out), "--max-spend", "5"])
    assert res.exit_code == 0, res.output
    assert strict.rejected == []
    assert "VQA answer" not in res.output  # every thinking answer came back whole and right
    bench = load_benchmark(out)
    assert len(bench) > 0
    assert SpendLedger(out, 5).settled == pytest.approx(strict.billed_usd)
