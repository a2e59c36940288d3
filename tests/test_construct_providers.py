"""Contract tests of the API construction backends against the STRICT provider fake
(tests/_strict_providers.py): current request shapes (reasoning models, thinking budgets,
multipart edits), finish reasons (cut, empty, refusal, safety are never cached; a cut reply is
asked again only when the model thinks), the one retry layer (429 storm, 400), keys masked
before truncation, base URL in the cache key."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from _strict_providers import KEY, StrictProviders
from foilbench.construct.backends.api_common import UnusableReplyError
from foilbench.construct.backends.base import EditRequest, ImageRequest, TextRequest
from foilbench.construct.backends.registry import resolve_backend
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.models.api.spend import SpendCapError
from foilbench.models.api.transport import APIStatusError, RetryPolicy, mask_secrets


@pytest.fixture
def strict(monkeypatch, tmp_path):
    server = StrictProviders()
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    yield server
    server.close()


def make(role, spec, tmp_path, cap=5.0, retries=5, delays=None):
    ledger = SpendLedger(tmp_path / "out", cap)
    policy = RetryPolicy(max_retries=retries, base=0.01,
                         sleep=(delays.append if delays is not None else lambda s: None))
    return resolve_backend(role, spec, ledger=ledger, policy=policy,
                           cache_dir=tmp_path / "cache"), ledger


def ask(backend, prompt="Say yes.", max_tokens=32):
    return backend.complete(TextRequest(prompt=prompt, system="Be brief.", temperature=0.0,
                                        max_tokens=max_tokens, seed=3))


def last_body(strict):
    return json.loads(strict.requests[-1]["raw"])


@pytest.mark.parametrize("model", ["gpt-5-mini", "o4-mini", "gpt-5"])
def test_openai_reasoning_models_get_no_temperature_and_room_to_think(strict, tmp_path, model):
    text, _ = make("text", f"api:openai:{model}?effort=low", tmp_path)
    assert ask(text) == "yes" and strict.rejected == []
    body = last_body(strict)
    assert "temperature" not in body and "top_p" not in body
    assert body["reasoning_effort"] == "low" and body["max_completion_tokens"] == 32 + 1024


def test_the_strict_fake_refuses_temperature_on_a_reasoning_model(strict):
    import urllib.request

    req = urllib.request.Request(
        strict.url + "/v1/chat/completions", method="POST",
        data=json.dumps({"model": "gpt-5", "temperature": 0, "messages": []}).encode(),
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req)
    assert err.value.code == 400 and "temperature" in strict.rejected[-1]


def test_non_reasoning_openai_model_keeps_temperature_and_seed(strict, tmp_path):
    text, _ = make("text", "api:openai:gpt-4o-mini", tmp_path)
    ask(text)
    body = last_body(strict)
    assert body["temperature"] == 0.0 and body["seed"] == 3
    assert body["max_completion_tokens"] == 32 and "reasoning_effort" not in body


def test_gemini_25_gets_a_thinking_budget_and_gemini_3_a_level(strict, tmp_path):
    a, _ = make("text", "api:gemini:gemini-2.5-flash?thinking=512", tmp_path)
    assert ask(a) == "yes"
    config = last_body(strict)["generationConfig"]
    assert config["thinkingConfig"] == {"thinkingBudget": 512}
    assert config["maxOutputTokens"] == 32 + 512
    b, _ = make("text", "api:gemini:gemini-3-pro-preview?effort=high", tmp_path)
    assert ask(b) == "yes"
    assert last_body(strict)["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "high"}
    assert strict.rejected == []


def test_thinking_zero_turns_gemini_flash_thinking_off(strict, tmp_path):
    strict.think_tokens = 0
    text, _ = make("text", "api:gemini:gemini-2.5-flash?thinking=0", tmp_path)
    assert ask(text) == "yes"
    config = last_body(strict)["generationConfig"]
    assert config["thinkingConfig"] == {"thinkingBudget": 0} and config["maxOutputTokens"] == 32


def test_anthropic_extended_thinking_sends_no_temperature(strict, tmp_path):
    text, _ = make("text", "api:anthropic:claude-sonnet-4-5?thinking=2048", tmp_path)
    assert ask(text) == "yes" and strict.rejected == []
    body = last_body(strict)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in body and body["max_tokens"] == 32 + 2048
    assert strict.requests[-1]["headers"]["anthropic-version"] == "2023-06-01"


def test_claude_5_gets_no_sampling_parameters_and_room_to_think(strict, tmp_path):
    text, _ = make("text", "api:anthropic:claude-sonnet-5", tmp_path)
    assert ask(text) == "yes" and strict.rejected == []
    body = last_body(strict)
    assert "temperature" not in body and "thinking" not in body
    assert body["max_tokens"] == 32 + 1024


def test_a_cut_reply_of_a_model_that_does_not_think_is_dropped_not_asked_again(strict,
                                                                             tmp_path):
    """Issue 40: the budget is sized from what was asked, so a reply past it is off task;
    asking again at twice the budget would pay three times for it."""
    strict.answer = lambda *a: "word " * 40  # 50 tokens: cut at 32
    text, ledger = make("text", "api:anthropic:claude-haiku-4-5", tmp_path)
    with pytest.raises(UnusableReplyError, match="cut at its output limit"):
        ask(text)
    assert [json.loads(r["raw"])["max_tokens"] for r in strict.requests] == [32]
    with pytest.raises(UnusableReplyError):
        ask(text)  # not cached: asked again, once
    assert len(strict.requests) == 2
    assert ledger.settled == pytest.approx(strict.billed_usd) and ledger.reserved == 0
    assert text.usage()["unusable_replies"] == {"length": 2}
    assert not text.retries_cut()


def test_a_cut_reply_of_a_thinking_model_is_retried_once_with_twice_the_room(strict,
                                                                             tmp_path):
    """How long a model thinks is not sized from the ask: its cut reply is asked once more
    with twice the answer budget and twice the thinking room, then cached."""
    strict.answer = lambda *a: "word " * 800  # 1,000 tokens: 756 fit after 300 thinking
    text, ledger = make("text", "api:openai:gpt-5-mini", tmp_path)
    assert text.retries_cut()
    assert ask(text).startswith("word")
    sent = [json.loads(r["raw"])["max_completion_tokens"] for r in strict.requests]
    assert sent == [32 + 1024, 64 + 2048]
    ask(text)  # cached now: no third request
    assert len(strict.requests) == 2
    assert ledger.settled == pytest.approx(strict.billed_usd) and ledger.reserved == 0


@pytest.mark.parametrize("provider,model,script,why", [
    ("openai", "gpt-4o", "<REFUSE>", "refusal"),
    ("openai", "gpt-4o", "<SAFETY>", "safety"),
    ("gemini", "gemini-2.5-flash", "<SAFETY>", "safety"),
    ("anthropic", "claude-haiku-4-5", "<EMPTY>", "empty"),
    ("anthropic", "claude-haiku-4-5", "<REFUSE>", "refusal"),
])
def test_unusable_replies_are_billed_dropped_with_their_reason_and_never_cached(
        strict, tmp_path, provider, model, script, why):
    strict.answer = lambda *a: script
    text, ledger = make("text", f"api:{provider}:{model}", tmp_path)
    with pytest.raises(UnusableReplyError, match=why):
        ask(text)
    with pytest.raises(UnusableReplyError):
        ask(text)  # not cached: asked again
    assert len(strict.requests) == 2
    assert strict.billed_usd > 0 and ledger.settled == pytest.approx(strict.billed_usd)
    assert text.usage()["unusable_replies"] == {why: 2}


def test_a_thinking_vqa_model_answers_where_32_tokens_alone_came_back_empty(strict, tmp_path):
    """The issue's case: a thinking model given 32 output tokens spends them thinking."""
    strict.answer = lambda *a: "red"
    vqa, _ = make("vqa", "api:gemini:gemini-2.5-flash", tmp_path)
    image = Image.new("RGB", (64, 64), (200, 30, 30))
    assert vqa.answer(image, "What colour is the mug?", ["red", "blue"]) == "red"
    config = json.loads(strict.requests[-1]["raw"])["generationConfig"]
    # the answer's own budget: "blue" at two bytes a token (2) + the 12-token frame
    assert config["maxOutputTokens"] == 14 + 1024
    # without the thinking room (budget 0 is refused room): the fake thinks 300 tokens first
    starved = StrictProviders(answer=lambda *a: "red")
    try:
        code, _, reply = starved.handle(
            "/v1beta/models/gemini-2.5-flash:generateContent",
            {"x-goog-api-key": KEY, "Content-Type": "application/json"},
            json.dumps({"contents": [{"parts": [{"text": "q"}]}],
                        "generationConfig": {"maxOutputTokens": 32}}).encode())
        assert code == 200 and reply["candidates"][0]["finishReason"] == "MAX_TOKENS"
        assert "content" not in reply["candidates"][0] or not \
            reply["candidates"][0]["content"]["parts"]
    finally:
        starved.close()


