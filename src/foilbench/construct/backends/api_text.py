"""Text LLM backends over provider APIs: ``api:anthropic|openai|gemini:MODEL[?options]``.

Options: ``concurrency=N`` (calls in flight; see :mod:`.api_common`). One request is a system
prompt plus one user turn, with the request's temperature, ``max_tokens`` and seed (sent where
the provider takes one: OpenAI and Gemini). The request's images (``TextRequest.images``) go
first in the user turn, as PNG image parts of the provider's wire format (the same parts the
API models of ``foilbench run`` send), then the prompt text; CompoSET's captioning model sees
the rendered base image this way in steps 3-4. SugarCrepe §4 samples new concepts at temperature
1.5 (OpenAI's and Gemini's range is [0, 2]); Anthropic accepts at most 1, so a higher
temperature is clamped to 1 there, with a warning, and the clamped value is what the cache key
and the request carry.

Replies are cached in ``$FOILBENCH_CACHE_DIR/construct_text_responses.jsonl`` keyed by
(provider, model, system, prompt, temperature, max_tokens, seed, image bytes): a repeated
request makes no HTTP call and costs nothing. A sampled request (temperature > 0) is cached too, so a rerun is
reproducible; a different seed is a different request.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from foilbench.construct.backends.api_common import (
    SpendBudget,
    TokenPricedAPI,
    check_options,
    concurrency,
    content_key,
    parse_api_spec,
)
from foilbench.construct.backends.base import TextBackend, TextRequest
from foilbench.models.api.adapter import png_bytes
from foilbench.models.api.spend import IMAGE_TOKENS
from foilbench.models.api.transport import RetryPolicy
from foilbench.models.api.wire import PROVIDERS
from foilbench.models.fingerprint import make_fingerprint

log = logging.getLogger(__name__)

TEXT_PROVIDERS = tuple(PROVIDERS)
MAX_TEMPERATURE = {"anthropic": 1.0, "openai": 2.0, "gemini": 2.0}
#: A typical construction prompt, for the estimate printed before a stage starts.
TYPICAL_INPUT_TOKENS, TYPICAL_OUTPUT_TOKENS = 500, 200
WIRE_VERSION = "text-v1"


def from_spec(rest: str, **options: Any) -> APITextBackend:
    check_options(f"api:{rest}", options)
    provider, model, opts = parse_api_spec(rest, TEXT_PROVIDERS, "text", {})
    return APITextBackend(provider, model, spec=f"api:{rest}",
                          max_concurrency=concurrency(opts, options.get("max_concurrency")),
                          budget=options.get("budget"), policy=options.get("policy"),
                          cache_dir=options.get("cache_dir"))


class APITextBackend(TokenPricedAPI, TextBackend):
    accepts_images = True

    def __init__(self, provider: str, model: str, spec: str, max_concurrency: int = 4,
                 budget: SpendBudget | None = None, policy: RetryPolicy | None = None,
                 cache_dir: str | Path | None = None) -> None:
        self._connect(provider, model, spec, max_concurrency, budget, policy, cache_dir)
        self.cost_per_call_usd = self._cost(TYPICAL_INPUT_TOKENS, TYPICAL_OUTPUT_TOKENS)
        self._fingerprint = make_fingerprint("api-text", {
            "provider": provider, "model": model, "wire": WIRE_VERSION})

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "spec": self.spec, "provider": self.provider,
                "model": self.model, "usd_per_million_tokens": list(self.price)}

    def effective_temperature(self, temperature: float) -> float:
        top = MAX_TEMPERATURE[self.provider]
        if temperature > top:
            log.warning("%s: temperature %.2f is above the provider's maximum; using %.1f",
                        self.spec, temperature, top)
            return top
        return max(0.0, float(temperature))

    def complete(self, request: TextRequest) -> str:
        temperature = self.effective_temperature(request.temperature)
        pngs = [png_bytes(im, k) for k, im in enumerate(request.images)]
        key = content_key(WIRE_VERSION, self.provider, self.model, request.system,
                          request.prompt, temperature, request.max_tokens, request.seed,
                          *([pngs] if pngs else []))
        first = self._cost((len(request.prompt) + len(request.system)) // 4
                           + IMAGE_TOKENS * len(pngs), request.max_tokens)
        parts = [*(("image", png) for png in pngs), ("text", request.prompt)]
        return self._reply(key, "text", first, parts, request.max_tokens,
                           system=request.system, temperature=temperature,
                           seed=request.seed).text
