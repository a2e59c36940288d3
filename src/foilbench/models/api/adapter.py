"""An API model that answers two-option choices (family "api_choice")."""

from __future__ import annotations

import io
import logging

from PIL import Image

from foilbench.models.api.cache import ResponseCache, request_key
from foilbench.models.api.prompts import CAPTION_CHOICE, IMAGE_CHOICE, parse_choice
from foilbench.models.api.spend import SpendTracker, cap_from_env, price_for
from foilbench.models.api.transport import RetryPolicy, post_json
from foilbench.models.api.wire import PROVIDERS, Reply, auth_headers, build_request, parse_reply
from foilbench.models.base import ApiChoiceModel, ModelInfo, to_rgb
from foilbench.models.fingerprint import cache_root, make_fingerprint

log = logging.getLogger(__name__)


def png_bytes(image: Image.Image, index: int = 0) -> bytes:
    rgb = to_rgb(image, name=getattr(image, "filename", "") or f"image #{index}")
    buf = io.BytesIO()
    rgb.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


class APIChoiceModel(ApiChoiceModel):
    """``choose_caption`` / ``choose_image`` return 0, 1 (the option's index as given) or None
    (unparseable). Answers are cached on disk; spend is capped; the key is read per request."""

    def __init__(self, provider: str, model: str, spec: str, max_tokens: int = 64,
                 cache_path=None, cap: float | None = None,
                 policy: RetryPolicy | None = None) -> None:
        self.provider, self.model, self.max_tokens = provider, model, max_tokens
        self.policy = policy or RetryPolicy()
        self.cache = ResponseCache(cache_path or cache_root() / "api_responses.jsonl")
        self.spend = SpendTracker(price_for(provider, model),
                                  cap_from_env() if cap is None else cap)
        self.http_requests = 0
        self.cache_hits = 0
        self.unparseable = 0
        parts = {"provider": provider, "model": model, "max_tokens": max_tokens,
                 "temperature": 0, "caption_prompt": CAPTION_CHOICE, "image_prompt": IMAGE_CHOICE}
        self._info = ModelInfo(spec=spec, fingerprint=make_fingerprint("api", parts),
                               family=self.family, score_kind="api_choice", extras=parts)

    @property
    def info(self) -> ModelInfo:
        return self._info

    def ask(self, parts: list[tuple[str, object]]) -> Reply:
        """One user turn; from the cache when this exact request was answered before."""
        key = request_key(self.provider, self.model, parts, self.max_tokens)
        hit = self.cache.get(key)
        if hit is not None:
            self.cache_hits += 1
            return hit
        n_images = sum(1 for k, _ in parts if k == "image")
        chars = sum(len(v) for k, v in parts if k == "text")
        self.spend.check(chars, n_images, self.max_tokens)
        path, body = build_request(self.provider, self.model, parts, self.max_tokens)
        url = PROVIDERS[self.provider].base_url() + path
        data, n = post_json(url, body, {}, auth_headers(self.provider), self.policy)
        self.http_requests += n
        reply = parse_reply(self.provider, data)
        self.spend.record(reply.input_tokens, reply.output_tokens)
        self.cache.put(key, reply)
        return reply

    def _choice(self, parts) -> int | None:
        answer = parse_choice(self.ask(parts).text)
        if answer is None:
            self.unparseable += 1
        return answer

    def choose_caption(self, image: Image.Image, captions: list[str]) -> int | None:
        a, b = captions
        return self._choice([("image", png_bytes(image)),
                             ("text", CAPTION_CHOICE.format(a=a, b=b))])

    def choose_image(self, images: list[Image.Image], caption: str) -> int | None:
        a, b = images
        return self._choice([("text", "Image A:"), ("image", png_bytes(a, 0)),
                             ("text", "Image B:"), ("image", png_bytes(b, 1)),
                             ("text", IMAGE_CHOICE.format(caption=caption))])

    def usage(self) -> dict:
        return {"http_requests": self.http_requests, "cache_hits": self.cache_hits,
                "spend_usd": round(self.spend.spent, 6), "billed_calls": self.spend.calls,
                "unparseable": self.unparseable}
