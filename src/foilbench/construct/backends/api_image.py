"""Image generation and editing over provider APIs:
``api:gemini-image:MODEL[?options]`` and ``api:openai-image:MODEL[?options]``.

Options: ``concurrency=N``; OpenAI only: ``size=WxH`` (sent as is instead of the closest
supported size) and ``quality=...`` (passed through; the worst case is priced at it, or at the
dearest quality when the provider chooses: :mod:`.api_image_price`). Keys: ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` and
``OPENAI_API_KEY``, base URLs ``FOILBENCH_GEMINI_BASE_URL`` / ``FOILBENCH_OPENAI_BASE_URL``
(the same as the text models). Wire formats: :mod:`.api_image_wire`.

Every returned image is RGB and of the wanted size: generation answers are resized to the
request's ``size`` and edits to the input image's size (providers answer at their own fixed
sizes), with Lanczos resampling. Edits report ``mask=None``: an API does not say which pixels it
changed (the pixel-drift validator measures that). Gemini takes no mask, so a Gemini edit is
guided by the instruction alone.

Images are cached as PNG files under ``$FOILBENCH_CACHE_DIR/construct_images`` keyed by the
request (base URL, provider, model, prompt, seed, size sent, options, input image and mask
bytes): a repeated request makes no HTTP call and costs nothing. A reply without an image (a
safety block) is billed, not cached, and fails the call with its reason.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from PIL import Image

from foilbench.construct.backends import api_image_price as pricing
from foilbench.construct.backends import api_image_wire as wire
from foilbench.construct.backends.api_common import (
    GuardedCaller,
    ImageCache,
    UnusableReplyError,
    check_options,
    concurrency,
    content_key,
    parse_api_spec,
)
from foilbench.construct.backends.base import (
    EditBackend,
    EditRequest,
    EditResult,
    ImageBackend,
    ImageRequest,
)
from foilbench.errors import ModelError
from foilbench.models.api.adapter import png_bytes
from foilbench.models.api.prices import PriceBook, PriceError
from foilbench.models.api.transport import post_body, post_json
from foilbench.models.api.wire import PROVIDERS, auth_headers
from foilbench.models.fingerprint import make_fingerprint

IMAGE_PROVIDERS = ("gemini-image", "openai-image")
#: The text provider whose key and base URL an image provider uses.
KEY_PROVIDER = {"gemini-image": "gemini", "openai-image": "openai"}
WIRE_VERSION = "image-v2"
OPTIONS = {"size": None, "quality": None}
#: the dry run's bound assumes a prompt of at most this many bytes and a 1024 px edit input
DRY_PROMPT_BYTES, DRY_IMAGE_SIDE = 4000, 1024


class _APIImages:
    """Shared state and the paid call of both roles."""

    def __init__(self, kind: str, provider: str, model: str, spec: str, opts: dict,
                 max_concurrency: int, ledger: Any, policy: Any,
                 cache_dir: str | Path | None) -> None:
        if provider == "gemini-image" and set(opts) & set(OPTIONS):
            raise ModelError(f"{spec}: the options size= and quality= are for openai-image")
        self.kind, self.provider, self.model, self.spec = kind, provider, model, spec
        self.size_override = opts.get("size")
        if self.size_override is not None:
            w, x, h = self.size_override.partition("x")
            if not (x and w.isdigit() and h.isdigit()):
                raise ModelError(f"{spec}: size={self.size_override!r} must look like WxH")
        self.quality = opts.get("quality")
        self.max_concurrency = max_concurrency
        self.caller = GuardedCaller(ledger, policy, cache_dir)
        self.cache = ImageCache(self.caller.cache_dir / "construct_images")
        self._fingerprint = make_fingerprint(f"api-{kind}", {
            "provider": provider, "model": model, "wire": WIRE_VERSION,
            "size": self.size_override, "quality": self.quality})

    @property
    def prices(self) -> PriceBook:
        ledger = self.caller.ledger
        return ledger.prices if ledger is not None else PriceBook()

    def sent_size(self, size: tuple[int, int]) -> str | None:
        if self.provider == "gemini-image":
            return None
        return self.size_override or wire.openai_size(self.model, size)

    def worst_case(self, prompt: str, size: tuple[int, int],
                   image_size: tuple[int, int] | None, has_mask: bool) -> float:
        return pricing.worst_case(self.prices, self.provider, self.model, prompt,
                                  self.sent_size(size), self.quality, image_size, has_mask)

    @property
    def cost_per_call_usd(self) -> float:
        """The dry run's bound per call: the largest size, an edit input with a mask."""
        side = (DRY_IMAGE_SIDE, DRY_IMAGE_SIDE)
        try:
            return self.worst_case("x" * DRY_PROMPT_BYTES, (1536, 1024), side, True)
        except PriceError:
            return float("nan")

    def call_bound(self, calls: Any) -> float:
        """Most one call of a planned stage can cost: its prompt size, its image side (the
        size asked) and, for an edit, the input image and a mask; unpriced: NaN."""
        side = calls.image_side or DRY_IMAGE_SIDE
        size = (side, side) if calls.image_side else (1536, 1024)
        try:
            return self.worst_case("x" * (calls.prompt_bytes or DRY_PROMPT_BYTES), size,
                                   size if calls.edit else None, bool(calls.edit))
        except PriceError:
            return float("nan")

    def _post(self, prompt: str, seed: int, size: tuple[int, int], image_png: bytes | None,
              mask: bytes | None, on_resend) -> tuple[dict, int]:
        key_provider = KEY_PROVIDER[self.provider]
        base = PROVIDERS[key_provider].base_url()
        secret = auth_headers(key_provider)
        policy = self.caller.policy
        if self.provider == "gemini-image":
            path, body = wire.gemini_request(self.model, prompt, seed, size, image_png,
                                             pricing.gemini_output_limit(self.prices, self.model))
            return post_json(base + path, body, {}, secret, policy, on_resend)
        sent = self.sent_size(size)
        if image_png is None:
            path, body = wire.openai_generation(self.model, prompt, sent, self.quality)
            return post_json(base + path, body, {}, secret, policy, on_resend)
        path, payload, ctype = wire.openai_edit_multipart(self.model, prompt, sent, image_png,
                                                          mask, self.quality)
        return post_body(base + path, payload, ctype, {}, secret, policy, on_resend)

    def run(self, prompt: str, seed: int, size: tuple[int, int],
            image_png: bytes | None = None, mask: bytes | None = None,
            image_size: tuple[int, int] | None = None) -> Image.Image:
        base = PROVIDERS[KEY_PROVIDER[self.provider]].base_url()
        key = content_key(WIRE_VERSION, base, self.kind, self.provider, self.model, prompt,
                          seed, list(size), self.size_override, self.quality, image_png, mask)
        result = self.caller.obtain(key, self.cache.get, lambda: self._pay(
            key, prompt, seed, size, image_png, mask, image_size))
        if result.size != tuple(size):
            result = result.resize(tuple(size), Image.Resampling.LANCZOS)
        return result

    def _pay(self, key: str, prompt: str, seed: int, size: tuple[int, int],
             image_png: bytes | None, mask: bytes | None,
             image_size: tuple[int, int] | None) -> Image.Image:
        """One paid request (under the folder's claim on ``key``), its image cached."""
        worst = self.worst_case(prompt, size, image_size, mask is not None)
        sent = self.sent_size(size)
        data = self.caller.paid(
            f"{self.kind} {self.spec}", worst,
            lambda on_resend: self._post(prompt, seed, size, image_png, mask, on_resend),
            lambda d: pricing.billed(self.prices, self.provider, self.model, sent,
                                     self.quality, d))
        try:
            png = (wire.parse_gemini_image(data) if self.provider == "gemini-image"
                   else wire.parse_openai_image(data))
        except ModelError as e:
            self.caller.dropped("no image")
            raise UnusableReplyError(f"{self.spec}: {e}; not cached") from None
        self.cache.put(key, png)
        with Image.open(io.BytesIO(png)) as im:
            return im.convert("RGB")

    def describe_extra(self) -> dict[str, Any]:
        entry = self.prices.image_entry(self.provider, self.model) or {}
        return {"spec": self.spec, "provider": self.provider, "model": self.model,
                "price_source": entry.get("source"), "price_date": entry.get("date")}


