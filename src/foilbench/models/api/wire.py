"""Each provider's HTTP wire format: building a request and reading its reply (stdlib only).

A message is a list of parts, ``("text", str)`` or ``("image", png_bytes)``, sent as one
user turn in that order. The API key is never part of what these functions return except in
``auth_headers``, which the HTTP layer calls at send time and never logs.

Anthropic  POST {base}/v1/messages, headers x-api-key + anthropic-version, image as a
           base64 ``source`` block; reply ``content[].text``, ``usage.input_tokens`` /
           ``output_tokens``.
OpenAI     POST {base}/v1/chat/completions, Bearer token, image as an ``image_url`` data URL;
           reply ``choices[0].message.content``, ``usage.prompt_tokens`` / ``completion_tokens``
           (reasoning included, ``completion_tokens_details.reasoning_tokens``).
           Reasoning models (o-series, gpt-5): no ``temperature``, ``reasoning_effort``.
Gemini     POST {base}/v1beta/models/{model}:generateContent, header x-goog-api-key, image as
           ``inline_data``; reply ``candidates[0].content.parts[].text``,
           ``usageMetadata.promptTokenCount`` / ``candidatesTokenCount`` + ``thoughtsTokenCount``.
           2.5 models: ``thinkingConfig.thinkingBudget``; 3 models: ``thinkingLevel``.

A system prompt goes where each provider puts it: Anthropic's top-level ``system``, an
OpenAI ``system`` message before the user turn, Gemini's ``systemInstruction``.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import Any

from foilbench.errors import ModelError

ANTHROPIC_VERSION = "2023-06-01"


#: output room a thinking model gets on top of the answer's budget, unless the spec says
DEFAULT_THINKING_TOKENS = 1024


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int
    output_tokens: int  # billed output, thinking included
    finish: str = "stop"  # stop | length | empty | refusal | safety (see parse_reply)
    thinking_tokens: int = 0

    @property
    def usable(self) -> bool:
        return self.finish == "stop"


@dataclass(frozen=True)
class Provider:
    name: str
    key_envs: tuple[str, ...]
    base_env: str
    default_base: str

    def base_url(self) -> str:
        return os.environ.get(self.base_env, self.default_base).rstrip("/")

    def api_key(self) -> str:
        """Read at send time from the environment only; never stored on any object."""
        for env in self.key_envs:
            if os.environ.get(env):
                return os.environ[env]
        raise ModelError(f"{self.name}: no API key; set {' or '.join(self.key_envs)} in the "
                         "environment")


PROVIDERS = {
    "anthropic": Provider("anthropic", ("ANTHROPIC_API_KEY",), "FOILBENCH_ANTHROPIC_BASE_URL",
                          "https://api.anthropic.com"),
    "openai": Provider("openai", ("OPENAI_API_KEY",), "FOILBENCH_OPENAI_BASE_URL",
                       "https://api.openai.com"),
    "gemini": Provider("gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                       "FOILBENCH_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com"),
}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def openai_reasoning(model: str) -> bool:
    """o-series and gpt-5 models reason before answering and refuse ``temperature``/``top_p``
    (the chat-only ``gpt-5-chat`` snapshots do not reason).

    >>> [openai_reasoning(m) for m in ("o3", "o4-mini", "gpt-5-mini", "gpt-5-chat-latest",
    ...                                "gpt-4o")]
    [True, True, True, False, False]
    """
    return (model.startswith(("o1", "o3", "o4", "gpt-5"))
            and not model.startswith("gpt-5-chat"))


def anthropic_adaptive(model: str) -> bool:
    """Claude 5 models think adaptively by default and answer HTTP 400 to a non-default
    ``temperature`` / ``top_p`` / ``top_k`` and to manual ``thinking`` (Claude Sonnet 5 model
    page, platform.claude.com/docs/models/sonnet-5/overview).

    >>> [anthropic_adaptive(m) for m in ("claude-sonnet-5", "claude-opus-5-5",
    ...                                  "claude-sonnet-4-5", "claude-haiku-4-5")]
    [True, True, False, False]
    """
    return model.startswith(("claude-sonnet-5", "claude-opus-5", "claude-haiku-5",
                             "claude-fable"))


def anthropic_adaptive_only(model: str) -> bool:
    """Claude Opus 4.7 and 4.8 (and the Claude 5 family) refuse sampling parameters
    ("`temperature` is deprecated for this model", HTTP 400) and manual thinking: "Claude Opus
    4.7 ... only support adaptive thinking. Manual extended thinking (thinking.type: "enabled"
    with budget_tokens) ... will return a 400 error" (Anthropic's adaptive-thinking page, as
    mirrored in the Amazon Bedrock user guide). Unlike Claude 5, Opus 4.7 / 4.8 think only when
    asked: ``thinking: {"type": "adaptive"}``.

    >>> [anthropic_adaptive_only(m) for m in ("claude-opus-4-7", "claude-opus-4-8",
    ...  "claude-sonnet-5", "claude-opus-4-6", "claude-sonnet-4-5")]
    [True, True, True, False, False]
    """
    return anthropic_adaptive(model) or model.startswith(
        ("claude-opus-4-7", "claude-opus-4-8", "claude-mythos"))


#: Gemini 3's default temperature, which Google asks to keep: "For Gemini 3, we strongly
#: recommend keeping the temperature parameter at its default value of 1.0 ... Changing the
#: temperature (setting it to less than 1.0) may lead to unexpected behavior, looping, or
#: degraded performance" (Gemini 3 prompting guide, cloud.google.com/vertex-ai/generative-ai/
#: docs/start/gemini-3-prompting-guide). Looping burns output tokens up to the limit.
GEMINI3_TEMPERATURE = 1.0


def request_temperature(provider: str, model: str, temperature: float) -> float:
    """The temperature a request to ``model`` carries: Gemini 3 models always get their default
    1.0 (:data:`GEMINI3_TEMPERATURE`), a departure from the papers' greedy 0.0 (and Auto-Comp's
    0.7) for those models only, as Claude's range clamps SugarCrepe's 1.5; others as asked.

    >>> request_temperature("gemini", "gemini-3-pro-preview", 0.0)
    1.0
    >>> request_temperature("gemini", "gemini-2.5-flash", 0.0)
    0.0
    """
    if provider == "gemini" and model.startswith("gemini-3"):
        return GEMINI3_TEMPERATURE
    return temperature


def sends_top_p(provider: str, model: str) -> bool:
    """Whether a request's ``top_p`` is sent. OpenAI chat models take ``top_p`` in [0, 1]
    (Chat Completions reference) but reasoning models refuse it; Gemini takes
    ``generationConfig.topP``. Anthropic: never, because Claude 5 models refuse sampling
    parameters, Claude 4.5 models answer 400 to ``temperature`` and ``top_p`` together
    ("temperature and top_p cannot both be specified for this model"; we always send
    ``temperature`` there), and extended thinking limits ``top_p`` to [0.95, 1]: such a request
    is sampled at the provider's default ``top_p``, and its cache key says so (no ``top_p``).

    >>> [sends_top_p(p, m) for p, m in (("openai", "gpt-4o"), ("openai", "gpt-5-mini"),
    ...  ("gemini", "gemini-2.5-flash"), ("anthropic", "claude-sonnet-4-5"))]
    [True, False, True, False]
    """
    if provider == "openai":
        return not openai_reasoning(model)
    return provider == "gemini"


#: Gemini 2.5 thinkingBudget ranges (Gemini API thinking guide): Pro cannot turn thinking off
GEMINI_25_BUDGETS = {"gemini-2.5-pro": (128, 32768), "gemini-2.5-flash-lite": (512, 24576),
                     "gemini-2.5-flash": (0, 24576)}


def check_thinking_options(provider: str, model: str, effort: str | None,
                           thinking_tokens: int | None, spec: str) -> None:
    """Refuse, before any request, an ``effort=`` / ``thinking=N`` the provider would answer
    with HTTP 400 or silently ignore: ``effort`` is OpenAI's ``reasoning_effort`` (reasoning
    models only; o-series take low/medium/high, ``none`` starts with gpt-5.1) and Gemini 3's
    ``thinkingLevel`` (Pro: low/high; Flash: minimal/low/medium/high; thinking cannot be
    turned off); Gemini 2.5 budgets stay in the model's range (Pro 128-32768, never 0; Flash
    0-24576; Flash-Lite 0 or 512-24576); Claude takes no effort here (``thinking=N``)."""
    def no(why: str) -> ModelError:
        return ModelError(f"{spec}: {why}")

    if effort is not None:
        if provider == "anthropic":
            raise no("effort= is not sent to Claude; ask for thinking with thinking=N")
        if provider == "openai":
            if not openai_reasoning(model):
                raise no(f"effort= is a reasoning model's setting; {model} does not reason")
            if model.startswith(("o1", "o3", "o4")) and effort not in ("low", "medium", "high"):
                raise no(f"effort={effort} is not one of {model}'s levels: low, medium, high")
            if effort == "none" and model.startswith("gpt-5") and not model.startswith(
                    ("gpt-5.", "gpt-5-1", "gpt-5-2")):
                raise no(f"effort=none starts with gpt-5.1; {model} takes minimal, low, "
                         "medium or high")
        if provider == "gemini":
            if not model.startswith("gemini-3"):
                raise no("effort= sets Gemini 3's thinkingLevel; Gemini 2.5 takes thinking=N")
            levels = ("low", "high") if "pro" in model else ("minimal", "low", "medium", "high")
            if effort not in levels:
                raise no(f"effort={effort} is not a thinkingLevel of {model} (Gemini 3 cannot "
                         f"turn thinking off): {', '.join(levels)}")
    if thinking_tokens is None:
        return
    if provider == "openai" and openai_reasoning(model) and thinking_tokens == 0:
        raise no("thinking=0: OpenAI reasoning models always reason; thinking=N sizes the "
                 "room for it (or use effort=)")
    if provider == "gemini":
        for prefix, (lo, hi) in GEMINI_25_BUDGETS.items():
            if model.startswith(prefix):
                if thinking_tokens == 0 and prefix != "gemini-2.5-pro":
                    return  # thinking off
                if not lo <= thinking_tokens <= hi:
                    off = "" if prefix != "gemini-2.5-pro" else " (it cannot turn thinking off)"
                    raise no(f"thinking={thinking_tokens} is outside {model}'s thinking budget "
                             f"of {lo} to {hi} tokens{off}")
                return


def thinks(provider: str, model: str, thinking_tokens: int | None) -> bool:
    """Whether the request must leave output room for thinking tokens."""
    if provider == "openai":
        return openai_reasoning(model)
    if provider == "gemini":
        return model.startswith(("gemini-2.5", "gemini-3"))
    # Anthropic: Claude 5 thinks adaptively; older models only with extended thinking asked
    return anthropic_adaptive(model) or bool(thinking_tokens)


def output_budget(provider: str, model: str, answer_tokens: int,
                  thinking_tokens: int | None) -> tuple[int, int]:
    """(output tokens the request allows, most output tokens it can bill).

    The answer gets ``answer_tokens`` and a thinking model ``thinking_tokens`` more (default
    ``DEFAULT_THINKING_TOKENS``): OpenAI's ``max_completion_tokens`` and Anthropic's
    ``max_tokens`` include reasoning/thinking, so both limits are hard. Gemini's thinking
    budget is guidance ("the model might overflow or underflow the token budget"), so the
    billing bound adds the budget once more on top of ``maxOutputTokens``.

    >>> output_budget("openai", "gpt-5-mini", 32, None), output_budget("openai", "gpt-4o", 32, None)
    ((1056, 1056), (32, 32))
    >>> output_budget("gemini", "gemini-2.5-flash", 32, 512)
    (544, 1056)
    """
    if not thinks(provider, model, thinking_tokens):
        return answer_tokens, answer_tokens
    t = DEFAULT_THINKING_TOKENS if thinking_tokens is None else int(thinking_tokens)
    allowed = answer_tokens + t
    return allowed, allowed + (t if provider == "gemini" else 0)


def build_request(provider: str, model: str, parts: list[tuple[str, Any]], max_tokens: int,
                  system: str = "", temperature: float = 0.0, seed: int | None = None,
                  reasoning_effort: str | None = None, thinking_tokens: int | None = None,
                  top_p: float | None = None) -> tuple[str, dict]:
    """(path after the base URL, JSON body) for one user turn, after an optional system prompt.

    ``max_tokens`` is the answer's budget; thinking models get room on top
    (:func:`output_budget`). ``seed`` is sent where the provider takes one (OpenAI ``seed``,
    Gemini ``generationConfig.seed``); Anthropic has no seed parameter. OpenAI reasoning models
    get no ``temperature`` (they refuse it) and ``reasoning_effort`` when the user set it;
    Anthropic extended thinking (``thinking_tokens`` >= 1024) sends ``thinking`` and no
    ``temperature`` (the two are incompatible); Claude 5 models get neither (adaptive
    thinking, default sampling) and room to think; Claude Opus 4.7 / 4.8 get no sampling
    parameter, and ``thinking: {"type": "adaptive"}`` only when ``thinking_tokens`` is set; Gemini 2.5 gets ``thinkingConfig.
    thinkingBudget``, Gemini 3 ``thinkingConfig.thinkingLevel`` (the effort, default low) and
    always temperature 1.0 (:func:`request_temperature`).
    ``top_p`` is sent only where :func:`sends_top_p` says so.
    """
    if top_p is not None and not 0 < top_p <= 1:
        raise ModelError(f"{provider}:{model}: top_p={top_p!r} must be in (0, 1]")
    allowed, _ = output_budget(provider, model, max_tokens, thinking_tokens)
    if provider == "anthropic":
        content = [{"type": "text", "text": v} if k == "text" else
                   {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                "data": _b64(v)}} for k, v in parts]
        body = {"model": model, "max_tokens": allowed,
                "messages": [{"role": "user", "content": content}]}
        if anthropic_adaptive(model):
            pass  # adaptive thinking, default sampling: room in max_tokens, nothing else
        elif anthropic_adaptive_only(model):
            if thinking_tokens:  # asked to think: adaptively, with thinking=N of room
                body["thinking"] = {"type": "adaptive"}
            # no temperature: these models refuse every sampling parameter
        elif thinking_tokens:
            if thinking_tokens < 1024:
                raise ModelError(f"anthropic:{model}: thinking={thinking_tokens} is below the "
                                 "provider's minimum budget of 1024 tokens")
            body["thinking"] = {"type": "enabled", "budget_tokens": int(thinking_tokens)}
        else:
            body["temperature"] = temperature
        if system:
            body["system"] = system
        return "/v1/messages", body
    if provider == "openai":
        content = [{"type": "text", "text": v} if k == "text" else
                   {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{_b64(v)}"}}
                   for k, v in parts]
        messages = [{"role": "system", "content": system}] if system else []
        body = {"model": model, "max_completion_tokens": allowed,
                "messages": [*messages, {"role": "user", "content": content}]}
        if openai_reasoning(model):
            if reasoning_effort:
                body["reasoning_effort"] = reasoning_effort
        else:
            body["temperature"] = temperature
        if top_p is not None and sends_top_p(provider, model):
            body["top_p"] = top_p
        if seed is not None:
            body["seed"] = seed
        return "/v1/chat/completions", body
    if provider == "gemini":
        gparts = [{"text": v} if k == "text" else
                  {"inline_data": {"mime_type": "image/png", "data": _b64(v)}} for k, v in parts]
        config: dict[str, Any] = {"temperature": request_temperature(provider, model,
                                                                     temperature),
                                  "maxOutputTokens": allowed}
        if model.startswith("gemini-2.5"):
            config["thinkingConfig"] = {"thinkingBudget": allowed - max_tokens}
        elif model.startswith("gemini-3"):
            config["thinkingConfig"] = {"thinkingLevel": reasoning_effort or "low"}
        if seed is not None:
            config["seed"] = seed
        if top_p is not None:
            config["topP"] = top_p
        body = {"contents": [{"role": "user", "parts": gparts}], "generationConfig": config}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        return f"/v1beta/models/{model}:generateContent", body
    raise ModelError(f"unknown API provider {provider!r}; known: {', '.join(PROVIDERS)}")


def auth_headers(provider: str) -> dict[str, str]:
    key = PROVIDERS[provider].api_key()
    if provider == "anthropic":
        return {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}
    if provider == "openai":
        return {"Authorization": f"Bearer {key}"}
    return {"x-goog-api-key": key}


#: Gemini finish reasons that mean the answer was withheld for safety or policy
GEMINI_BLOCKED = frozenset({"SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII",
                            "IMAGE_SAFETY", "LANGUAGE", "OTHER"})


def _finish(text: str, cut: bool, refused: bool, blocked: bool) -> str:
    if blocked:
        return "safety"
    if refused:
        return "refusal"
    if cut:
        return "length"
    return "stop" if text.strip() else "empty"


def parse_reply(provider: str, data: dict) -> Reply:
    """The answer text, token counts and why it ended; a reply of the wrong shape raises.

    ``finish``: ``stop`` (a complete answer), ``length`` (cut at the output limit:
    OpenAI ``finish_reason: length``, Anthropic ``stop_reason: max_tokens``, Gemini
    ``finishReason: MAX_TOKENS``), ``refusal`` (OpenAI ``message.refusal``, Anthropic
    ``stop_reason: refusal``), ``safety`` (OpenAI ``content_filter``, a Gemini block) or
    ``empty``. Output tokens include thinking/reasoning tokens (they bill as output).
    """
    try:
        if provider == "anthropic":
            text = "".join(b.get("text", "") for b in data["content"] if b.get("type") == "text")
            usage = data.get("usage", {})
            stop = data.get("stop_reason")
            return Reply(text, int(usage.get("input_tokens", 0)),
                         int(usage.get("output_tokens", 0)),
                         _finish(text, stop == "max_tokens", stop == "refusal", False))
        if provider == "openai":
            choice = data["choices"][0]
            msg = choice["message"]
            text = msg.get("content") or ""
            usage = data.get("usage", {})
            details = usage.get("completion_tokens_details") or {}
            reason = choice.get("finish_reason")
            return Reply(text, int(usage.get("prompt_tokens", 0)),
                         int(usage.get("completion_tokens", 0)),
                         _finish(text, reason == "length", bool(msg.get("refusal")),
                                 reason == "content_filter"),
                         int(details.get("reasoning_tokens", 0)))
        usage = data.get("usageMetadata", {})
        thoughts = int(usage.get("thoughtsTokenCount", 0))
        billed_in = int(usage.get("promptTokenCount", 0))
        billed_out = int(usage.get("candidatesTokenCount", 0)) + thoughts
        if not data.get("candidates"):  # the prompt itself was blocked
            return Reply("", billed_in, billed_out, "safety", thoughts)
        cand = data["candidates"][0]
        text = "".join(p.get("text", "") for p in cand.get("content", {}).get("parts", [])
                       if not p.get("thought"))
        reason = cand.get("finishReason", "STOP")
        return Reply(text, billed_in, billed_out,
                     _finish(text, reason == "MAX_TOKENS", False, reason in GEMINI_BLOCKED),
                     thoughts)
    except (KeyError, IndexError, TypeError, AttributeError) as e:
        raise ModelError(f"{provider}: unexpected reply shape ({type(e).__name__}: {e})") from None