def test_openai_gpt_image_edit_is_multipart_with_image_and_mask_files(strict, tmp_path):
    editor, ledger = make("edit", "api:openai-image:gpt-image-1?quality=low", tmp_path)
    image = Image.new("RGB", (64, 48), (10, 20, 30))
    mask = np.zeros((48, 64), bool)
    mask[10:20, 10:20] = True
    out = editor.edit(EditRequest(image=image, instruction="make it red", seed=1, mask=mask))
    assert out.image.size == (64, 48) and strict.rejected == []
    req = strict.requests[-1]
    assert req["headers"]["content-type"].startswith("multipart/form-data; boundary=")
    assert b'name="image"; filename="image.png"' in req["raw"]
    assert b'name="mask"; filename="mask.png"' in req["raw"]
    assert b'name="response_format"' not in req["raw"]
    assert strict.billed_usd > 0 and ledger.settled == pytest.approx(strict.billed_usd)


def test_image_generation_bills_from_usage(strict, tmp_path):
    gen, ledger = make("image", "api:gemini-image:gemini-2.5-flash-image", tmp_path)
    gen.generate(ImageRequest(prompt="a red mug", seed=2, size=(64, 64)))
    assert ledger.settled == pytest.approx(strict.billed_usd)
    assert strict.billed_usd == pytest.approx((tokens_of("a red mug") * 0.3 + 1290 * 30) / 1e6)


