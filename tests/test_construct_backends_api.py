"""API construction backends (text, image generation, image editing, VQA) against a local
HTTP server that speaks each provider's wire format."""

from __future__ import annotations

import base64
import io
import json
import tempfile
from email.parser import BytesParser
from email.policy import HTTP

import numpy as np
import pytest
from PIL import Image

import _api_fake
from _api_fake import SECRET, reply_body
from foilbench.construct.backends.base import EditRequest, ImageRequest, TextRequest
from foilbench.construct.backends.registry import resolve_backend
from foilbench.construct.backends.vqa import UnanswerableError, parse_choice_text
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.errors import ModelError
from foilbench.models.api.prices import PriceBook
from foilbench.models.api.spend import SpendCapError
from foilbench.models.api.transport import RetryPolicy

fake = _api_fake.fake


def ledger(cap: float = 5.0) -> SpendLedger:
    """A fresh folder ledger; the made-up model names here are allowed unpriced."""
    return SpendLedger(tempfile.mkdtemp(), cap, prices=PriceBook(allow_unpriced=True))


def backend(role: str, spec: str, led=None, retries: int = 3):
    delays: list[float] = []
    policy = RetryPolicy(max_retries=retries, base=0.5, sleep=delays.append, timeout=10)
    return resolve_backend(role, spec, policy=policy, ledger=led or ledger()), delays


def multipart_parts(request: dict) -> dict[str, bytes]:
    ctype = {k.lower(): v for k, v in request["headers"].items()}["content-type"]
    msg = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode()
                                              + request["raw"])
    return {p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
            for p in msg.iter_parts()}


