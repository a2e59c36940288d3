"""Money details of one request (issue 40): a reply whose usage lacks a count is settled at
that count's reserved bound (it used to be settled at 0: 71-92% of the bill lost), the ledger
keeps each request's token counts and model, and a claim of a dead process is taken over."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import pytest

import _api_fake
from foilbench.construct.backends.base import TextRequest
from foilbench.construct.backends.registry import resolve_backend
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.models.api.prices import PriceBook, token_cost
from foilbench.models.api.transport import RetryPolicy

fake = _api_fake.fake
MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4o", "gemini": "gemini-2.5-flash-lite"}
#: the usage of each provider's reply with its input count dropped (a gateway's habit)
NO_INPUT = {"anthropic": {"usage": {"output_tokens": 30}},
            "openai": {"usage": {"completion_tokens": 30}},
            "gemini": {"usageMetadata": {"candidatesTokenCount": 30}}}


def settles(folder) -> list[dict]:
    rows = [json.loads(x) for x in (folder / ".construct" / "spend.jsonl").read_text()
            .splitlines()]
    return [r for r in rows if r["op"] == "settle"]


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_a_missing_input_count_is_settled_at_its_bound(fake, provider, tmp_path):
    body = _api_fake.reply_body(provider, "a red mug", 1, 30)
    for k in ("usage", "usageMetadata"):
        body.pop(k, None)
    body.update(NO_INPUT[provider])
    fake.script.append((200, {}, body))
    led = SpendLedger(tmp_path, 5.0)
    b = resolve_backend("text", f"api:{provider}:{MODELS[provider]}", ledger=led,
                        policy=RetryPolicy(max_retries=0, timeout=10))
    prompt = "describe the scene " * 50
    assert b.complete(TextRequest(prompt=prompt, system="sys", max_tokens=64)) == "a red mug"
    (row,) = settles(tmp_path)
    bound_in, _ = b.bounds([prompt, "sys"], [], 64, b.thinking)
    assert row["at_bound"] == ["input"] and row["usage"] == {"in": bound_in, "out": 30}
    assert row["model"] == f"{provider}:{MODELS[provider]}"
    price = PriceBook().token_price(provider, MODELS[provider], bound_in)
    assert row["usd"] == pytest.approx(token_cost(price, bound_in, 30))
    assert row["usd"] > token_cost(price, 0, 30)  # not the old settlement at 0 input tokens


def test_a_full_usage_is_settled_as_reported(fake, tmp_path):
    fake.script.append((200, {}, _api_fake.reply_body("openai", "ok", 120, 7)))
    led = SpendLedger(tmp_path, 5.0)
    b = resolve_backend("text", "api:openai:gpt-4o", ledger=led,
                        policy=RetryPolicy(max_retries=0, timeout=10))
    b.complete(TextRequest(prompt="p", max_tokens=16))
    (row,) = settles(tmp_path)
    assert "at_bound" not in row and row["usage"] == {"in": 120, "out": 7}
    assert row["usd"] == pytest.approx(token_cost((2.5, 10.0), 120, 7))


def test_a_claim_of_a_dead_process_is_taken_over_and_a_live_one_waited_for(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        led = SpendLedger(tmp_path, 1.0)
        for pid, key in ((dead.pid, "k-dead"), (live.pid, "k-live")):
            with led._locked():
                led._append({"op": "claim", "key": key, "id": f"c{pid}", "pid": pid,
                             "host": socket.gethostname(), "t": time.time()})
        assert led.claim("k-dead") is None  # ours now: its claimant is gone
        held = led.claim("k-live")
        assert held is not None and held["pid"] == live.pid
        led.unclaim("k-dead")
        other = SpendLedger(tmp_path, 1.0)
        assert other.claim("k-dead") is None  # released: free to claim
        stale = SpendLedger(tmp_path, 1.0, stale_claim_s=0.0)
        assert stale.claim("k-live") is None  # older than stale_claim_s: taken over
    finally:
        live.kill()
        live.wait()


def test_a_second_claim_in_one_process_waits_for_the_first():
    led = SpendLedger(tempfile.mkdtemp(), 1.0)
    assert led.claim("k") is None
    assert led.claim("k")["pid"] == os.getpid()  # another thread waits
    led.unclaim("k")
    assert led.claim("k") is None


def test_gemini_3_is_sent_its_default_temperature(monkeypatch, tmp_path):
    """Google strongly recommends Gemini 3's default 1.0 (below it: looping, which burns output
    tokens to the limit); text and VQA requests to Gemini 3 carry 1.0 whatever the pipeline
    asked, Gemini 2.5 what it asked (through the strict fake)."""
    from PIL import Image

    from _strict_providers import StrictProviders

    strict = StrictProviders()
    strict.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    try:
        led = SpendLedger(tmp_path / "o", 5.0)
        sent = []
        for model in ("gemini-3-pro-preview", "gemini-2.5-flash"):
            for role in ("text", "vqa"):
                b = resolve_backend(role, f"api:gemini:{model}", ledger=led,
                                    policy=RetryPolicy(max_retries=0, timeout=10))
                if role == "text":
                    b.complete(TextRequest(prompt="Say yes.", temperature=0.0, max_tokens=32))
                else:
                    b.answer(Image.new("RGB", (32, 32), 9), "Is it dark?", ["yes", "no"])
                body = json.loads(strict.requests[-1]["raw"])
                sent.append((model, role, body["generationConfig"]["temperature"]))
        assert sent == [("gemini-3-pro-preview", "text", 1.0), ("gemini-3-pro-preview", "vqa", 1.0),
                        ("gemini-2.5-flash", "text", 0.0), ("gemini-2.5-flash", "vqa", 0.0)]
        assert strict.rejected == []
    finally:
        strict.close()


def test_an_image_reply_without_a_count_is_settled_at_its_worst_case():
    from foilbench.construct.backends import api_image_price as pricing

    book = PriceBook()
    full = {"usage": {"input_tokens": 20, "output_tokens": 272}}
    assert pricing.billed(book, "openai-image", "gpt-image-1", "1024x1024", "low", full) > 0
    for usage in ({"output_tokens": 272}, {"input_tokens": 20}):
        assert pricing.billed(book, "openai-image", "gpt-image-1", "1024x1024", "low",
                              {"usage": usage}) is None  # the caller settles the worst case
    for meta in ({"candidatesTokenCount": 1290}, {"promptTokenCount": 10}):
        assert pricing.billed(book, "gemini-image", "gemini-2.5-flash-image", None, None,
                              {"usageMetadata": meta}) is None
