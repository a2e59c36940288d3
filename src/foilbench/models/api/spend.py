"""Spend cap for API models: estimated USD per call from the reply's token counts.

cost = input_tokens * in_price / 1e6 + output_tokens * out_price / 1e6   (USD per M tokens)

Before a call the next cost is estimated as the largest cost seen so far in this run (or,
before the first reply, from the prompt: 4 characters per token plus ``IMAGE_TOKENS`` per
image, and ``max_tokens`` out). A call that would take the total past the cap is refused.
The cap is ``FOILBENCH_API_SPEND_CAP`` (USD, default 5). Prices: the table below (approximate
list prices, USD per million tokens, longest matching model-name prefix wins), overridden by
``FOILBENCH_API_PRICES`` = a JSON object ``{"provider:model-prefix": [in, out], ...}`` or a
path to such a file. Unknown models are priced at ``FALLBACK_PRICE`` (deliberately high).

Image models (construction backends ``api:openai-image:...`` / ``api:gemini-image:...``) are
priced per generated or edited image: ``IMAGE_PRICES`` (approximate list prices for one
1024x1024 image at the default quality), overridden by ``FOILBENCH_API_IMAGE_PRICES`` = a JSON
object ``{"provider:model-prefix": usd_per_image}`` or a path to one; unknown image models cost
``FALLBACK_IMAGE_PRICE`` (deliberately high).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from foilbench.errors import ModelError, SpendCapReached

DEFAULT_CAP_USD = 5.0
IMAGE_TOKENS = 1600  # a generous per-image input estimate (providers bill ~250-1600)
FALLBACK_PRICE = (15.0, 75.0)
PRICES: dict[str, tuple[float, float]] = {
    "anthropic:claude-3-5-haiku": (0.8, 4.0),
    "anthropic:claude-3-haiku": (0.25, 1.25),
    "anthropic:claude-3-5-sonnet": (3.0, 15.0),
    "anthropic:claude-3-7-sonnet": (3.0, 15.0),
    "anthropic:claude-sonnet-4": (3.0, 15.0),
    "anthropic:claude-3-opus": (15.0, 75.0),
    "anthropic:claude-opus-4": (15.0, 75.0),
    "openai:gpt-4o-mini": (0.15, 0.6),
    "openai:gpt-4o": (2.5, 10.0),
    "openai:gpt-4.1-mini": (0.4, 1.6),
    "openai:gpt-4.1": (2.0, 8.0),
    "gemini:gemini-1.5-flash": (0.075, 0.3),
    "gemini:gemini-1.5-pro": (1.25, 5.0),
    "gemini:gemini-2.0-flash": (0.1, 0.4),
    "gemini:gemini-2.5-flash": (0.3, 2.5),
    "gemini:gemini-2.5-pro": (1.25, 10.0),
}


FALLBACK_IMAGE_PRICE = 0.25
IMAGE_PRICES: dict[str, float] = {
    "openai-image:dall-e-2": 0.02,
    "openai-image:dall-e-3": 0.04,
    "openai-image:gpt-image-1": 0.042,
    "openai-image:gpt-image-1-mini": 0.011,
    "gemini-image:gemini-2.0-flash": 0.039,
    "gemini-image:gemini-2.5-flash-image": 0.039,
    "gemini-image:gemini-3-pro-image": 0.134,
}


class SpendCapError(SpendCapReached):
    """The next API call would exceed the spend cap."""


def price_table() -> dict[str, tuple[float, float]]:
    table = dict(PRICES)
    raw = os.environ.get("FOILBENCH_API_PRICES", "").strip()
    if raw:
        text = Path(raw).read_text() if not raw.startswith("{") else raw
        try:
            extra = json.loads(text)
            table.update({k: (float(v[0]), float(v[1])) for k, v in extra.items()})
        except (json.JSONDecodeError, TypeError, ValueError, IndexError, KeyError) as e:
            raise ModelError(f"FOILBENCH_API_PRICES: expected {{'provider:model': [in, out]}} "
                             f"(USD per million tokens): {e}") from None
    return table


def price_for(provider: str, model: str, table: dict | None = None) -> tuple[float, float]:
    table = price_table() if table is None else table
    name = f"{provider}:{model}"
    matches = [k for k in table if name.startswith(k)]
    return table[max(matches, key=len)] if matches else FALLBACK_PRICE


def image_price_for(provider: str, model: str) -> float:
    """USD per image for ``provider:model`` (longest matching prefix wins)."""
    table = dict(IMAGE_PRICES)
    raw = os.environ.get("FOILBENCH_API_IMAGE_PRICES", "").strip()
    if raw:
        text = Path(raw).read_text() if not raw.startswith("{") else raw
        try:
            table.update({k: float(v) for k, v in json.loads(text).items()})
        except (json.JSONDecodeError, TypeError, ValueError, AttributeError) as e:
            raise ModelError(f"FOILBENCH_API_IMAGE_PRICES: expected {{'provider:model': usd}} "
                             f"(USD per image): {e}") from None
    name = f"{provider}:{model}"
    matches = [k for k in table if name.startswith(k)]
    return table[max(matches, key=len)] if matches else FALLBACK_IMAGE_PRICE


def cap_from_env() -> float:
    raw = os.environ.get("FOILBENCH_API_SPEND_CAP", "")
    try:
        return float(raw) if raw else DEFAULT_CAP_USD
    except ValueError:
        raise ModelError(f"FOILBENCH_API_SPEND_CAP={raw!r} is not a number (USD)") from None


class SpendTracker:
    def __init__(self, price: tuple[float, float], cap: float) -> None:
        self.price, self.cap = price, cap
        self.spent = 0.0
        self.max_call = 0.0
        self.calls = 0

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.price[0] + output_tokens * self.price[1]) / 1e6

    def check(self, prompt_chars: int, n_images: int, max_tokens: int) -> None:
        estimate = self.max_call or self.cost(prompt_chars // 4 + IMAGE_TOKENS * n_images,
                                              max_tokens)
        if self.spent + estimate > self.cap:
            raise SpendCapError(
                f"API spend cap reached: spent ${self.spent:.4f} in {self.calls} call(s); the "
                f"next call (about ${estimate:.4f}) would pass the cap of ${self.cap:.2f}. "
                "Raise FOILBENCH_API_SPEND_CAP to go on (cached answers cost nothing).")

    def record(self, input_tokens: int, output_tokens: int) -> float:
        cost = self.cost(input_tokens, output_tokens)
        self.spent += cost
        self.max_call = max(self.max_call, cost)
        self.calls += 1
        return cost