def png_b64(color, size=(16, 16)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def gemini_image_reply(color, size=(16, 16), camel=True) -> dict:
    key = "inlineData" if camel else "inline_data"
    return {"candidates": [{"content": {"parts": [
        {"text": "Here you go."}, {key: {"mimeType": "image/png", "data": png_b64(color, size)}}]}}]}


def openai_image_reply(color, size=(16, 16)) -> dict:
    return {"created": 1, "data": [{"b64_json": png_b64(color, size)}]}


def red(size=(16, 16)) -> Image.Image:
    return Image.new("RGB", size, (255, 0, 0))


# ---- text -------------------------------------------------------------------------------

@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_text_wire_format_with_system_temperature_and_seed(fake, provider):
    text, _ = backend("text", f"api:{provider}:m-test")
    fake.script = [(200, {}, reply_body(provider, "  a green cone "))]
    req = TextRequest("Rewrite: a cube", system="You rewrite captions.", temperature=0.7,
                      max_tokens=40, seed=3)
    assert text.complete(req) == "  a green cone "
    (sent,) = fake.requests
    body = sent["body"]
    if provider == "anthropic":
        assert sent["path"] == "/v1/messages"
        assert body["system"] == "You rewrite captions." and body["temperature"] == 0.7
        assert body["max_tokens"] == 40 and "seed" not in body
        assert body["messages"] == [{"role": "user", "content": [
            {"type": "text", "text": "Rewrite: a cube"}]}]
    elif provider == "openai":
        assert sent["path"] == "/v1/chat/completions"
        assert body["messages"][0] == {"role": "system", "content": "You rewrite captions."}
        assert body["messages"][1]["content"] == [{"type": "text", "text": "Rewrite: a cube"}]
        assert body["temperature"] == 0.7 and body["seed"] == 3
        assert body["max_completion_tokens"] == 40
    else:
        assert sent["path"] == "/v1beta/models/m-test:generateContent"
        assert body["systemInstruction"] == {"parts": [{"text": "You rewrite captions."}]}
        assert body["generationConfig"] == {"temperature": 0.7, "maxOutputTokens": 40,
                                            "seed": 3}
    assert SECRET not in text.fingerprint and SECRET not in json.dumps(text.describe())


def test_anthropic_temperature_is_clamped_to_its_range(fake):
    text, _ = backend("text", "api:anthropic:m-test")
    fake.script = [(200, {}, reply_body("anthropic", "x"))]
    text.complete(TextRequest("p", temperature=1.5))
    assert fake.requests[0]["body"]["temperature"] == 1.0
    openai, _ = backend("text", "api:openai:m-test")
    fake.script = [(200, {}, reply_body("openai", "x"))]
    openai.complete(TextRequest("p", temperature=1.5))
    assert fake.requests[1]["body"]["temperature"] == 1.5  # SugarCrepe's 1.5 is in range


def test_text_retries_429_with_retry_after_then_5xx_then_success(fake):
    text, delays = backend("text", "api:openai:m-test")
    fake.script = [(429, {"Retry-After": "3"}, {"error": "rate"}), (502, {}, {"error": "bad"}),
                   (200, {}, reply_body("openai", "ok"))]
    assert text.complete(TextRequest("p")) == "ok"
    assert len(fake.requests) == 3 and text.usage()["http_requests"] == 3
    assert delays[0] == 3.0 and 0.5 * 2 <= delays[1] < 0.5 * 4


def test_text_cache_hit_makes_no_request_even_in_a_new_backend(fake):
    text, _ = backend("text", "api:gemini:m-test")
    fake.script = [(200, {}, reply_body("gemini", "one"))]
    req = TextRequest("p", temperature=1.0, seed=1)
    assert text.complete(req) == "one" and text.complete(req) == "one"
    assert len(fake.requests) == 1 and text.usage()["cache_hits"] == 1
    again, _ = backend("text", "api:gemini:m-test")
    assert again.complete(req) == "one" and len(fake.requests) == 1
    fake.script = [(200, {}, reply_body("gemini", "two"))]
    assert again.complete(TextRequest("p", temperature=1.0, seed=2)) == "two"  # a new sample
    assert len(fake.requests) == 2


def test_text_spend_cap_refuses_and_a_shared_ledger_spans_backends(fake):
    led = ledger(3.0001)
    a, _ = backend("text", "api:anthropic:claude-3-5-sonnet-20241022", led)
    b, _ = backend("text", "api:anthropic:claude-3-5-sonnet-20241022", led)
    fake.script = [(200, {}, reply_body("anthropic", "x", tokens_in=1_000_000, tokens_out=0))]
    a.complete(TextRequest("first", max_tokens=10))  # reserved at its worst case, billed $3
    assert led.settled == pytest.approx(3.0) and led.reserved == 0
    with pytest.raises(SpendCapError, match=r"cap of \$3\.00"):
        b.complete(TextRequest("second"))  # its worst case does not fit in what is left
    assert len(fake.requests) == 1 and led.reserved == 0
    assert b.complete(TextRequest("first", max_tokens=10)) == "x"  # cached answers still flow


def test_cost_per_call_and_concurrency(fake, monkeypatch):
    from foilbench.construct.backends.api_text import DRY_MAX_TOKENS

    text, _ = backend("text", "api:openai:gpt-4o-mini")
    assert text.max_concurrency == 4
    assert text.cost_per_call_usd == pytest.approx(text.dry_run_bound(DRY_MAX_TOKENS))
    monkeypatch.setenv("FOILBENCH_API_CONCURRENCY", "9")
    assert resolve_backend("text", "api:openai:m").max_concurrency == 9
    assert resolve_backend("text", "api:openai:m", max_concurrency=2).max_concurrency == 2
    assert resolve_backend("text", "api:openai:m?concurrency=16").max_concurrency == 16


def test_a_planned_calls_bound_and_estimate_by_hand(fake):
    """Issue 40: the bound is one token a prompt byte (+ the message allowance) at the full
    output budget, with the retry of a cut reply only for a model that thinks; the estimate
    is 4 bytes a token, a quarter of the budget, half the thinking room, no retry."""
    from foilbench.construct.engine.budget import Calls
    from foilbench.models.api.prices import PriceBook

    calls = Calls(1, max_tokens=100, prompt_bytes=4000)
    usd_in, usd_out = (x / 1e6 for x in PriceBook().token_price("openai", "gpt-4o-mini", 4016))
    plain, _ = backend("text", "api:openai:gpt-4o-mini")
    assert not plain.retries_cut()
    assert plain.call_bound(calls) == pytest.approx((4000 + 16) * usd_in + 100 * usd_out)
    assert plain.call_estimate(calls) == pytest.approx(1000 * usd_in + 25 * usd_out)

    usd_in, usd_out = (x / 1e6 for x in PriceBook().token_price("openai", "gpt-5-mini", 4016))
    thinks, _ = backend("text", "api:openai:gpt-5-mini")
    assert thinks.retries_cut()
    first, again = 100 + 1024, 200 + 2048  # answer + thinking room, then twice both
    assert thinks.call_bound(calls) == pytest.approx(
        2 * (4000 + 16) * usd_in + (first + again) * usd_out)
    assert thinks.call_estimate(calls) == pytest.approx(1000 * usd_in + (25 + 512) * usd_out)


def test_the_dry_run_prints_the_bound_then_the_estimate_within_80_columns():
    from foilbench.construct.engine.budget import Calls, estimate

    class Priced:
        spec, cost_per_call_usd, estimate_rule = "api:x:y", 9.0, "a rule"

        def call_bound(self, calls):
            return 0.5

        def call_estimate(self, calls):
            return 0.125

    class Flat:
        spec, cost_per_call_usd = "api:img:z", 0.25

    est = estimate({"a": {"text": Calls(4, max_tokens=10)}, "b": {"image": 2}},
                   {"text": Priced(), "image": Flat()})
    assert est.total_usd == pytest.approx(4 * 0.5 + 2 * 0.25)
    assert est.total_estimate_usd == pytest.approx(4 * 0.125 + 2 * 0.25)  # images at bound
    lines = est.lines()
    total = next(k for k, x in enumerate(lines) if x.startswith("  total"))
    assert lines[total].endswith("at most $2.5000 (cached calls are free)")
    assert lines[total + 1].startswith("  estimate  about $1.0000: a guide, not a bound")
    assert "a rule; other calls at their bound" in " ".join(x.strip() for x in lines[total:])
    assert max(len(x) for x in lines) <= 80


def test_bad_specs_and_options(fake):
    with pytest.raises(ModelError, match="Did you mean: anthropic"):
        resolve_backend("text", "api:antropic:m")
    with pytest.raises(ModelError, match="name the model"):
        resolve_backend("image", "api:openai-image:")
    with pytest.raises(ModelError, match="unknown image provider 'openai'"):
        resolve_backend("image", "api:openai:gpt-image-1")
    with pytest.raises(ModelError, match="unknown backend option"):
        resolve_backend("text", "api:openai:m", temprature=1)
    with pytest.raises(ModelError, match="size=.* must look like WxH"):
        resolve_backend("image", "api:openai-image:gpt-image-1?size=big")


# ---- images -----------------------------------------------------------------------------

def test_gemini_image_generation(fake):
    gen, _ = backend("image", "api:gemini-image:gemini-2.5-flash-image")
    fake.script = [(200, {}, gemini_image_reply((0, 0, 255)))]
    img = gen.generate(ImageRequest("a blue cube", seed=7, size=(32, 24)))
    assert img.mode == "RGB" and img.size == (32, 24) and img.getpixel((5, 5)) == (0, 0, 255)
    (sent,) = fake.requests
    assert sent["path"] == "/v1beta/models/gemini-2.5-flash-image:generateContent"
    assert {k.lower(): v for k, v in sent["headers"].items()}["x-goog-api-key"] == SECRET
    config = sent["body"]["generationConfig"]
    assert config["responseModalities"] == ["TEXT", "IMAGE"] and config["seed"] == 7
    assert config["imageConfig"] == {"aspectRatio": "4:3"}
    assert sent["body"]["contents"][0]["parts"] == [{"text": "a blue cube"}]
    assert gen.cost_per_call_usd > 0.039  # at least one image's list price


def test_gemini_image_edit_sends_the_image_and_reads_snake_case(fake):
    ed, _ = backend("edit", "api:gemini-image:m")
    fake.script = [(200, {}, gemini_image_reply((0, 255, 0), size=(8, 8), camel=False))]
    out = ed.edit(EditRequest(red(), "make the cube green", seed=1))
    assert out.image.size == (16, 16) and out.image.getpixel((3, 3)) == (0, 255, 0)
    assert out.mask is None
    parts = fake.requests[0]["body"]["contents"][0]["parts"]
    sent = Image.open(io.BytesIO(base64.b64decode(parts[0]["inline_data"]["data"])))
    assert sent.getpixel((0, 0)) == (255, 0, 0) and parts[1] == {"text": "make the cube green"}
    assert "imageConfig" not in fake.requests[0]["body"]["generationConfig"]


def test_gemini_reply_without_image_raises_with_its_text(fake):
    gen, _ = backend("image", "api:gemini-image:m")
    fake.script = [(200, {}, {"candidates": [{"finishReason": "SAFETY", "content": {
        "parts": [{"text": "I can't draw that."}]}}]})]
    with pytest.raises(ModelError, match="no image .*SAFETY.*can't draw"):
        gen.generate(ImageRequest("x"))


@pytest.mark.parametrize("model,size,fmt", [("gpt-image-1", "1536x1024", None),
                                            ("dall-e-3", "1792x1024", "b64_json"),
                                            ("dall-e-2", "512x512", "b64_json")])
def test_openai_image_generation(fake, model, size, fmt):
    gen, _ = backend("image", f"api:openai-image:{model}")
    fake.script = [(200, {}, openai_image_reply((9, 9, 9)))]
    img = gen.generate(ImageRequest("a cube", size=(512, 384) if model != "dall-e-2"
                                    else (300, 300)))
    assert img.getpixel((0, 0)) == (9, 9, 9)
    (sent,) = fake.requests
    assert sent["path"] == "/v1/images/generations"
    assert {k.lower(): v for k, v in sent["headers"].items()}["authorization"] == (
        f"Bearer {SECRET}")
    body = sent["body"]
    assert body["model"] == model and body["prompt"] == "a cube" and body["n"] == 1
    assert body["size"] == size and body.get("response_format") == fmt


def test_openai_gpt_image_edit_is_multipart_with_mask(fake):
    ed, _ = backend("edit", "api:openai-image:gpt-image-1?quality=low")
    mask = np.zeros((16, 16), dtype=bool)
    mask[4:8, 2:6] = True
    fake.script = [(200, {}, openai_image_reply((1, 2, 3), size=(1024, 1024)))]
    out = ed.edit(EditRequest(red(), "remove the cube", mask=mask))
    assert out.image.size == (16, 16)  # resized back to the input
    parts = multipart_parts(fake.requests[0])
    assert fake.requests[0]["path"] == "/v1/images/edits" and parts["quality"] == b"low"
    assert parts["size"] == b"1024x1024" and parts["prompt"] == b"remove the cube"
    assert "response_format" not in parts
    image = Image.open(io.BytesIO(parts["image"]))
    assert image.getpixel((0, 0)) == (255, 0, 0)
    alpha = np.asarray(Image.open(io.BytesIO(parts["mask"])).convert("RGBA"))[..., 3]
    assert (alpha[mask] == 0).all() and (alpha[~mask] == 255).all()
    with pytest.raises(ModelError, match="does not match the image"):
        ed.edit(EditRequest(red(), "x", mask=np.zeros((4, 4), dtype=bool)))


def test_openai_dalle2_edit_is_multipart(fake):
    ed, _ = backend("edit", "api:openai-image:dall-e-2")
    fake.script = [(200, {}, openai_image_reply((4, 5, 6)))]
    ed.edit(EditRequest(red(), "paint it blue", mask=np.ones((16, 16), dtype=bool)))
    sent = fake.requests[0]
    ctype = {k.lower(): v for k, v in sent["headers"].items()}["content-type"]
    assert ctype.startswith("multipart/form-data; boundary=")
    raw = sent["raw"]
    for field in (b'name="prompt"\r\n\r\npaint it blue', b'name="model"\r\n\r\ndall-e-2',
                  b'name="response_format"\r\n\r\nb64_json', b'name="size"\r\n\r\n256x256',
                  b'name="image"; filename="image.png"', b'name="mask"; filename="mask.png"'):
        assert field in raw


def test_image_retries_cache_and_spend_cap(fake):
    led = ledger(0.015)
    gen, delays = backend("image", "api:openai-image:gpt-image-1?quality=low", led)
    fake.script = [(429, {"Retry-After": "1"}, {}), (503, {}, {}),
                   (200, {}, openai_image_reply((7, 7, 7)))]
    req = ImageRequest("a cube", seed=1, size=(16, 16))
    worst = gen.impl.worst_case("a cube", (16, 16), None, False)
    assert worst == pytest.approx((272 * 40 + (6 + 16) * 5) / 1e6)  # low 1024x1024 + prompt
    assert gen.generate(req).getpixel((0, 0)) == (7, 7, 7)
    assert len(fake.requests) == 3 and delays[0] == 1.0
    assert led.settled == pytest.approx(worst)  # the reply has no usage: the worst case stands
    again, _ = backend("image", "api:openai-image:gpt-image-1?quality=low", led)
    assert again.generate(req).getpixel((0, 0)) == (7, 7, 7)  # from the PNG cache
    assert len(fake.requests) == 3 and again.usage()["cache_hits"] == 1
    with pytest.raises(SpendCapError):
        gen.generate(ImageRequest("a cone", seed=1, size=(16, 16)))  # 2 x 0.011 > 0.015
    assert len(fake.requests) == 3


def test_image_errors_fail_after_bounded_retries(fake):
    led = ledger()
    gen, delays = backend("image", "api:openai-image:gpt-image-1", led, retries=1)
    fake.script = [(500, {}, {}), (500, {}, {})]
    with pytest.raises(ModelError, match="HTTP 500 after 2 request"):
        gen.generate(ImageRequest("x"))
    assert led.total == 0  # error replies are not billed
    fake.script = [(200, {}, {"data": [{"b64_json": "not base64!"}]})]
    with pytest.raises(ModelError, match="could not be decoded"):
        gen.generate(ImageRequest("y"))
    assert led.reserved == 0  # the undecodable reply was answered, so it counts as billed
    assert led.settled == pytest.approx(gen.impl.worst_case("y", (256, 256), None, False))


# ---- VQA --------------------------------------------------------------------------------

@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_api_vqa_parses_the_answer_against_the_choices(fake, provider):
    vqa, _ = backend("vqa", f"api:{provider}:m")
    fake.script = [(200, {}, reply_body(provider, "The cube is dark red.")),
                   (200, {}, reply_body(provider, "red or blue, hard to say"))]
    assert vqa.answer(red(), "What colour is the cube?", ["red", "dark red", "blue"]) == (
        "dark red")
    assert "- dark red" in json.dumps(fake.requests[0]["body"])
    with pytest.raises(UnanswerableError, match="names none or several"):
        vqa.answer(red(), "What colour is the sphere?", ["red", "blue"])
    assert vqa.answer(red(), "What colour is the cube?", ["red", "dark red", "blue"]) == (
        "dark red")
    assert len(fake.requests) == 2  # the third question came from the cache
    with pytest.raises(ModelError, match="at least two choices"):
        vqa.answer(red(), "q", ["red"])


@pytest.mark.parametrize("reply,want", [("Yes", "yes"), ("no.", "no"), ("Answer: left", "left"),
                                        ("It is to the LEFT of the cone", "left"),
                                        ("left or right", None), ("purple", None), ("", None)])
def test_parse_choice_text(reply, want):
    assert parse_choice_text(reply, ["yes", "no", "left", "right"]) == want


def test_keys_never_reach_the_caches(fake, tmp_path):
    text, _ = backend("text", "api:openai:m")
    gen, _ = backend("image", "api:gemini-image:m")
    fake.script = [(200, {}, reply_body("openai", "x")), (200, {}, gemini_image_reply((1, 1, 1)))]
    text.complete(TextRequest("p"))
    gen.generate(ImageRequest("p"))
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert len(files) == 2
    assert all(SECRET.encode() not in p.read_bytes() for p in files)


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_text_request_images_go_first_in_the_user_turn_and_into_the_cache_key(fake, provider):
    text, _ = backend("text", f"api:{provider}:m-test")
    assert text.accepts_images
    fake.script = [(200, {}, reply_body(provider, r)) for r in ("seen", "other", "plain")]
    with_red = TextRequest("Caption the scene.", images=(red(),))
    assert text.complete(with_red) == "seen"
    assert text.complete(TextRequest("Caption the scene.", images=(red(),))) == "seen"  # cached
    blue = Image.new("RGB", (16, 16), (0, 0, 255))
    assert text.complete(TextRequest("Caption the scene.", images=(blue,))) == "other"
    assert text.complete(TextRequest("Caption the scene.")) == "plain"
    assert len(fake.requests) == 3
    body = fake.requests[0]["body"]
    if provider == "anthropic":
        first, second = body["messages"][0]["content"]
        assert first["type"] == "image" and second == {"type": "text",
                                                       "text": "Caption the scene."}
        sent = base64.b64decode(first["source"]["data"])
    elif provider == "openai":
        first, second = body["messages"][0]["content"]
        assert first["type"] == "image_url" and second["type"] == "text"
        sent = base64.b64decode(first["image_url"]["url"].split(",", 1)[1])
    else:
        first, second = body["contents"][0]["parts"]
        assert second == {"text": "Caption the scene."}
        sent = base64.b64decode(first["inline_data"]["data"])
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(sent)).convert("RGB")),
                          np.asarray(red()))
