"""Each provider's HTTP wire format: building a request and reading its reply (stdlib only).

A message is a list of parts, ``("text", str)`` or ``("image", png_bytes)``, sent as one
user turn in that order. The API key is never part of what these functions return except in
``auth_headers``, which the HTTP layer calls at send time and never logs.

Anthropic  POST {base}/v1/messages, headers x-api-key + anthropic-version, image as a
           base64 ``source`` block; reply ``content[].text``, ``usage.input_tokens`` /
           ``output_tokens``.
OpenAI     POST {base}/v1/chat/completions, Bearer token, image as an ``image_url`` data URL;
           reply ``choices[0].message.content``, ``usage.prompt_tokens`` / ``completion_tokens``.
Gemini     POST {base}/v1beta/models/{model}:generateContent, header x-goog-api-key, image as
           ``inline_data``; reply ``candidates[0].content.parts[].text``,
           ``usageMetadata.promptTokenCount`` / ``candidatesTokenCount``.

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


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int
    output_tokens: int


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


def build_request(provider: str, model: str, parts: list[tuple[str, Any]], max_tokens: int,
                  system: str = "", temperature: float = 0.0, seed: int | None = None
                  ) -> tuple[str, dict]:
    """(path after the base URL, JSON body) for one user turn, after an optional system prompt.

    ``seed`` is sent where the provider takes one (OpenAI ``seed``, Gemini
    ``generationConfig.seed``); Anthropic has no seed parameter.
    """
    if provider == "anthropic":
        content = [{"type": "text", "text": v} if k == "text" else
                   {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                "data": _b64(v)}} for k, v in parts]
        body = {"model": model, "max_tokens": max_tokens, "temperature": temperature,
                "messages": [{"role": "user", "content": content}]}
        if system:
            body["system"] = system
        return "/v1/messages", body
    if provider == "openai":
        content = [{"type": "text", "text": v} if k == "text" else
                   {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{_b64(v)}"}}
                   for k, v in parts]
        messages = [{"role": "system", "content": system}] if system else []
        body = {"model": model, "max_completion_tokens": max_tokens, "temperature": temperature,
                "messages": [*messages, {"role": "user", "content": content}]}
        if seed is not None:
            body["seed"] = seed
        return "/v1/chat/completions", body
    if provider == "gemini":
        gparts = [{"text": v} if k == "text" else
                  {"inline_data": {"mime_type": "image/png", "data": _b64(v)}} for k, v in parts]
        config: dict[str, Any] = {"temperature": temperature, "maxOutputTokens": max_tokens}
        if seed is not None:
            config["seed"] = seed
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


def parse_reply(provider: str, data: dict) -> Reply:
    """The answer text and token counts; a reply of the wrong shape raises ModelError."""
    try:
        if provider == "anthropic":
            text = "".join(b.get("text", "") for b in data["content"] if b.get("type") == "text")
            usage = data.get("usage", {})
            return Reply(text, int(usage.get("input_tokens", 0)),
                         int(usage.get("output_tokens", 0)))
        if provider == "openai":
            text = data["choices"][0]["message"].get("content") or ""
            usage = data.get("usage", {})
            return Reply(text, int(usage.get("prompt_tokens", 0)),
                         int(usage.get("completion_tokens", 0)))
        cand = data["candidates"][0]
        text = "".join(p.get("text", "") for p in cand.get("content", {}).get("parts", []))
        usage = data.get("usageMetadata", {})
        return Reply(text, int(usage.get("promptTokenCount", 0)),
                     int(usage.get("candidatesTokenCount", 0))
                     + int(usage.get("thoughtsTokenCount", 0)))
    except (KeyError, IndexError, TypeError, AttributeError) as e:
        raise ModelError(f"{provider}: unexpected reply shape ({type(e).__name__}: {e})") from None
