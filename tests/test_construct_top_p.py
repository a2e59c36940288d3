"""Auto-Comp App. A.6: "We used nucleus sampling with temperature=0.7 and top_p=0.9. For all
tasks, max_new_tokens was set to 150." ``TextRequest.top_p`` (issue 25): keys of requests
without it are unchanged (their cached, paid replies stay valid); it is sent to ``hf-lm:``
sampling, OpenAI chat models and Gemini, never to OpenAI reasoning models or Anthropic."""

from __future__ import annotations

import json

import pytest
import torch
from PIL import Image

from _construct_tiny import save_tiny_gpt2
from _strict_providers import StrictProviders
from foilbench.construct.backends.api_text import APITextBackend
from foilbench.construct.backends.base import TextBackend, TextRequest, call_key
from foilbench.construct.backends.registry import resolve_backend
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.errors import ModelError
from foilbench.models.api.wire import build_request


class B(TextBackend):
    fingerprint = "fp:1"

    def complete(self, request):
        return ""


OLD = TextRequest(prompt="a red cube", system="s", temperature=0.7, max_tokens=150, seed=3,
                  prompt_id="p@1", task={"k": 1})


def test_keys_of_requests_without_top_p_are_unchanged():
    # hashes computed with foilbench before TextRequest had top_p (commit a15a4e3)
    assert call_key(B(), "complete", OLD) == \
        "1ea6d33810c1ff7f11f80d412ca7d050d6d6ac6478577c81582a3dc11eab99da"
    img = TextRequest(prompt="x", images=(Image.new("RGB", (4, 4), (1, 2, 3)),))
    assert call_key(B(), "complete", img) == \
        "4cdc6497b77c868c16d7653275ccb107bba8b7ef4562ad483a8695b6d0212bd7"
    set_ = TextRequest(**{**OLD.__dict__, "top_p": 0.9})
    assert call_key(B(), "complete", set_) != call_key(B(), "complete", OLD)


OLD_API_KEYS = {  # the reply-cache keys of OLD before top_p existed (commit a15a4e3)
    ("openai", "gpt-4o"): "61532e007377d8d9524ca721bdb6474430af2298369571e207709f16c5707595",
    ("gemini", "gemini-2.5-flash"):
        "06a507aa995a5b31b0db47e02edea75fe2f7ae01b8a44621b15074a4272dc5a7",
    ("anthropic", "claude-sonnet-4-5"):
        "7545e66650255989e8218e57afaaeefe0c9734b2139b679af43dafffbd76d99d"}


def _api_key(provider: str, model: str, request: TextRequest, tmp_path) -> str:
    backend = APITextBackend(provider, model, f"api:{provider}:{model}", cache_dir=tmp_path)
    got = {}

    def reply(key, *args, **kwargs):
        got["key"], got["wire"] = key, kwargs
        return type("R", (), {"text": ""})()

    backend._reply = reply
    backend.complete(request)
    return got["key"]


