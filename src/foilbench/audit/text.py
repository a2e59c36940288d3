"""Caption text helpers shared by the audits: tokenising and the choice-caption matrix."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from foilbench.data.format import Benchmark
from foilbench.errors import BenchmarkError
from foilbench.kinds import kinds_where

_WORD = re.compile(r"[a-z0-9']+")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, apostrophes); punctuation is dropped."""
    return _WORD.findall(text.lower())


def same_bag_of_words(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` hold the same multiset of words (a pure re-ordering)."""
    return Counter(words(a)) == Counter(words(b))


def choice_captions(bench: Benchmark) -> list[list[str]]:
    """Per item, ``[positive, negative_1, ..., negative_K]`` captions of one image.

    The benchmark's kind extracts them (:meth:`foilbench.kinds.base.ItemKind.candidate_captions`);
    blind text-only audits are defined only for kinds whose items are one image with ranked
    captions (``choice``): in a ``pair`` item both captions are correct for one of the images,
    and an ``image_choice`` item has one caption.
    """
    captions = bench.item_kind.candidate_captions(bench.items)
    if captions is None:
        wanted = " or ".join(repr(k) for k in blind_auditable_kinds())
        raise BenchmarkError(
            f"{bench.name}: blind text audits need a {wanted} benchmark (one image, a positive "
            f"caption and K negatives); this one is {bench.kind!r}"
        )
    return captions


def is_blind_auditable(bench: Benchmark) -> bool:
    """Whether the benchmark's items have caption candidates for a blind text audit."""
    return bench.item_kind.has_caption_candidates


def blind_auditable_kinds() -> list[str]:
    """Kinds whose items are one image with ranked captions."""
    return kinds_where(lambda kind: kind.has_caption_candidates)


def pad_captions(captions: list[list[str]]) -> tuple[list[str], np.ndarray]:
    """Flatten ragged caption lists: the unique texts and an (n, K_max+1) index matrix into
    them, with -1 where an item has fewer negatives."""
    texts: dict[str, int] = {}
    width = max(len(c) for c in captions)
    index = np.full((len(captions), width), -1, dtype=np.int64)
    for row, caps in enumerate(captions):
        for col, text in enumerate(caps):
            index[row, col] = texts.setdefault(text, len(texts))
    return list(texts), index


def cluster_labels(bench: Benchmark) -> np.ndarray:
    """The grouping used for cross-fitting folds: ``scene_id`` when present, else the image
    (the same image carries the same positive caption across edit types in SugarCrepe, so
    item-level folds would leak), else the item."""
    items = bench.items
    for col in ("scene_id", "image"):
        if col in items.columns and items[col].notna().all():
            return items[col].astype(str).to_numpy()
    return items["item_id"].astype(str).to_numpy()


def edit_types(bench: Benchmark) -> np.ndarray:
    items = bench.items
    if "edit_type" in items.columns:
        return items["edit_type"].fillna("unknown").astype(str).to_numpy()
    return np.full(len(items), "all", dtype=object)