def tokens_of(text):
    from _strict_providers import tokens

    return tokens(text)


def test_a_429_storm_sends_retries_plus_one_requests_per_call(strict, tmp_path):
    """Before: 3 engine attempts x 6 transport attempts = 18 requests; now only the transport
    retries (here --retries 2: 3 requests), honouring Retry-After."""
    strict.faults = [(429, {"Retry-After": "7"})] * 50
    delays: list[float] = []
    text, ledger = make("text", "api:openai:gpt-4o-mini", tmp_path, retries=2, delays=delays)
    with pytest.raises(APIStatusError, match="HTTP 429 after 3 request"):
        ask(text)
    assert len(strict.requests) == 3 and delays == [7.0, 7.0]
    assert ledger.total == 0  # an error reply is not billed: the reservation was released


def test_a_400_is_never_retried_and_keeps_its_cause(strict, tmp_path):
    strict.faults = [(400, {})]
    text, _ = make("text", "api:openai:gpt-4o-mini", tmp_path)
    with pytest.raises(APIStatusError, match="HTTP 400 after 1 request"):
        ask(text)
    assert len(strict.requests) == 1


def test_a_key_echoed_near_the_cut_is_masked_before_truncation():
    body = "x" * 280 + KEY + " more"
    shown = mask_secrets(body, [KEY], 300)
    assert KEY[:6] not in shown and shown.endswith("*** more")


def test_the_reply_cache_key_includes_the_base_url(strict, tmp_path, monkeypatch):
    text, _ = make("text", "api:openai:gpt-4o-mini", tmp_path)
    ask(text)
    other = StrictProviders()
    try:
        monkeypatch.setenv("FOILBENCH_OPENAI_BASE_URL", other.url)
        ask(text)  # same request, other endpoint: asked there, not answered from the cache
        assert len(other.requests) == 1
    finally:
        other.close()