@pytest.mark.parametrize("provider, model", list(OLD_API_KEYS))
def test_api_reply_cache_keys_are_unchanged_and_hold_top_p_only_where_it_is_sent(
        provider, model, tmp_path, monkeypatch):
    for env in ("FOILBENCH_OPENAI_BASE_URL", "FOILBENCH_GEMINI_BASE_URL",
                "FOILBENCH_ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(env, raising=False)
    assert _api_key(provider, model, OLD, tmp_path) == OLD_API_KEYS[(provider, model)]
    with_p = _api_key(provider, model, TextRequest(**{**OLD.__dict__, "top_p": 0.9}), tmp_path)
    assert (with_p != OLD_API_KEYS[(provider, model)]) == (provider != "anthropic")


def test_top_p_on_the_wire_per_provider():
    parts = [("text", "hi")]
    assert build_request("openai", "gpt-4o", parts, 150, top_p=0.9)[1]["top_p"] == 0.9
    assert "top_p" not in build_request("openai", "gpt-5-mini", parts, 150, top_p=0.9)[1]
    assert build_request("gemini", "gemini-2.5-flash", parts, 150,
                         top_p=0.9)[1]["generationConfig"]["topP"] == 0.9
    assert "top_p" not in build_request("anthropic", "claude-sonnet-4-5", parts, 150,
                                        temperature=0.7, top_p=0.9)[1]
    assert "top_p" not in build_request("openai", "gpt-4o", parts, 150)[1]
    for bad in (0.0, 1.5):
        with pytest.raises(ModelError, match="top_p"):
            build_request("gemini", "gemini-2.5-flash", parts, 150, top_p=bad)


def test_top_p_requests_pass_the_strict_fake_of_each_provider(tmp_path, monkeypatch):
    server = StrictProviders(answer=lambda *a: "A red mug stands beside a blue bottle.")
    server.environ(monkeypatch)
    try:
        ledger = SpendLedger(tmp_path / "out", 5.0)
        req = TextRequest(prompt="Concept: a red mug and a blue bottle", temperature=0.7,
                          max_tokens=150, top_p=0.9)
        for provider, model in [("openai", "gpt-4o"), ("openai", "gpt-5-mini"),
                                ("gemini", "gemini-2.5-flash"),
                                ("anthropic", "claude-sonnet-4-5")]:
            backend = APITextBackend(provider, model, f"api:{provider}:{model}", ledger=ledger,
                                     cache_dir=tmp_path / "cache")
            assert backend.complete(req) == "A red mug stands beside a blue bottle."
        assert server.rejected == []
        bodies = [json.loads(r["raw"]) for r in server.requests]
        assert bodies[0]["top_p"] == 0.9 and "top_p" not in bodies[1]
        assert bodies[2]["generationConfig"]["topP"] == 0.9 and "top_p" not in bodies[3]
    finally:
        server.close()


def test_the_strict_fake_refuses_temperature_with_top_p_for_claude_4_5(tmp_path, monkeypatch):
    import urllib.request

    server = StrictProviders(answer=lambda *a: "x")
    server.environ(monkeypatch)
    try:
        from foilbench.models.api.wire import PROVIDERS, auth_headers

        body = {"model": "claude-sonnet-4-5", "max_tokens": 10, "temperature": 0.7,
                "top_p": 0.9, "messages": [{"role": "user",
                                            "content": [{"type": "text", "text": "hi"}]}]}
        req = urllib.request.Request(PROVIDERS["anthropic"].base_url() + "/v1/messages",
                                     json.dumps(body).encode(), method="POST",
                                     headers={**auth_headers("anthropic"),
                                              "content-type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=10)
        assert e.value.code == 400 and "cannot both be specified" in str(server.rejected)
    finally:
        server.close()


def test_hf_lm_samples_from_the_nucleus(tmp_path, monkeypatch):
    """A nucleus of (almost) zero mass keeps only the most likely token, so every seed gives
    the greedy reply; without top_p the seeds sample different replies."""
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    torch.set_num_threads(1)
    lm = resolve_backend("text", f"hf-lm:{save_tiny_gpt2(tmp_path / 'chat', chat=True)}",
                         device="cpu")
    prompt = "rewrite caption : a red cube"
    greedy = lm.complete(TextRequest(prompt, temperature=0.0, max_tokens=8))
    nucleus = {lm.complete(TextRequest(prompt, temperature=1.5, max_tokens=8, seed=s,
                                       top_p=1e-6)) for s in range(4)}
    assert nucleus == {greedy}
    free = {lm.complete(TextRequest(prompt, temperature=1.5, max_tokens=8, seed=s))
            for s in range(4)}
    assert free - {greedy}


def test_autocomp_contextual_requests_carry_a6_top_p(tmp_path):
    from foilbench.construct.autocomp.pipeline import MAX_NEW_TOKENS, TOP_P, AutocompConfig, build
    from foilbench.construct.backends.registry import resolve_backend as resolve
    from foilbench.construct.engine.stages import Context

    seen: list[TextRequest] = []
    template = resolve("text", "template")

    class Recording(TextBackend):
        fingerprint = template.fingerprint

        def complete(self, request):
            seen.append(request)
            return template.complete(request)

    backends = {"text": Recording(), **{r: resolve(r, "world") for r in
                                        ("image", "detector", "vqa")}}
    ctx = Context(tmp_path, backends, progress=False, pipeline="autocomp")
    build(ctx, AutocompConfig(tasks=("color",), ns=(2,), n_concepts=1, size=64))
    ctx.close()
    contextual = [r for r in seen if r.prompt_id.startswith("autocomp.contextual")]
    assert contextual and {(r.top_p, r.temperature, r.max_tokens) for r in contextual} == {
        (TOP_P, 0.7, MAX_NEW_TOKENS)} and TOP_P == 0.9
