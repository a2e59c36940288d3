"""API adapters against a local HTTP server speaking each provider's wire format."""

from __future__ import annotations

import base64
import io
import json
import logging

import pytest
from PIL import Image

import _api_fake
from _api_fake import SECRET, reply_body
from foilbench.errors import ModelError
from foilbench.models.api import from_spec
from foilbench.models.api.prices import dearest_token_price
from foilbench.models.api.prompts import parse_choice
from foilbench.models.api.spend import SpendCapError, price_for
from foilbench.models.api.transport import RetryPolicy

fake = _api_fake.fake  # the fixture, shared with the construction-backend tests


def adapter_for(provider: str, model: str = "m-test", **kw):
    delays: list[float] = []
    adapter = from_spec(f"{provider}:{model}")
    adapter.policy = RetryPolicy(max_retries=kw.get("retries", 3), base=0.5,
                                 sleep=delays.append, timeout=10)
    return adapter, delays


def red() -> Image.Image:
    return Image.new("RGB", (8, 8), (255, 0, 0))


def blue() -> Image.Image:
    return Image.new("RGB", (8, 8), (0, 0, 255))


def decoded_images(provider: str, body: dict) -> list[Image.Image]:
    if provider == "anthropic":
        blocks = [b["source"]["data"] for b in body["messages"][0]["content"]
                  if b["type"] == "image"]
    elif provider == "openai":
        blocks = [b["image_url"]["url"].split(",", 1)[1] for b in body["messages"][0]["content"]
                  if b["type"] == "image_url"]
    else:
        blocks = [p["inline_data"]["data"] for p in body["contents"][0]["parts"]
                  if "inline_data" in p]
    return [Image.open(io.BytesIO(base64.b64decode(b))) for b in blocks]


def all_text(provider: str, body: dict) -> str:
    if provider == "gemini":
        return " ".join(p.get("text", "") for p in body["contents"][0]["parts"])
    return " ".join(b.get("text", "") for b in body["messages"][0]["content"])


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_wire_format_and_answers(fake, provider):
    adapter, _ = adapter_for(provider)
    fake.script = [(200, {}, reply_body(provider, "B")),
                   (200, {}, reply_body(provider, "Answer: A"))]
    assert adapter.choose_caption(red(), ["a red cube", "a blue cube"]) == 1
    assert adapter.choose_image([red(), blue()], "a red cube") == 0
    first, second = fake.requests
    path = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions",
            "gemini": "/v1beta/models/m-test:generateContent"}[provider]
    assert first["path"] == path
    headers = {k.lower(): v for k, v in first["headers"].items()}
    if provider == "anthropic":
        assert headers["x-api-key"] == SECRET and headers["anthropic-version"] == "2023-06-01"
        assert first["body"]["model"] == "m-test" and first["body"]["max_tokens"] == 64
    elif provider == "openai":
        assert headers["authorization"] == f"Bearer {SECRET}"
        assert first["body"]["model"] == "m-test"
    else:
        assert headers["x-goog-api-key"] == SECRET
    (img,) = decoded_images(provider, first["body"])
    assert img.getpixel((0, 0)) == (255, 0, 0)
    assert "A: a red cube" in all_text(provider, first["body"])
    assert [i.getpixel((0, 0)) for i in decoded_images(provider, second["body"])] == [
        (255, 0, 0), (0, 0, 255)]
    assert '"a red cube"' in all_text(provider, second["body"])


def test_retries_honour_retry_after_then_back_off(fake):
    adapter, delays = adapter_for("anthropic")
    fake.script = [(429, {"Retry-After": "2"}, {"error": "rate"}),
                   (500, {}, {"error": "boom"}),
                   (529, {}, {"error": "overloaded"}),
                   (200, {}, reply_body("anthropic", "A"))]
    assert adapter.choose_caption(red(), ["x", "y"]) == 0
    assert len(fake.requests) == 4 and adapter.http_requests == 4
    assert delays[0] == 2.0  # the server's Retry-After
    assert 0.5 * 2 <= delays[1] < 0.5 * 2 * 2  # base * 2^1 * (1 + U[0,1))
    assert 0.5 * 4 <= delays[2] < 0.5 * 4 * 2