class _OverAPIImages:
    """What the generator and the editor share: both are thin roles over one
    :class:`_APIImages` (its fingerprint, description, concurrency, price and spend), so the
    two roles cannot drift apart in how they report a provider."""

    def __init__(self, impl: _APIImages) -> None:
        self.impl = impl
        self.max_concurrency = impl.max_concurrency

    @property
    def cost_per_call_usd(self) -> float:
        return self.impl.cost_per_call_usd

    def call_bound(self, calls: Any) -> float:
        return self.impl.call_bound(calls)

    @property
    def fingerprint(self) -> str:
        return self.impl._fingerprint

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **self.impl.describe_extra()}

    def usage(self) -> dict:
        return self.impl.caller.usage()


class APIImageGenerator(_OverAPIImages, ImageBackend):
    def generate(self, request: ImageRequest) -> Image.Image:
        return self.impl.run(request.prompt, request.seed, tuple(request.size))


class APIImageEditor(_OverAPIImages, EditBackend):
    def edit(self, request: EditRequest) -> EditResult:
        image = request.image.convert("RGB")
        mask = None
        if request.mask is not None and self.impl.provider == "openai-image":
            mask = wire.mask_png(request.mask, image.size)
        out = self.impl.run(request.instruction, request.seed, image.size,
                            image_png=png_bytes(image), mask=mask, image_size=image.size)
        return EditResult(out, mask=None)


def _impl(kind: str, rest: str, options: dict[str, Any]) -> _APIImages:
    check_options(f"api:{rest}", options)
    provider, model, opts = parse_api_spec(rest, IMAGE_PROVIDERS, "image", OPTIONS)
    return _APIImages(kind, provider, model, f"api:{rest}", opts,
                      concurrency(opts, options.get("max_concurrency")),
                      options.get("ledger"), options.get("policy"), options.get("cache_dir"))


def generator_from_spec(rest: str, **options: Any) -> APIImageGenerator:
    return APIImageGenerator(_impl("image", rest, options))


def editor_from_spec(rest: str, **options: Any) -> APIImageEditor:
    return APIImageEditor(_impl("edit", rest, options))