def test_requests_lost_to_network_errors_stay_counted_and_never_pass_the_cap(tmp_path,
                                                                              monkeypatch):
    """No reply may still mean billed: each re-send reserves its own worst case first, and the
    lost attempts stay counted at theirs, so the cap stops the re-sends."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("FOILBENCH_OPENAI_BASE_URL", dead)
    probe, _ = make("text", "api:openai:gpt-4o-mini", tmp_path / "probe")
    worst = probe.worst_case(["Say yes.", "Be brief."], [], 32, None)
    text, ledger = make("text", "api:openai:gpt-4o-mini", tmp_path, cap=2.5 * worst,
                        retries=5)
    with pytest.raises(SpendCapError, match="--max-spend"):
        ask(text)
    assert ledger.settled == pytest.approx(2 * worst) and ledger.reserved == 0
    assert ledger.total <= ledger.cap


def test_bad_thinking_and_effort_options_name_the_spec(tmp_path):
    from foilbench.errors import ModelError

    with pytest.raises(ModelError, match=r"api:gemini:gemini-2.5-flash\?thinking=lots.*thinking"):
        make("text", "api:gemini:gemini-2.5-flash?thinking=lots", tmp_path)
    with pytest.raises(ModelError, match="effort"):
        make("vqa", "api:openai:gpt-5?effort=extreme", tmp_path)
    with pytest.raises(ModelError, match="below the provider's minimum budget of 1024"):
        text, _ = make("text", "api:anthropic:claude-haiku-4-5?thinking=100", tmp_path)
        ask(text)


def test_claude_opus_4_7_gets_no_sampling_and_thinks_adaptively_only_when_asked(strict,
                                                                                tmp_path):
    """Opus 4.7 / 4.8 answer 400 to temperature and to thinking.type "enabled"."""
    from foilbench.models.api.wire import build_request

    _, body = build_request("anthropic", "claude-opus-4-7", [("text", "hi")], 32)
    assert "temperature" not in body and "thinking" not in body
    plain, _ = make("text", "api:anthropic:claude-opus-4-8", tmp_path / "a")
    assert ask(plain) == "yes" and strict.rejected == []
    body = last_body(strict)
    assert "temperature" not in body and "thinking" not in body and body["max_tokens"] == 32
    thinking, _ = make("text", "api:anthropic:claude-opus-4-8?thinking=2048", tmp_path / "b")
    assert ask(thinking) == "yes" and strict.rejected == []
    body = last_body(strict)
    assert body["thinking"] == {"type": "adaptive"} and "temperature" not in body
    assert body["max_tokens"] == 32 + 2048


@pytest.mark.parametrize("spec,needle", [
    ("api:gemini:gemini-2.5-pro?thinking=0", r"128 to 32768 tokens \(it cannot turn thinking off"),
    ("api:gemini:gemini-2.5-flash-lite?thinking=100", "512 to 24576"),
    ("api:gemini:gemini-2.5-flash?thinking=30000", "0 to 24576"),
    ("api:gemini:gemini-3-pro-preview?effort=medium", "low, high"),
    ("api:gemini:gemini-3-flash-preview?effort=none", "cannot turn thinking off"),
    ("api:gemini:gemini-2.5-flash?effort=low", "Gemini 2.5 takes thinking=N"),
    ("api:openai:gpt-4o?effort=low", "does not reason"),
    ("api:openai:o4-mini?effort=minimal", "low, medium, high"),
    ("api:openai:gpt-5-mini?effort=none", "starts with gpt-5.1"),
    ("api:openai:gpt-5-mini?thinking=0", "always reason"),
    ("api:anthropic:claude-sonnet-4-5?effort=high", "thinking=N"),
])
def test_thinking_options_a_provider_refuses_are_refused_before_any_request(strict, tmp_path,
                                                                             spec, needle):
    from foilbench.errors import ModelError

    with pytest.raises(ModelError, match=needle):
        make("text", spec, tmp_path)
    assert strict.requests == []


@pytest.mark.parametrize("spec", ["api:gemini:gemini-2.5-flash?thinking=0",
                                  "api:gemini:gemini-2.5-pro?thinking=128",
                                  "api:gemini:gemini-3-flash-preview?effort=minimal",
                                  "api:openai:gpt-5-mini?effort=minimal"])
def test_thinking_options_in_range_pass(strict, tmp_path, spec):
    make("text", spec, tmp_path)  # no error before any request