def test_client_errors_fail_at_once_and_retries_are_bounded(fake):
    adapter, delays = adapter_for("openai", retries=2)
    fake.script = [(400, {}, {"error": "bad request"})]
    with pytest.raises(ModelError, match="HTTP 400 after 1 request"):
        adapter.choose_caption(red(), ["x", "y"])
    fake.script = [(503, {}, {})] * 3
    with pytest.raises(ModelError, match="HTTP 503 after 3 request"):
        adapter.choose_caption(blue(), ["x", "y"])
    assert len(fake.requests) == 4 and len(delays) == 2


def test_cache_hit_makes_no_request_even_in_a_new_adapter(fake):
    adapter, _ = adapter_for("gemini")
    fake.script = [(200, {}, reply_body("gemini", "B"))]
    assert adapter.choose_caption(red(), ["a", "b"]) == 1
    assert adapter.choose_caption(red(), ["a", "b"]) == 1
    assert len(fake.requests) == 1 and adapter.cache_hits == 1
    again, _ = adapter_for("gemini")
    assert again.choose_caption(red(), ["a", "b"]) == 1
    assert len(fake.requests) == 1 and again.http_requests == 0
    # a different image is a different request
    fake.script = [(200, {}, reply_body("gemini", "A"))]
    assert again.choose_caption(blue(), ["a", "b"]) == 0
    assert len(fake.requests) == 2


def test_spend_cap_refuses_the_call_that_would_pass_it(fake, monkeypatch):
    monkeypatch.setenv("FOILBENCH_API_SPEND_CAP", "5")
    adapter, _ = adapter_for("anthropic", model="claude-3-5-sonnet-20241022")
    assert price_for("anthropic", "claude-3-5-sonnet-20241022") == (3.0, 15.0)
    # 1M input tokens at $3/M = $3 for the first call
    fake.script = [(200, {}, reply_body("anthropic", "A", tokens_in=1_000_000, tokens_out=0))] * 2
    adapter.choose_caption(red(), ["a", "b"])
    assert adapter.spend.spent == pytest.approx(3.0)
    with pytest.raises(SpendCapError, match=r"cap of \$5\.00"):
        adapter.choose_caption(blue(), ["a", "b"])
    assert len(fake.requests) == 1
    assert adapter.choose_caption(red(), ["a", "b"]) == 0  # cached answers still flow


def test_price_table_override(fake, monkeypatch):
    monkeypatch.setenv("FOILBENCH_API_PRICES", json.dumps({"openai:m-test": [1.0, 2.0]}))
    assert price_for("openai", "m-test") == (1.0, 2.0)
    # a dated snapshot is another model (issue 40: gpt-4o-2024-05-13 is not gpt-4o's price)
    assert price_for("openai", "m-test-2025-01-31") == dearest_token_price()
    # another model that merely starts with the name is not priced by it (gpt-5-pro is not
    # gpt-5): it is reserved at the dearest price we know of
    assert price_for("openai", "m-test-pro") == dearest_token_price()
    assert dearest_token_price() >= (150.0, 600.0)
    monkeypatch.setenv("FOILBENCH_API_PRICES", "{not json")
    with pytest.raises(ModelError, match="FOILBENCH_API_PRICES"):
        price_for("openai", "m-test")


def test_keys_never_reach_logs_fingerprints_cache_or_errors(fake, caplog, tmp_path):
    caplog.set_level(logging.DEBUG)
    adapter, _ = adapter_for("openai")
    fake.script = [(429, {"Retry-After": "0"}, {"error": f"echo Bearer {SECRET}"}),
                   (200, {}, reply_body("openai", "A")),
                   (401, {}, {"error": f"bad key {SECRET}"})]
    adapter.choose_caption(red(), ["a", "b"])
    with pytest.raises(ModelError) as err:
        adapter.choose_caption(blue(), ["a", "b"])
    assert SECRET not in str(err.value) and "***" in str(err.value)
    assert SECRET not in caplog.text
    assert SECRET not in adapter.info.fingerprint and SECRET not in json.dumps(adapter.info.extras)
    assert SECRET not in repr(vars(adapter))
    cache_text = (tmp_path / "cache" / "api_responses.jsonl").read_text()
    assert cache_text and SECRET not in cache_text


