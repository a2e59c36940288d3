"""Flat (image, text) slots of every item, and the padded score matrix built from them.

Every kind flattens its items to slots in the order of ``EvalResult.scores``; the engine scores
all slots at once and :meth:`SlotLayout.to_matrix` puts them back per item. Items with fewer
candidates than the widest one are padded with ``-inf``, the one padding everywhere (scoring,
margins, analyses): a pad never beats a real score under strict ``>`` and ``max`` ignores it.

The helpers here (:func:`codes`, :func:`ragged`, :func:`positions`) are what a kind's
``layout`` is built from; they are vectorised per column, never a Python loop over items.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

PAD = -np.inf


@dataclass(frozen=True)
class SlotLayout:
    """Flat slots of all items. ``image_idx[p]`` / ``text_idx[p]`` index the unique lists."""

    image_idx: np.ndarray  # (P,) index into unique image refs
    text_idx: np.ndarray  # (P,) index into unique texts
    item_idx: np.ndarray  # (P,) which item the slot belongs to
    slot_idx: np.ndarray  # (P,) position in that item's score vector
    n_slots: np.ndarray  # (n,) slots per item (4 for pairs, K + 1 for choices)

    def to_matrix(self, flat_scores: np.ndarray) -> np.ndarray:
        """(n, max slots) matrix, padded with -inf where an item has fewer candidates."""
        out = np.full((len(self.n_slots), int(self.n_slots.max(initial=1))), PAD)
        out[self.item_idx, self.slot_idx] = flat_scores
        return out


def codes(values: Iterable[str], index: dict[str, int]) -> np.ndarray:
    """Position of each value in ``index`` (the unique image refs or texts)."""
    return np.fromiter((index[v] for v in values), dtype=np.int64)


def ragged(lists: Iterable[Sequence[str]]) -> tuple[np.ndarray, list]:
    """Lengths of ragged lists and their elements flattened in order."""
    lists = list(lists)
    lens = np.fromiter((len(v) for v in lists), dtype=np.int64, count=len(lists))
    return lens, list(chain.from_iterable(lists))


def positions(lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Item index and within-item position of each flattened element."""
    item = np.repeat(np.arange(len(lens)), lens)
    starts = np.repeat(np.cumsum(lens) - lens, lens)
    return item, np.arange(int(lens.sum())) - starts


def fixed_layout(image_codes: np.ndarray, text_codes: np.ndarray) -> SlotLayout:
    """Layout of items that all have the same slots: ``image_codes`` and ``text_codes`` are
    (n, S) arrays, row k holding item k's S (image, text) slots in score order."""
    n, width = image_codes.shape
    return SlotLayout(image_codes.reshape(-1), text_codes.reshape(-1),
                      np.repeat(np.arange(n), width), np.tile(np.arange(width), n),
                      np.full(n, width))


def pad_scores(rows: Iterable[Sequence[float]]) -> np.ndarray:
    """Stack variable-length score rows into an (n, max length) float64 matrix padded with -inf.

    >>> pad_scores([[0.5, 0.1], [0.2, 0.3, 0.4]]).tolist()
    [[0.5, 0.1, -inf], [0.2, 0.3, 0.4]]
    """
    arrays = [np.asarray(r, dtype=np.float64).reshape(-1) for r in rows]
    out = np.full((len(arrays), max((len(r) for r in arrays), default=0)), PAD)
    for k, r in enumerate(arrays):
        out[k, : len(r)] = r
    return out
