"""The strict fake's token-count endpoints (free: never billed), written from the providers'
public references:

- Anthropic ``POST /v1/messages/count_tokens`` (platform.claude.com/docs/en/api/messages/
  count_tokens): the Messages headers; ``model`` and ``messages`` required; the Messages
  body less ``max_tokens`` (which it refuses here, as an unknown field); reply
  ``{"input_tokens": N}``.
- OpenAI ``POST /v1/responses/input_tokens`` (developers.openai.com/api/reference/resources/
  responses/subresources/input_tokens): Bearer key; ``model``, ``input``, ``instructions``;
  reply ``{"object": "response.input_tokens", "input_tokens": N}``.
- Gemini ``POST /v1beta/models/{model}:countTokens`` (ai.google.dev/api/tokens):
  ``x-goog-api-key``; ``contents`` or ``generateContentRequest`` (with its own ``model``),
  never both; reply ``{"totalTokens": N}``.

The count is the fake's own tokenizer (:func:`_strict_common.tokens`) of the system and user
text, exactly what its generation endpoints bill as input for the same text.
"""

from __future__ import annotations

import re

from _strict_common import KEY, Rejected, _json, _only, bearer, tokens

ANTHROPIC_COUNT_FIELDS = {"model", "messages", "system", "thinking", "tools", "tool_choice"}
OPENAI_COUNT_FIELDS = {"model", "input", "instructions", "conversation", "previous_response_id",
                       "reasoning", "text", "tools", "tool_choice", "parallel_tool_calls",
                       "truncation"}
GEMINI_REQUEST_FIELDS = {"model", "contents", "systemInstruction", "generationConfig",
                         "safetySettings", "tools", "toolConfig", "cachedContent"}


def _gemini_text(contents: list) -> str:
    text = ""
    for content in contents:
        _only("gemini.content", content, {"role", "parts"})
        for part in content["parts"]:
            _only("gemini.part", part, {"text"})
            text += part["text"]
    return text


class StrictCounts:
    """Mixed into the strict fake: :meth:`count` answers a count path, else None."""

    #: every count asked, (provider, model, tokens)
    counts: list[tuple[str, str, int]]

    def count(self, path: str, headers, raw: bytes):
        if path == "/v1/messages/count_tokens":
            return self._count_anthropic(headers, raw)
        if path == "/v1/responses/input_tokens":
            return self._count_openai(headers, raw)
        m = re.fullmatch(r"/v1beta/models/([\w.\-]+):countTokens", path)
        if m:
            return self._count_gemini(m.group(1), headers, raw)
        return None

    def _counted(self, provider: str, model: str, n: int) -> None:
        self.counts.append((provider, model, n))

    def _count_anthropic(self, headers, raw):
        if headers.get("x-api-key") != KEY:
            raise Rejected(401, "anthropic count: missing or wrong x-api-key")
        if headers.get("anthropic-version") != "2023-06-01":
            raise Rejected(400, "anthropic count: anthropic-version header must be 2023-06-01")
        body = _json(headers, raw, "anthropic count")
        _only("anthropic count", body, ANTHROPIC_COUNT_FIELDS)
        for req in ("model", "messages"):
            if req not in body:
                raise Rejected(400, f"anthropic count: {req} is required")
        prompt = ""
        for msg in body["messages"]:
            _only("anthropic count.message", msg, {"role", "content"})
            for block in msg["content"]:
                _only("anthropic count.text", block, {"type", "text"})
                if block.get("type") != "text":
                    raise Rejected(400, "anthropic count: only text blocks in this fake")
                prompt += block["text"]
        n = tokens(body.get("system", "") + prompt)
        self._counted("anthropic", body["model"], n)
        return 200, {}, {"input_tokens": n}

    def _count_openai(self, headers, raw):
        bearer(headers, "openai count")
        body = _json(headers, raw, "openai count")
        _only("openai count", body, OPENAI_COUNT_FIELDS)
        if "model" not in body:
            raise Rejected(400, "openai count: model is required")
        if not isinstance(body.get("input"), str):
            raise Rejected(400, "openai count: input must be a string in this fake")
        n = tokens(body.get("instructions", "") + body["input"])
        self._counted("openai", body["model"], n)
        return 200, {}, {"object": "response.input_tokens", "input_tokens": n}

    def _count_gemini(self, model: str, headers, raw):
        if headers.get("x-goog-api-key") != KEY:
            raise Rejected(403, "gemini count: missing or wrong x-goog-api-key")
        body = _json(headers, raw, "gemini count")
        _only("gemini count", body, {"contents", "generateContentRequest"})
        if len(body) != 1:
            raise Rejected(400, "gemini count: contents and generateContentRequest are "
                                "exclusive, and one is needed")
        if "contents" in body:
            n = tokens(_gemini_text(body["contents"]))
        else:
            inner = body["generateContentRequest"]
            _only("gemini count.generateContentRequest", inner, GEMINI_REQUEST_FIELDS)
            if inner.get("model") != f"models/{model}":
                raise Rejected(400, "gemini count: generateContentRequest.model must be "
                                    f"models/{model}")
            system = _gemini_text([inner.get("systemInstruction", {"parts": []})])
            n = tokens(system + _gemini_text(inner.get("contents", [])))
        self._counted("gemini", model, n)
        return 200, {}, {"totalTokens": n}
