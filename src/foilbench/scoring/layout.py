"""Where each item's scores come from: a flat list of (image, text) slots per item.

Each kind lays out its own items (:meth:`foilbench.kinds.base.ItemKind.layout`, documented in
the kind's module): pair 4 slots, [s(c0,i0), s(c0,i1), s(c1,i0), s(c1,i1)]; choice and
image_choice 1 + K slots, positive first. This module binds a benchmark to its kind.
"""

from __future__ import annotations

from foilbench.data.format import Benchmark
from foilbench.kinds.slots import SlotLayout

__all__ = ["SlotLayout", "build_layout"]


def build_layout(bench: Benchmark, image_index: dict[str, int],
                 text_index: dict[str, int]) -> SlotLayout:
    """Slots of every item of ``bench``; the indexes map refs/texts to unique positions."""
    return bench.item_kind.layout(bench.items, image_index, text_index)
