"""The two-option questions an API model is asked (CompoSET App. G.4).

An API model gives no scores, only choices: "which caption fits this image?" or "which image
fits this caption?". Each kind turns an item into a list of such questions
(:meth:`foilbench.kinds.base.ItemKind.api_asks`); :mod:`foilbench.scoring.api_protocol` asks
each one twice with the option order swapped and keeps the averaged correctness.
"""

from __future__ import annotations

from dataclasses import dataclass

from foilbench.errors import BenchmarkError


@dataclass(frozen=True)
class CaptionAsk:
    """Show ``image`` (a ref under the benchmark root); the right caption is ``right``."""

    image: str
    right: str
    wrong: str


@dataclass(frozen=True)
class ImageAsk:
    """Show ``caption``; the right image (a ref under the benchmark root) is ``right``."""

    caption: str
    right: str
    wrong: str


Ask = CaptionAsk | ImageAsk


def require_two(values, item_id, what: str) -> list:
    """The two candidates of a K = 1 item; any other count is refused, naming the item."""
    values = list(values)
    if len(values) != 2:
        raise BenchmarkError(f"item {item_id}: the API protocol asks two-option choices, so it "
                             f"needs exactly 2 {what} (K = 1 negative); this item has "
                             f"{len(values)}")
    return values
