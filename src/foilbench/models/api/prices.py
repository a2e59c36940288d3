"""List prices of API models (``prices.json`` in this package) and the worst-case cost rule.

Why: a spend cap can only hold if every call is reserved at a cost it cannot exceed before it
is sent. The rule (issue 24): input tokens counted from the request (at most one token per
UTF-8 byte of text, plus a per-message allowance, plus each image's provider bound), output
at the request's own output budget (thinking included), images at the price for the model,
size and quality (the most expensive when the quality is left to the provider), edit inputs
included. The billed cost is then read from the reply's ``usage``.

Image input bounds, per provider's vision docs: Anthropic ``w*h/750`` tokens, at most ~1600
(larger images are scaled down), plus 10% as the formula is approximate; OpenAI tile models ``base + tile * tiles`` (512 px tiles after
fitting 2048 px and a 768 px short side; gpt-4o-mini 2833 + 5667 per tile), patch models (the
mini/nano of 4.1 and 5, o4-mini) 32 px patches, at most 1536, times at most 2.5; Gemini 258
tokens per 768 px tile (one tile up to 384 px), 1120 for Gemini 3 at its default resolution.

Unknown models: ``PriceBook.token_price`` returns None; a paid run is refused unless the user
gives the price (``--price MODEL=IN/OUT``) or allows unpriced models with an explicit
``--max-spend``, in which case the dearest price we know of stands in (so the cap still holds).
A listed name prices only itself (:func:`listed_name`, issue 40): ``gpt-5-pro`` is not
``gpt-5``, and a dated snapshot is not its alias either (``gpt-4o-2024-05-13`` lists at 5 / 15
USD per million tokens, ``gpt-4o`` at 2.50 / 10). A snapshot is priced when ``prices.json``
lists it with its own price or ``same_as`` the entry whose price it shares (with the page and
date that say so); any other snapshot is refused like an unknown model.

``--price`` also names image models (``openai-image:MODEL=USD`` or ``gemini-image:MODEL=USD``:
USD per image, :func:`parse_price_option`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from foilbench.errors import FoilbenchError

#: per-message allowance for role markers and formatting around the text
MESSAGE_OVERHEAD_TOKENS = 16


class PriceError(FoilbenchError):
    """A model has no known price, or a price the user gave is malformed."""


@cache
def price_data() -> dict[str, Any]:
    return json.loads(resources.files("foilbench.models.api").joinpath("prices.json")
                      .read_text(encoding="utf-8"))


#: what an unpriced model is reserved and billed at under --allow-unpriced when it is dearer
#: than anything listed: the dearest list price we know of (OpenAI o1-pro, 150 / 600 USD per
#: million tokens), so the cap holds whatever the model really costs
UNPRICED_CEILING = (150.0, 600.0)


def listed_name(table: dict[str, Any], name: str) -> str | None:
    """The table key that prices ``name``: the name itself when it is listed, else None
    (no prefix, no version suffix: a snapshot's price is listed or it is unknown).

    >>> t = {"openai:gpt-5": 1, "openai:gpt-5-mini": 2}
    >>> [listed_name(t, n) for n in ("openai:gpt-5", "openai:gpt-5-2025-08-07",
    ...                              "openai:gpt-5-pro")]
    ['openai:gpt-5', None, None]
    """
    return name if name in table and not name.startswith("_") else None


def listed_entry(table: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The price entry of ``name``; a ``same_as`` entry gives its alias's price with its own
    source and date (and ``same_as``).

    >>> t = {"a:m": {"in": 1, "out": 2, "source": "s", "date": "d"},
    ...      "a:m-2025-01-01": {"same_as": "a:m", "source": "s2", "date": "d2"}}
    >>> listed_entry(t, "a:m-2025-01-01")
    {'in': 1, 'out': 2, 'source': 's2', 'date': 'd2', 'same_as': 'a:m'}
    """
    key = listed_name(table, name)
    if key is None:
        return None
    entry = table[key]
    alias = entry.get("same_as")
    if alias is None:
        return entry
    base = table.get(alias)
    if not isinstance(base, dict) or "same_as" in base:
        raise PriceError(f"prices.json: {key} shares the price of {alias}, which has no "
                         "price of its own")
    return {**base, "source": entry["source"], "date": entry["date"], "same_as": alias}


def token_table() -> dict[str, dict[str, Any]]:
    """Every listed token price, ``same_as`` entries resolved."""
    table = price_data()["tokens"]
    return {k: listed_entry(table, k) for k in table if not k.startswith("_")}  # type: ignore


IMAGE_PROVIDERS = ("openai-image", "gemini-image")


def parse_price_option(text: str) -> tuple[str, tuple[float, ...]]:
    """``MODEL=IN/OUT`` (USD per million tokens) -> (model, (in, out)); for an image model
    (``openai-image:`` or ``gemini-image:``) ``MODEL=USD`` (per image) -> (model, (usd,)).

    >>> parse_price_option("openai:my-model=1.5/6")
    ('openai:my-model', (1.5, 6.0))
    >>> parse_price_option("gemini-image:my-imager=0.08")
    ('gemini-image:my-imager', (0.08,))
    """
    model, eq, rest = text.partition("=")
    image = model.startswith(tuple(f"{p}:" for p in IMAGE_PROVIDERS))
    parts = rest.split("/")
    try:
        vals = tuple(float(v) for v in parts) if eq and model else None
    except ValueError:
        vals = None
    if vals is not None and len(vals) != (1 if image else 2):
        vals = None
    if vals is None or not all(math.isfinite(v) and v >= 0 for v in vals):
        if image:
            raise PriceError(f"--price {text!r}: an image model takes MODEL=USD, the finite, "
                             "non-negative USD per image, e.g. --price "
                             "openai-image:my-imager=0.08")
        raise PriceError(f"--price {text!r}: expected MODEL=IN/OUT with finite, non-negative "
                         "USD per million tokens, e.g. --price openai:my-model=1.25/10")
    return model, vals


@dataclass
class PriceBook:
    """Prices for one run: the packaged list, the user's ``--price`` entries (which win) and
    whether unpriced models may run at the dearest listed price."""

    overrides: dict[str, tuple[float, ...]] = field(default_factory=dict)
    allow_unpriced: bool = False

    def token_entry(self, provider: str, model: str) -> dict[str, Any] | None:
        name = f"{provider}:{model}"
        for key in (name, model):
            if key in self.overrides and len(self.overrides[key]) == 2:
                i, o = self.overrides[key]
                return {"in": i, "out": o, "source": "--price", "date": ""}
        return listed_entry(price_data()["tokens"], name)

    def token_price(self, provider: str, model: str, input_tokens: int = 0
                    ) -> tuple[float, float] | None:
        """(in, out) USD per million tokens; the long-prompt tier above its threshold."""
        entry = self.token_entry(provider, model)
        if entry is None:
            if not self.allow_unpriced:
                return None
            return dearest_token_price()
        long = entry.get("long")
        if long and input_tokens > long["above"]:
            return float(long["in"]), float(long["out"])
        return float(entry["in"]), float(entry["out"])

    def image_entry(self, provider: str, model: str) -> dict[str, Any] | None:
        name = f"{provider}:{model}"
        given = self.overrides.get(name)
        if given is not None and len(given) == 1:  # --price IMAGE_MODEL=USD: per image
            return {"kind": "per-image", "per_image": {"standard": {"any": float(given[0])}},
                    "source": "--price", "date": ""}
        return listed_entry(price_data()["images"], name)

    def require(self, provider: str, model: str, image: bool = False) -> None:
        """Raise PriceError naming the fix when a paid call to this model cannot be priced."""
        known = (self.image_entry(provider, model) if image
                 else self.token_entry(provider, model))
        if known is None and not self.allow_unpriced:
            fix = (f"give its price per image with --price {provider}:{model}=USD, or pass "
                   "--allow-unpriced with --max-spend" if image else
                   f"give its price with --price {provider}:{model}=IN/OUT (USD per million "
                   "tokens), or pass --allow-unpriced with --max-spend")
            raise PriceError(f"{provider}:{model} has no list price in foilbench's price file; "
                             f"{fix}")


def dearest_token_price() -> tuple[float, float]:
    """What an unpriced model is reserved at: the dearest listed price, and never below
    :data:`UNPRICED_CEILING` (pro models can cost ten times the dearest listed one)."""
    rows = list(token_table().values())
    return (max([float(r["in"]) for r in rows] + [UNPRICED_CEILING[0]]),
            max([float(r["out"]) for r in rows] + [UNPRICED_CEILING[1]]))


def text_tokens_bound(texts: list[str]) -> int:
    """At most one token per UTF-8 byte (byte-level BPE and SentencePiece with byte fallback
    never make more), plus the per-message allowance.

    >>> text_tokens_bound(["héllo", "ab"])
    24
    """
    return sum(len(t.encode("utf-8")) for t in texts) + MESSAGE_OVERHEAD_TOKENS


def image_tokens_bound(provider: str, model: str, width: int, height: int) -> int:
    """Most input tokens one image of ``width x height`` can cost (see the module docstring).

    >>> image_tokens_bound("anthropic", "claude-sonnet-4-5", 300, 250)  # 100, +10% margin
    110
    >>> image_tokens_bound("openai", "gpt-4o", 1024, 1024)  # 768x768 -> 4 tiles
    765
    >>> image_tokens_bound("gemini", "gemini-2.5-flash", 256, 256)
    258
    """
    if provider == "anthropic":  # the documented formula is approximate: 10% margin
        return math.ceil(min(width * height, 1600 * 750) * 11 / 7500)
    if provider == "gemini":
        tiles = 1 if max(width, height) <= 384 else (math.ceil(width / 768)
                                                      * math.ceil(height / 768))
        per = 258 * tiles
        return max(per, 1120) if model.startswith("gemini-3") else per
    patch = ("4.1-mini", "4.1-nano", "5-mini", "5-nano", "o4-mini")
    if any(p in model for p in patch):
        return math.ceil(min(math.ceil(width / 32) * math.ceil(height / 32), 1536) * 2.5)
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        s = 2048 / max(w, h)
        w, h = w * s, h * s
    if min(w, h) > 768:
        s = 768 / min(w, h)
        w, h = w * s, h * s
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    base, tile = (2833, 5667) if "gpt-4o-mini" in model else (85, 170)
    return base + tile * tiles


def token_cost(price: tuple[float, float], input_tokens: int, output_tokens: int) -> float:
    """USD for a call billed at ``price`` (per million tokens).

    >>> round(token_cost((1.25, 10.0), 1000, 500), 6)
    0.00625
    """
    return (input_tokens * price[0] + output_tokens * price[1]) / 1e6