def test_missing_key_and_bad_specs(fake, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    adapter, _ = adapter_for("anthropic")
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        adapter.choose_caption(red(), ["a", "b"])
    assert fake.requests == []
    with pytest.raises(ModelError, match="Did you mean: anthropic"):
        from_spec("antropic:claude")
    with pytest.raises(ModelError, match="name the model"):
        from_spec("openai:")


def test_gemini_accepts_google_api_key(fake, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", SECRET)
    adapter, _ = adapter_for("gemini")
    fake.script = [(200, {}, reply_body("gemini", "b"))]
    assert adapter.choose_caption(red(), ["a", "b"]) == 1


def test_unparseable_answers_are_none_and_counted(fake):
    adapter, _ = adapter_for("anthropic")
    fake.script = [(200, {}, reply_body("anthropic", "I cannot tell."))]
    assert adapter.choose_caption(red(), ["a", "b"]) is None
    assert adapter.unparseable == 1


@pytest.mark.parametrize("reply,want", [("A", 0), ("b", 1), (" B. ", 1), ("Answer: A", 0),
                                         ("(B)", 1), ("The answer is B.", 1), ("A or B", None),
                                         ("Both", None), ("", None), ("**A**", 0)])
def test_parse_choice(reply, want):
    assert parse_choice(reply) == want


def test_resolve_through_registry(fake):
    from foilbench.models.registry import resolve_model

    adapter = resolve_model("api:openai:gpt-4o-mini")
    assert adapter.family == "api_choice" and adapter.info.spec == "api:openai:gpt-4o-mini"


def test_engine_runs_the_pair_protocol_over_http_and_then_from_cache(fake, tmp_path):
    import pandas as pd

    from foilbench.data.format import Manifest, make_benchmark
    from foilbench.scoring.engine import evaluate

    red().save(tmp_path / "red.png")
    blue().save(tmp_path / "blue.png")
    bench = make_benchmark(Manifest(name="p", kind="pair"), pd.DataFrame([{
        "item_id": "p0", "image_base": "red.png", "image_foil": "blue.png",
        "caption_base": "a red cube", "caption_foil": "a blue cube"}]), tmp_path)
    adapter, _ = adapter_for("anthropic")
    fake.script = [(200, {}, reply_body("anthropic", "A"))] * 8  # always the first option
    result = evaluate(adapter, bench, progress=False)
    assert len(fake.requests) == 8
    assert result.outcomes["i2t"].tolist() == [0.25] and result.outcomes["group"].tolist() == [
        0.0625]
    assert result.stats["first_option_rate"] == 1.0 and result.stats["http_requests"] == 8
    again, _ = adapter_for("anthropic")
    assert evaluate(again, bench, progress=False).outcomes["group"].tolist() == [0.0625]
    assert len(fake.requests) == 8 and again.usage()["cache_hits"] == 8


def test_a_dearer_variant_is_not_priced_as_its_base_model():
    """gpt-5-pro and o3-pro cost about ten times gpt-5 and o3: a paid construction run refuses
    them until priced, and --allow-unpriced reserves them at the known ceiling, never at the
    base model's list price (which would let a call pass the cap)."""
    from foilbench.models.api.prices import PriceBook, PriceError

    book = PriceBook()
    assert book.token_price("openai", "gpt-5") is not None
    assert book.token_price("openai", "gpt-5-2025-08-07") == book.token_price("openai", "gpt-5")
    for model in ("gpt-5-pro", "o3-pro"):
        assert book.token_price("openai", model) is None
        with pytest.raises(PriceError, match=f"openai:{model} has no list price"):
            book.require("openai", model)
        assert PriceBook(allow_unpriced=True).token_price("openai", model) == \
            dearest_token_price()
