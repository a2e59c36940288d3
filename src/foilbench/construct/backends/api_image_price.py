"""Worst case and billed cost of one image generation or edit call (issue 24's rule).

Worst case, reserved before the call: GPT image models (priced per token) at the output tokens
listed for the sent size and quality (the ``high`` row when the quality is left to the
provider, the largest size when the size is not listed), the prompt at one token per byte
and, for an edit, the input image and the mask at the most input tokens an image can cost;
DALL-E at the listed price for the size and quality (``standard`` by default); Gemini image
models under the ``maxOutputTokens`` we send (:func:`gemini_output_limit`: one image's tokens
plus ``text_room``, default ``GEMINI_TEXT_ROOM``), filled with as many whole images as fit at
the image rate and the rest at the text rate (a reply may hold several images: pricing one
image only was a gap), the prompt and the input image at their bounds. A model priced with
``--price MODEL=USD`` is priced per image. An unpriced model (allowed with
``--allow-unpriced``) is reserved and billed as the dearest listed model of its provider
(:func:`stand_in`): from the reply's usage when it has one, else at that worst case (issue 40:
a flat $0.50 whatever the usage said could be below what was billed).

Billed, settled after the reply: GPT image models from ``usage`` (text and image input tokens,
output tokens); DALL-E at the list price (its replies carry no usage); Gemini from
``usageMetadata`` (image and text output split by ``candidatesTokensDetails`` when given, else
all output at the image rate). No usage, or usage without the input or the output count (a
gateway's habit): the worst case stands, never 0 for the missing count.
"""

from __future__ import annotations

from typing import Any

from foilbench.models.api.prices import (
    PriceBook,
    image_tokens_bound,
    listed_entry,
    price_data,
    text_tokens_bound,
)

GEMINI_TEXT_ROOM = 1024  # output tokens beyond one image: text, and thinking where a model thinks


def gemini_output_limit(prices: PriceBook, model: str) -> int | None:
    """The ``maxOutputTokens`` sent to a Gemini image model (an unpriced one: its stand-in's;
    None for one priced per image with ``--price``)."""
    entry = prices.image_entry("gemini-image", model)
    if entry is None:
        _, entry = stand_in("gemini-image")
    if entry.get("kind") != "gemini-tokens":
        return None
    return int(entry["tokens_per_image"]) + int(entry.get("text_room", GEMINI_TEXT_ROOM))


def _pick(table: dict[str, float], size: str) -> float:
    return float(table[size]) if size in table else max(float(v) for v in table.values())


def worst_case(prices: PriceBook, provider: str, model: str, prompt: str,
               size: str | None, quality: str | None, image_size: tuple[int, int] | None,
               has_mask: bool) -> float:
    """USD one call can cost at most (module docstring); ``size`` is the size sent
    (``WxH``, OpenAI only), ``image_size`` the edit input's pixel size (None: generation).

    >>> round(worst_case(PriceBook(), "openai-image", "gpt-image-1", "ab", "1024x1024",
    ...                  "medium", None, False), 6)  # 1056 x $40/M + 18 x $5/M
    0.04233
    >>> round(worst_case(PriceBook(), "gemini-image", "gemini-2.5-flash-image", "ab", None,
    ...                  None, None, False), 7)  # 18 x 0.3 + 1290 x 30 + 1024 x 2.5, per M
    0.0412654
    >>> worst_case(PriceBook(), "openai-image", "dall-e-3", "ab", "1792x1024", "hd", None, False)
    0.12
    """
    entry = prices.image_entry(provider, model)
    if entry is None:
        prices.require(provider, model, image=True)
        model, entry = stand_in(provider)
    return _worst(entry, model, prompt, size, quality, image_size, has_mask, prices)


def stand_in(provider: str) -> tuple[str, dict[str, Any]]:
    """(model, entry) of the listed image model of ``provider`` whose worst case for one
    large edit is dearest: what an unpriced model of that provider is priced as."""
    table = price_data()["images"]
    rows = [(k.split(":", 1)[1], listed_entry(table, k)) for k in table
            if k.startswith(f"{provider}:") and "same_as" not in table[k]]
    return max(rows, key=lambda r: _worst(r[1], r[0], "x" * 1000, "1536x1024", None,
                                          (1024, 1024), True, PriceBook()))


def _worst(entry: dict[str, Any], model: str, prompt: str, size: str | None,
           quality: str | None, image_size: tuple[int, int] | None, has_mask: bool,
           prices: PriceBook) -> float:
    prompt_tokens = text_tokens_bound([prompt])
    n_inputs = (1 + int(has_mask)) if image_size is not None else 0
    if entry["kind"] == "openai-tokens":
        out = _pick(entry["output_tokens"][quality if quality in entry["output_tokens"]
                                           else "high"], size or "")
        image_in = n_inputs * float(entry["input_image_tokens_max"])
        return (prompt_tokens * entry["text_in"] + image_in * entry["image_in"]
                + out * entry["out"]) / 1e6
    if entry["kind"] == "per-image":
        return list_price(entry, size, quality)
    image_in = (image_tokens_bound("gemini", model, *image_size) if image_size else 0)
    limit = int(entry["tokens_per_image"]) + int(entry.get("text_room", GEMINI_TEXT_ROOM))
    per_image = int(entry["tokens_per_image"])
    images = limit // per_image
    out = (images * per_image * max(entry["image_out"], entry["text_out"])
           + (limit - images * per_image) * entry["text_out"])
    return ((prompt_tokens + image_in) * entry["in"] + out) / 1e6


def list_price(entry: dict[str, Any], size: str | None, quality: str | None) -> float:
    table = entry["per_image"]
    row = table.get(quality or "standard") or max(table.values(), key=lambda r: max(r.values()))
    return _pick(row, size or "")


def billed(prices: PriceBook, provider: str, model: str, size: str | None,
           quality: str | None, data: dict) -> float | None:
    """USD the reply says was billed; None when it does not say (the worst case stands)."""
    entry = prices.image_entry(provider, model)
    if entry is None:  # --allow-unpriced: billed as the stand-in, from the usage
        model, entry = stand_in(provider)
    if entry["kind"] == "per-image":
        return list_price(entry, size, quality)
    if entry["kind"] == "openai-tokens":
        usage = data.get("usage")
        if not usage or not {"input_tokens", "output_tokens"} <= set(usage):
            return None  # a count left out is not 0: the worst case stands
        details = usage.get("input_tokens_details") or {}
        text_in = int(details.get("text_tokens", usage.get("input_tokens", 0)))
        image_in = int(details.get("image_tokens", 0))
        return (text_in * entry["text_in"] + image_in * entry["image_in"]
                + int(usage.get("output_tokens", 0)) * entry["out"]) / 1e6
    meta = data.get("usageMetadata")
    if not meta or "promptTokenCount" not in meta or not (
            "candidatesTokenCount" in meta or meta.get("candidatesTokensDetails")):
        return None  # a count left out is not 0: the worst case stands
    out_image = out_text = 0
    details = meta.get("candidatesTokensDetails")
    if details:
        for d in details:
            n = int(d.get("tokenCount", 0))
            if d.get("modality") == "IMAGE":
                out_image += n
            else:
                out_text += n
    else:
        out_image = int(meta.get("candidatesTokenCount", 0))
    out_text += int(meta.get("thoughtsTokenCount", 0))
    return (int(meta.get("promptTokenCount", 0)) * entry["in"] + out_image * entry["image_out"]
            + out_text * entry["text_out"]) / 1e6
