"""Image generation and editing over provider APIs:
``api:gemini-image:MODEL[?options]`` and ``api:openai-image:MODEL[?options]``.

Options: ``concurrency=N``; OpenAI only: ``size=WxH`` (sent as is instead of the closest
supported size) and ``quality=...`` (passed through; prices in the table are for the default
quality, see ``FOILBENCH_API_IMAGE_PRICES``). Keys: ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` and
``OPENAI_API_KEY``, base URLs ``FOILBENCH_GEMINI_BASE_URL`` / ``FOILBENCH_OPENAI_BASE_URL``
(the same as the text models). Wire formats: :mod:`.api_image_wire`.

Every returned image is RGB and of the wanted size: generation answers are resized to the
request's ``size`` and edits to the input image's size (providers answer at their own fixed
sizes), with Lanczos resampling. Edits report ``mask=None``: an API does not say which pixels it
changed (the pixel-drift validator measures that). Gemini takes no mask, so a Gemini edit is
guided by the instruction alone.

Images are cached as PNG files under ``$FOILBENCH_CACHE_DIR/construct_images`` keyed by the
request (provider, model, prompt, seed, size sent, options, input image and mask bytes): a
repeated request makes no HTTP call and costs nothing. Spend is one per-image price per call.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from PIL import Image

from foilbench.construct.backends import api_image_wire as wire
from foilbench.construct.backends.api_common import (
    GuardedCaller,
    ImageCache,
    SpendBudget,
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
from foilbench.models.api.spend import image_price_for
from foilbench.models.api.transport import RetryPolicy, post_body, post_json
from foilbench.models.api.wire import PROVIDERS, auth_headers
from foilbench.models.fingerprint import make_fingerprint

IMAGE_PROVIDERS = ("gemini-image", "openai-image")
#: The text provider whose key and base URL an image provider uses.
KEY_PROVIDER = {"gemini-image": "gemini", "openai-image": "openai"}
WIRE_VERSION = "image-v1"
OPTIONS = {"size": None, "quality": None}


class _APIImages:
    """Shared state and the guarded call of both roles."""

    def __init__(self, kind: str, provider: str, model: str, spec: str, opts: dict,
                 max_concurrency: int, budget: SpendBudget | None,
                 policy: RetryPolicy | None, cache_dir: str | Path | None) -> None:
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
        self.cost_per_call_usd = image_price_for(provider, model)
        self.caller = GuardedCaller(budget, policy, cache_dir)
        self.cache = ImageCache(self.caller.cache_dir / "construct_images")
        self._fingerprint = make_fingerprint(f"api-{kind}", {
            "provider": provider, "model": model, "wire": WIRE_VERSION,
            "size": self.size_override, "quality": self.quality})

    def _send(self, prompt: str, seed: int, size: tuple[int, int], image_png: bytes | None,
              mask: bytes | None) -> tuple[bytes, int]:
        key_provider = KEY_PROVIDER[self.provider]
        base = PROVIDERS[key_provider].base_url()
        secret = auth_headers(key_provider)
        policy = self.caller.policy
        if self.provider == "gemini-image":
            path, body = wire.gemini_request(self.model, prompt, seed, size, image_png)
            data, n = post_json(base + path, body, {}, secret, policy)
            return wire.parse_gemini_image(data), n
        sent = self.size_override or wire.openai_size(self.model, size)
        if image_png is None:
            path, body = wire.openai_generation(self.model, prompt, sent, self.quality)
            data, n = post_json(base + path, body, {}, secret, policy)
        elif wire.openai_family(self.model) == "dall-e-2":
            path, payload, ctype = wire.openai_edit_multipart(self.model, prompt, sent,
                                                              image_png, mask)
            data, n = post_body(base + path, payload, ctype, {}, secret, policy)
        else:
            path, body = wire.openai_edit_json(self.model, prompt, sent, image_png, mask,
                                               self.quality)
            data, n = post_json(base + path, body, {}, secret, policy)
        return wire.parse_openai_image(data), n

    def run(self, prompt: str, seed: int, size: tuple[int, int],
            image_png: bytes | None = None, mask: bytes | None = None) -> Image.Image:
        key = content_key(WIRE_VERSION, self.kind, self.provider, self.model, prompt, seed,
                          list(size), self.size_override, self.quality, image_png, mask)

        def send():
            png, n = self._send(prompt, seed, size, image_png, mask)
            return png, n, self.cost_per_call_usd

        def store(k: str, png: bytes) -> None:
            self.cache.put(k, png)

        result = self.caller.call(key, self.cache.get, f"{self.provider}:{self.model}",
                                  self.cost_per_call_usd, send, store)
        if isinstance(result, bytes):
            with Image.open(io.BytesIO(result)) as im:
                result = im.convert("RGB")
        if result.size != tuple(size):
            result = result.resize(tuple(size), Image.Resampling.LANCZOS)
        return result

    def describe_extra(self) -> dict[str, Any]:
        return {"spec": self.spec, "provider": self.provider, "model": self.model,
                "usd_per_image": self.cost_per_call_usd}


class _OverAPIImages:
    """What the generator and the editor share: both are thin roles over one
    :class:`_APIImages` (its fingerprint, description, concurrency, price and spend), so the
    two roles cannot drift apart in how they report a provider."""

    def __init__(self, impl: _APIImages) -> None:
        self.impl = impl
        self.max_concurrency = impl.max_concurrency
        self.cost_per_call_usd = impl.cost_per_call_usd

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
                            image_png=png_bytes(image), mask=mask)
        return EditResult(out, mask=None)


def _impl(kind: str, rest: str, options: dict[str, Any]) -> _APIImages:
    check_options(f"api:{rest}", options)
    provider, model, opts = parse_api_spec(rest, IMAGE_PROVIDERS, "image", OPTIONS)
    return _APIImages(kind, provider, model, f"api:{rest}", opts,
                      concurrency(opts, options.get("max_concurrency")),
                      options.get("budget"), options.get("policy"), options.get("cache_dir"))


def generator_from_spec(rest: str, **options: Any) -> APIImageGenerator:
    return APIImageGenerator(_impl("image", rest, options))


def editor_from_spec(rest: str, **options: Any) -> APIImageEditor:
    return APIImageEditor(_impl("edit", rest, options))
