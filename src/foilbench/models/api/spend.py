"""Spend cap for API models: estimated USD per call from the reply's token counts.

cost = input_tokens * in_price / 1e6 + output_tokens * out_price / 1e6   (USD per M tokens)

Before a call the next cost is estimated as the largest cost seen so far in this run (or,
before the first reply, from the prompt: 4 characters per token plus ``IMAGE_TOKENS`` per
image, and ``max_tokens`` out). A call that would take the total past the cap is refused.
The cap is ``FOILBENCH_API_SPEND_CAP`` (USD, default 5). Prices: the packaged list
(``prices.json``, :mod:`.prices`; exact model names, a dated snapshot only when listed),
overridden by ``FOILBENCH_API_PRICES`` = a JSON object ``{"provider:model": [in, out], ...}``
or a path to such a file. Unknown models are priced at the dearest listed price (deliberately high).
Construction (``foilbench construct``) uses the folder ledger instead
(:mod:`foilbench.construct.engine.ledger`); this tracker is for ``api:`` evaluation models.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from foilbench.errors import ModelError, SpendCapReached
from foilbench.models.api.prices import dearest_token_price, listed_name, token_table

DEFAULT_CAP_USD = 5.0
IMAGE_TOKENS = 1600  # a generous per-image input estimate (providers bill ~250-1600)


class SpendCapError(SpendCapReached):
    """The next API call would exceed the spend cap."""


def price_table() -> dict[str, tuple[float, float]]:
    table = {k: (float(v["in"]), float(v["out"])) for k, v in token_table().items()}
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
    hit = listed_name(table, f"{provider}:{model}")
    return table[hit] if hit else dearest_token_price()


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
