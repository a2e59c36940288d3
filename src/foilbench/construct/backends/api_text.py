"""Text LLM backends over provider APIs: ``api:anthropic|openai|gemini:MODEL[?options]``.

Options: ``concurrency=N`` (calls in flight; see :mod:`.api_common`). One request is a system
prompt plus one user turn, with the request's temperature, ``max_tokens`` and seed (sent where
the provider takes one: OpenAI and Gemini). The request's images (``TextRequest.images``) go
first in the user turn, as PNG image parts of the provider's wire format (the same parts the
API models of ``foilbench run`` send), then the prompt text; CompoSET's captioning model sees
the rendered base image this way in steps 3-4. SugarCrepe §4 samples new concepts at temperature
1.5 (OpenAI's and Gemini's range is [0, 2]); Anthropic accepts at most 1, so a higher
temperature is clamped to 1 there, with a warning, and the clamped value is what the cache key
and the request carry. Gemini 3 models always get their default temperature 1.0, which Google
strongly recommends keeping (below it: looping and degraded output, which burns output tokens
to the limit): a departure from the papers' 0.0 (Auto-Comp's 0.7, SugarCrepe's 1.5) for those
models only (:func:`foilbench.models.api.wire.request_temperature`); 1.0 keys the cache.

Options ``effort=`` and ``thinking=N`` (:mod:`.api_tokens`): OpenAI reasoning models (o-series,
gpt-5) get no temperature, so a sampled request to them is sampled at the provider's default.
A request's ``top_p`` is sent to OpenAI chat models and Gemini, not to OpenAI reasoning models
or Anthropic (:func:`foilbench.models.api.wire.sends_top_p`), and keys the cache only when sent.
Replies are cached in ``$FOILBENCH_CACHE_DIR/construct_text_responses.jsonl`` keyed by
(base URL, provider, model, effort, thinking, system, prompt, temperature, max_tokens, seed,
image bytes): a repeated
request makes no HTTP call and costs nothing. A sampled request (temperature > 0) is cached too, so a rerun is
reproducible; a different seed is a different request.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from foilbench.construct.backends.api_common import (
    check_options,
    concurrency,
    content_key,
    parse_api_spec,
)
from foilbench.construct.backends.api_tokens import TOKEN_OPTIONS, TokenPricedAPI
from foilbench.construct.backends.base import TextBackend, TextRequest
from foilbench.models.api.adapter import png_bytes
from foilbench.models.api.wire import PROVIDERS, request_temperature, sends_top_p
from foilbench.models.fingerprint import make_fingerprint

log = logging.getLogger(__name__)

TEXT_PROVIDERS = tuple(PROVIDERS)
MAX_TEMPERATURE = {"anthropic": 1.0, "openai": 2.0, "gemini": 2.0}
#: the largest output budget a pipeline asks of a text call (CompoSET step 4), for the dry run
DRY_MAX_TOKENS = 6000
WIRE_VERSION = "text-v2"


def from_spec(rest: str, **options: Any) -> APITextBackend:
    check_options(f"api:{rest}", options)
    provider, model, opts = parse_api_spec(rest, TEXT_PROVIDERS, "text", TOKEN_OPTIONS)
    return APITextBackend(provider, model, spec=f"api:{rest}",
                          max_concurrency=concurrency(opts, options.get("max_concurrency")),
                          opts=opts, ledger=options.get("ledger"), policy=options.get("policy"),
                          cache_dir=options.get("cache_dir"))


class APITextBackend(TokenPricedAPI, TextBackend):
    accepts_images = True

    def __init__(self, provider: str, model: str, spec: str, max_concurrency: int = 4,
                 opts: dict | None = None, ledger: Any = None, policy: Any = None,
                 cache_dir: str | Path | None = None) -> None:
        self._connect(provider, model, spec, max_concurrency, opts or {}, ledger, policy,
                      cache_dir)
        self._fingerprint = make_fingerprint("api-text", {
            "provider": provider, "model": model, "wire": WIRE_VERSION,
            "effort": self.effort, "thinking": self.thinking})

    @property
    def cost_per_call_usd(self) -> float:
        """The dry run's bound per call (module :mod:`.api_tokens`)."""
        return self.dry_run_bound(DRY_MAX_TOKENS)

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        entry = self.prices.token_entry(self.provider, self.model) or {}
        return {**super().describe(), "spec": self.spec, "provider": self.provider,
                "model": self.model, "usd_per_million_tokens": [entry.get("in"),
                                                                 entry.get("out")],
                "price_source": entry.get("source"), "price_date": entry.get("date")}

    def effective_temperature(self, temperature: float) -> float:
        temperature = request_temperature(self.provider, self.model, float(temperature))
        top = MAX_TEMPERATURE[self.provider]
        if temperature > top:
            log.warning("%s: temperature %.2f is above the provider's maximum; using %.1f",
                        self.spec, temperature, top)
            return top
        return max(0.0, float(temperature))

    def complete(self, request: TextRequest) -> str:
        temperature = self.effective_temperature(request.temperature)
        pngs = [png_bytes(im, k) for k, im in enumerate(request.images)]
        base = PROVIDERS[self.provider].base_url()
        # top_p enters the key only when it is sent, so earlier keys (and paid replies) hold
        top_p = request.top_p if sends_top_p(self.provider, self.model) else None
        key = content_key(WIRE_VERSION, base, self.provider, self.model, self.effort,
                          self.thinking, request.system, request.prompt, temperature,
                          request.max_tokens, request.seed, *([pngs] if pngs else []),
                          *([{"top_p": top_p}] if top_p is not None else []))
        parts = [*(("image", png) for png in pngs), ("text", request.prompt)]
        sizes = [im.size for im in request.images]
        return self._reply(key, "text", parts, sizes, request.max_tokens,
                           system=request.system, temperature=temperature,
                           seed=request.seed, top_p=top_p).text
