"""A STRICT local fake of the Anthropic, OpenAI and Gemini APIs (http.server on 127.0.0.1 in a
thread), written from the providers' public API references:

- Anthropic Messages (platform.claude.com/docs/en/api/messages): ``x-api-key``,
  ``anthropic-version: 2023-06-01``, JSON; ``max_tokens`` required; ``thinking`` =
  ``{type: enabled, budget_tokens >= 1024, < max_tokens}`` and no ``temperature`` with it;
  reply ``content`` blocks (``thinking`` then ``text``), ``stop_reason`` (end_turn,
  max_tokens, refusal), ``usage.output_tokens`` counting thinking; Claude 4.5 models refuse
  ``temperature`` and ``top_p`` together; Claude Opus 4.7 / 4.8 refuse every sampling
  parameter and any thinking but ``{type: adaptive}`` (which they then use within
  ``max_tokens``).
- OpenAI Chat Completions (developers.openai.com/api/reference/chat): Bearer token, JSON;
  reasoning models (o-series, gpt-5) refuse ``temperature`` / ``top_p`` and ``max_tokens``,
  take ``reasoning_effort``; reply ``finish_reason`` (stop, length, content_filter),
  ``message.refusal``, ``usage.completion_tokens_details.reasoning_tokens`` (reasoning is
  part of ``completion_tokens`` and of ``max_completion_tokens``). Images: generations (JSON;
  GPT image models refuse ``response_format``), edits as multipart/form-data only (``image``
  and ``mask`` files), ``usage`` with input text/image and output tokens.
- Gemini generateContent (ai.google.dev/api/generate-content): ``x-goog-api-key``, JSON;
  ``generationConfig.thinkingConfig`` takes ``thinkingBudget`` (2.5) or ``thinkingLevel``
  (3), never both; reply ``finishReason`` (STOP, MAX_TOKENS, SAFETY), ``usageMetadata.
  thoughtsTokenCount``; thinking tokens count against ``maxOutputTokens``.

The three providers' free token-count endpoints answer too (tests/_strict_counts.py; never
billed, each recorded in ``counts``).

Unknown fields, wrong headers, wrong content types and refused parameters answer HTTP 400 with
a provider-shaped error, and are recorded in ``rejected``. Thinking models think
``think_tokens`` tokens (less when their budget is smaller) before answering; an answer that
does not fit what is left is cut (empty text for a reasoning model that used it all).
``answer(provider, model, system, prompt, images)`` scripts the text; the strings
``"<EMPTY>"``, ``"<REFUSE>"``, ``"<SAFETY>"`` make those replies. ``faults`` is a list of
(status, headers) answered before anything else, one per request. The fake bills every
successful reply from its own price list (:data:`OWN_PRICES`, exact model names, as the
provider bills), then the packaged list for models it does not list itself (``billed_usd``).
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from PIL import Image

from _strict_common import KEY, Rejected, _image_of, _json, _only, bearer, openai_reasoning, tokens
from _strict_counts import StrictCounts
from _strict_images import StrictImages
from foilbench.models.api.prices import PriceBook, token_cost

ANTHROPIC_VERSION = "2023-06-01"
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}
BASE_ENV = {p: f"FOILBENCH_{p.upper()}_BASE_URL" for p in KEY_ENV}

ANTHROPIC_FIELDS = {"model", "max_tokens", "messages", "system", "temperature", "top_p", "top_k",
                    "stop_sequences", "thinking", "metadata", "stream", "tools", "tool_choice"}
OPENAI_CHAT_FIELDS = {"model", "messages", "max_completion_tokens", "max_tokens", "temperature",
                      "top_p", "seed", "reasoning_effort", "n", "stop", "response_format",
                      "user", "stream", "tools", "tool_choice", "logprobs", "frequency_penalty",
                      "presence_penalty"}
GEMINI_FIELDS = {"contents", "systemInstruction", "generationConfig", "safetySettings", "tools",
                 "toolConfig", "cachedContent"}
#: Claude 4.5-generation models answer 400 to temperature and top_p together
CLAUDE_ONE_SAMPLER = ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1",
                      "claude-opus-4-5")
GEMINI_CONFIG = {"temperature", "topP", "topK", "maxOutputTokens", "seed", "stopSequences",
                 "responseModalities", "imageConfig", "thinkingConfig", "candidateCount",
                 "responseMimeType", "responseSchema", "presencePenalty", "frequencyPenalty"}
EFFORTS = {"minimal", "low", "medium", "high", "none"}
#: what the provider bills, by exact model name, whatever foilbench's price list says (USD per
#: million input / output tokens): a dated snapshot is its own model
OWN_PRICES = {"openai:gpt-4o": (2.5, 10.0), "openai:gpt-4o-2024-05-13": (5.0, 15.0),
              "openai:gpt-4o-2024-08-06": (2.5, 10.0), "openai:gpt-5-mini": (0.25, 2.0),
              "anthropic:claude-opus-4-7": (5.0, 25.0),
              "gemini:gemini-3-pro-preview": (2.0, 12.0)}


class StrictProviders(StrictImages, StrictCounts):
    def __init__(self, answer=None, image=None, think_tokens: int = 300) -> None:
        self.answer = answer or (lambda provider, model, system, prompt, images: "yes")
        #: image(prompt, input_image or None, seed) -> PIL image
        self.image = image or (lambda prompt, src, seed: src or Image.new("RGB", (64, 64), 128))
        self.think_tokens = think_tokens
        self.requests: list[dict] = []
        self.rejected: list[str] = []
        self.counts: list[tuple[str, str, int]] = []  # free token counts (_strict_counts)
        self.faults: list[tuple[int, dict]] = []
        #: on_request(path) runs first for every request (a test may kill its client there)
        self.on_request = None
        self.billed_usd = 0.0
        self.prices = PriceBook()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, headers, payload = owner.handle(self.path, self.headers, raw)
                data = json.dumps(payload).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:
                    pass  # the client is gone (killed): the provider billed it all the same

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def environ(self, monkeypatch) -> None:
        for p in KEY_ENV:
            monkeypatch.setenv(KEY_ENV[p], KEY)
            monkeypatch.setenv(BASE_ENV[p], self.url)
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
        monkeypatch.delenv("FOILBENCH_API_SPEND_CAP", raising=False)
        monkeypatch.delenv("FOILBENCH_API_PRICES", raising=False)

    # -- dispatch ---------------------------------------------------------------------------
    def handle(self, path: str, headers, raw: bytes) -> tuple[int, dict, dict]:
        if self.on_request is not None:
            self.on_request(path)
        with self._lock:
            self.requests.append({"path": path, "raw": raw,
                                  "headers": {k.lower(): v for k, v in headers.items()}})
            if self.faults:
                status, extra = self.faults.pop(0)
                return status, extra, {"error": {"message": f"fault {status}"}}
        try:
            if path == "/v1/messages":
                return self._anthropic(headers, raw)
            if path == "/v1/chat/completions":
                return self._openai_chat(headers, raw)
            if path == "/v1/images/generations":
                return self._openai_generate(headers, raw)
            if path == "/v1/images/edits":
                return self._openai_edit(headers, raw)
            counted = self.count(path, headers, raw)  # free token counts (_strict_counts)
            if counted is not None:
                return counted
            m = re.fullmatch(r"/v1beta/models/([\w.\-]+):generateContent", path)
            if m:
                return self._gemini(m.group(1), headers, raw)
            raise Rejected(404, f"no route {path}")
        except Rejected as e:
            with self._lock:
                self.rejected.append(f"{path}: {e}")
            return e.status, {}, {"error": {"type": "invalid_request_error", "message": str(e)}}

    def _bill(self, provider: str, model: str, tin: int, tout: int) -> None:
        price = OWN_PRICES.get(f"{provider}:{model}") or self.prices.token_price(provider, model,
                                                                                  tin)
        if price is None:
            raise Rejected(404, f"model {model} not found")
        with self._lock:
            self.billed_usd += token_cost(price, tin, tout)

    def _think(self, room: int) -> int:
        return min(self.think_tokens, max(room, 0))

    def _answer_fit(self, provider, model, system, prompt, images, room: int):
        """(text, output tokens, cut) for an answer given ``room`` output tokens."""
        text = self.answer(provider, model, system, prompt, images)
        if text in ("<EMPTY>", "<REFUSE>", "<SAFETY>"):
            return text, 1, False
        need = tokens(text)
        if need <= room:
            return text, need, False
        return text.encode()[: max(room, 0) * 4].decode("utf-8", "ignore"), max(room, 0), True

    # -- Anthropic --------------------------------------------------------------------------
    def _anthropic(self, headers, raw):
        if headers.get("x-api-key") != KEY:
            raise Rejected(401, "anthropic: missing or wrong x-api-key")
        if headers.get("anthropic-version") != ANTHROPIC_VERSION:
            raise Rejected(400, "anthropic: anthropic-version header must be 2023-06-01")
        if headers.get("Authorization"):
            raise Rejected(400, "anthropic: use x-api-key, not Authorization")
        body = _json(headers, raw, "anthropic")
        _only("anthropic", body, ANTHROPIC_FIELDS)
        for req in ("model", "max_tokens", "messages"):
            if req not in body:
                raise Rejected(400, f"anthropic: {req} is required")
        max_tokens = body["max_tokens"]
        thinking = body.get("thinking")
        if "temperature" in body and not 0 <= body["temperature"] <= 1:
            raise Rejected(400, "anthropic: temperature must be in [0, 1]")
        if body["model"].startswith(CLAUDE_ONE_SAMPLER) and {"temperature", "top_p"} <= set(body):
            raise Rejected(400, "anthropic: temperature and top_p cannot both be specified for "
                                "this model. Please use only one.")
        adaptive = body["model"].startswith(("claude-sonnet-5", "claude-opus-5", "claude-haiku-5",
                                             "claude-fable"))
        if adaptive and (thinking is not None or {"temperature", "top_p", "top_k"} & set(body)):
            raise Rejected(400, f"anthropic: {body['model']} thinks adaptively: manual thinking "
                                "and sampling parameters are refused")
        budget = max_tokens if adaptive else 0
        only_adaptive = body["model"].startswith(("claude-opus-4-7", "claude-opus-4-8"))
        if only_adaptive and {"temperature", "top_p", "top_k"} & set(body):
            raise Rejected(400, "anthropic: `temperature` is deprecated for this model.")
        if only_adaptive and thinking is not None:
            _only("anthropic.thinking", thinking, {"type"})
            if thinking.get("type") != "adaptive":
                raise Rejected(400, f"anthropic: {body['model']} only supports adaptive thinking")
            thinking, budget = None, max_tokens
            adaptive = True  # thinks within max_tokens, as asked
        if thinking is not None:
            _only("anthropic.thinking", thinking, {"type", "budget_tokens"})
            budget = thinking.get("budget_tokens", 0)
            if thinking.get("type") != "enabled" or budget < 1024 or budget >= max_tokens:
                raise Rejected(400, "anthropic: thinking.budget_tokens must be >= 1024 and "
                                    "less than max_tokens")
            if "temperature" in body or "top_k" in body:
                raise Rejected(400, "anthropic: temperature/top_k may not be set with thinking")
        prompt, images = "", []
        for msg in body["messages"]:
            _only("anthropic.message", msg, {"role", "content"})
            for block in msg["content"]:
                if block.get("type") == "text":
                    _only("anthropic.text", block, {"type", "text", "cache_control"})
                    prompt += block["text"]
                elif block.get("type") == "image":
                    _only("anthropic.image", block, {"type", "source", "cache_control"})
                    _only("anthropic.image.source", block["source"],
                          {"type", "media_type", "data"})
                    images.append(_image_of(block["source"]["data"]))
                else:
                    raise Rejected(400, f"anthropic: unknown content block {block.get('type')}")
        system = body.get("system", "")
        think = self._think(budget) if thinking or adaptive else 0
        text, out, cut = self._answer_fit("anthropic", body["model"], system, prompt, images,
                                          max_tokens - think)
        tin = tokens(system + prompt) + 85 * len(images)
        self._bill("anthropic", body["model"], tin, think + out)
        stop = "max_tokens" if cut else "end_turn"
        blocks = [{"type": "thinking", "thinking": "...", "signature": "sig"}] if think else []
        if text == "<REFUSE>":
            stop, text = "refusal", ""
        elif text == "<EMPTY>":
            text = ""
        blocks.append({"type": "text", "text": text})
        return 200, {}, {"id": "msg_1", "type": "message", "role": "assistant",
                         "model": body["model"], "content": blocks, "stop_reason": stop,
                         "usage": {"input_tokens": tin, "output_tokens": think + out}}

    # -- OpenAI -----------------------------------------------------------------------------
    def _openai_chat(self, headers, raw):
        bearer(headers, "openai")
        body = _json(headers, raw, "openai")
        _only("openai", body, OPENAI_CHAT_FIELDS)
        model = body["model"]
        reasoning = openai_reasoning(model)
        if reasoning:
            for bad in ("temperature", "top_p", "max_tokens"):
                if bad in body:
                    raise Rejected(400, f"openai: Unsupported parameter: '{bad}' is not "
                                        f"supported with this model ({model})")
            if body.get("reasoning_effort", "medium") not in EFFORTS:
                raise Rejected(400, "openai: reasoning_effort must be one of " + str(EFFORTS))
        elif "reasoning_effort" in body:
            raise Rejected(400, f"openai: reasoning_effort is not supported with {model}")
        if "temperature" in body and not 0 <= body["temperature"] <= 2:
            raise Rejected(400, "openai: temperature must be in [0, 2]")
        if "top_p" in body and not 0 <= body["top_p"] <= 1:
            raise Rejected(400, "openai: top_p must be in [0, 1]")
        limit = body.get("max_completion_tokens", body.get("max_tokens", 4096))
        system, prompt, images = "", "", []
        for msg in body["messages"]:
            _only("openai.message", msg, {"role", "content", "name"})
            if msg["role"] in ("system", "developer"):
                system += msg["content"]
                continue
            for part in msg["content"]:
                if part.get("type") == "text":
                    _only("openai.text", part, {"type", "text"})
                    prompt += part["text"]
                elif part.get("type") == "image_url":
                    _only("openai.image_url", part, {"type", "image_url"})
                    _only("openai.image_url.url", part["image_url"], {"url", "detail"})
                    images.append(_image_of(part["image_url"]["url"].split(",", 1)[1]))
                else:
                    raise Rejected(400, f"openai: unknown content part {part.get('type')}")
        think = self._think(limit) if reasoning else 0
        text, out, cut = self._answer_fit("openai", model, system, prompt, images,
                                          limit - think)
        tin = tokens(system + prompt) + 85 * len(images)
        self._bill("openai", model, tin, think + out)
        message = {"role": "assistant", "content": text, "refusal": None}
        finish = "length" if cut else "stop"
        if text == "<REFUSE>":
            message.update(content=None, refusal="I can't help with that.")
        elif text == "<SAFETY>":
            message["content"], finish = "", "content_filter"
        elif text == "<EMPTY>":
            message["content"] = ""
        return 200, {}, {"id": "chatcmpl-1", "object": "chat.completion", "model": model,
                         "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                         "usage": {"prompt_tokens": tin, "completion_tokens": think + out,
                                   "total_tokens": tin + think + out,
                                   "completion_tokens_details": {"reasoning_tokens": think}}}

    # -- Gemini -----------------------------------------------------------------------------
    def _gemini(self, model, headers, raw):
        if headers.get("x-goog-api-key") != KEY:
            raise Rejected(403, "gemini: missing or wrong x-goog-api-key")
        body = _json(headers, raw, "gemini")
        _only("gemini", body, GEMINI_FIELDS)
        config = body.get("generationConfig", {})
        _only("gemini.generationConfig", config, GEMINI_CONFIG)
        if "topP" in config and not 0 <= config["topP"] <= 1:
            raise Rejected(400, "gemini: topP must be in [0, 1]")
        tc = config.get("thinkingConfig", {})
        _only("gemini.thinkingConfig", tc, {"thinkingBudget", "thinkingLevel",
                                            "includeThoughts"})
        if "thinkingBudget" in tc and "thinkingLevel" in tc:
            raise Rejected(400, "gemini: thinkingBudget and thinkingLevel are exclusive")
        if "thinkingLevel" in tc and not model.startswith("gemini-3"):
            raise Rejected(400, f"gemini: thinkingLevel is not supported by {model}")
        if "thinkingBudget" in tc and not model.startswith("gemini-2.5"):
            raise Rejected(400, f"gemini: thinkingBudget is for Gemini 2.5 models, not {model}")
        prompt, images = "", []
        for content in body["contents"]:
            _only("gemini.content", content, {"role", "parts"})
            for part in content["parts"]:
                _only("gemini.part", part, {"text", "inline_data", "inlineData"})
                if "text" in part:
                    prompt += part["text"]
                else:
                    blob = part.get("inline_data") or part.get("inlineData")
                    _only("gemini.inline_data", blob, {"mime_type", "mimeType", "data"})
                    images.append(_image_of(blob["data"]))
        system = "".join(p["text"] for p in body.get("systemInstruction", {}).get("parts", []))
        tin = tokens(system + prompt) + 258 * len(images)
        if "IMAGE" in config.get("responseModalities", []):
            return self._gemini_image(model, prompt, images[0] if images else None,
                                      config.get("seed", 0), tin)
        limit = config.get("maxOutputTokens", 8192)
        thinking = model.startswith(("gemini-2.5", "gemini-3"))
        budget = tc.get("thinkingBudget", self.think_tokens) if thinking else 0
        think = self._think(min(budget if budget >= 0 else self.think_tokens, limit))
        text, out, cut = self._answer_fit("gemini", model, system, prompt, images,
                                          limit - think)
        self._bill("gemini", model, tin, think + out)
        finish = "MAX_TOKENS" if cut else "STOP"
        usage = {"promptTokenCount": tin, "candidatesTokenCount": out,
                 "thoughtsTokenCount": think, "totalTokenCount": tin + out + think}
        if text == "<SAFETY>":
            return 200, {}, {"candidates": [{"finishReason": "SAFETY", "index": 0}],
                             "usageMetadata": usage}
        if text == "<EMPTY>":
            text = ""
        parts = [{"text": text}] if text else []
        return 200, {}, {"candidates": [{"content": {"role": "model", "parts": parts},
                                         "finishReason": finish, "index": 0}],
                         "usageMetadata": usage, "modelVersion": model}
