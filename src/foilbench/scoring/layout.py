"""Where each item's scores come from: a flat list of (image, text) slots per item.

Every kind flattens to slots in the order of ``EvalResult.scores``:

pair          4 slots per item: [s(c0,i0), s(c0,i1), s(c1,i0), s(c1,i1)]  ([caption, image])
choice        1 + K slots: (image, captions[j]) for j = 0..K, positive first
image_choice  1 + K slots: (images[j], caption) for j = 0..K, positive first

Building the slots is vectorised per column (pandas/numpy), never a Python loop over items.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

from foilbench.data.format import Benchmark


@dataclass(frozen=True)
class SlotLayout:
    """Flat slots of all items. ``image_ref[p]`` / ``text[p]`` index the unique lists."""

    image_idx: np.ndarray  # (P,) index into unique image refs
    text_idx: np.ndarray  # (P,) index into unique texts
    item_idx: np.ndarray  # (P,) which item the slot belongs to
    slot_idx: np.ndarray  # (P,) position in that item's score vector
    n_slots: np.ndarray  # (n,) slots per item (4 for pairs, K + 1 for choices)

    def to_matrix(self, flat_scores: np.ndarray) -> np.ndarray:
        """(n, max slots) matrix, padded with -inf where an item has fewer candidates."""
        out = np.full((len(self.n_slots), int(self.n_slots.max(initial=1))), -np.inf)
        out[self.item_idx, self.slot_idx] = flat_scores
        return out


def _codes(values, index: dict[str, int]) -> np.ndarray:
    return np.fromiter((index[v] for v in values), dtype=np.int64)


def _ragged(lists) -> tuple[np.ndarray, list]:
    lens = np.fromiter((len(v) for v in lists), dtype=np.int64)
    return lens, list(chain.from_iterable(lists))


def _positions(lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """item index and within-item position of each flattened element."""
    item = np.repeat(np.arange(len(lens)), lens)
    starts = np.repeat(np.cumsum(lens) - lens, lens)
    return item, np.arange(int(lens.sum())) - starts


def build_layout(bench: Benchmark, image_index: dict[str, int],
                 text_index: dict[str, int]) -> SlotLayout:
    """Slots of every item of ``bench``; the indexes map refs/texts to unique positions."""
    items = bench.items
    n = len(items)
    if bench.kind == "pair":
        img = np.stack([_codes(items["image_base"], image_index),
                        _codes(items["image_foil"], image_index)], axis=1)
        txt = np.stack([_codes(items["caption_base"], text_index),
                        _codes(items["caption_foil"], text_index)], axis=1)
        # slot 2c + i holds s(c, i)
        image_idx = img[:, [0, 1, 0, 1]].reshape(-1)
        text_idx = txt[:, [0, 0, 1, 1]].reshape(-1)
        return SlotLayout(image_idx, text_idx, np.repeat(np.arange(n), 4),
                          np.tile(np.arange(4), n), np.full(n, 4))
    if bench.kind == "choice":
        lens, flat = _ragged(items["captions"])
        item, pos = _positions(lens)
        image_idx = _codes(items["image"], image_index)[item]
        return SlotLayout(image_idx, _codes(flat, text_index), item, pos, lens)
    if bench.kind == "image_choice":
        lens, flat = _ragged(items["images"])
        item, pos = _positions(lens)
        text_idx = _codes(items["caption"], text_index)[item]
        return SlotLayout(_codes(flat, image_index), text_idx, item, pos, lens)
    raise ValueError(f"no slot layout for kind {bench.kind!r}")
