"""Draw the side-by-side pairs of SugarCrepe App. E.2 from two benchmarks' negatives.

SugarCrepe App. E.2: "we randomly sample 100 examples for each of the hard negative types:
Replace, Swap, and Negate/ Add. Each example is organized to consist of (1) the original
positive text, (2) its hard negative in ARO+CREPE, and (3) its hard negative in SugarCrepe.
... Note that we compare Negate in ARO+CREPE to Add in SugarCrepe".

How a pair is matched (the ``match`` of each pair, counted in the report):

- ``positive``: the two items share their positive caption (case, spacing and a final full
  stop aside) -- the paper's layout, one positive and its two negatives;
- ``image``: no shared positive, but the same image file name (COCO's, say); both positives
  are shown;
- ``sampled``: neither; the remaining items of the type are paired at random with the seed
  (the paper does not say how to pair benchmarks that share neither; both positives shown).

Pairs are drawn within a *type family*: an item's ``operation`` column (``replace``,
``swap``, ``add``, ...), else the part of its ``edit_type`` before ``_`` or ``-``; ``negate``
counts as ``add`` (the paper's pairing), and the caller may map more (``shuffle`` -> ``swap``
to count ARO's Order shuffles as swaps; the paper does not say where they went). Per family, up to ``n`` pairs are taken: positive
matches first, then image matches, then sampled ones, each group in seeded order. An item
with several negatives shows one, chosen with the seed (keyed by its id, so the choice does
not depend on the other items). Which benchmark is left is a seeded coin per pair.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np

from foilbench.data.format import Benchmark
from foilbench.review.units import ReviewError

ALIASES = {"negate": "add"}  # SugarCrepe App. E.2: "we compare Negate ... to Add"
MATCHES = ("positive", "image", "sampled")
FAMILY_LIMIT = 40
TEXT_LIMIT = 1000  # a caption longer than this is cut for the page (data, not markup)


@dataclass(frozen=True)
class Negative:
    """One item of one benchmark as the comparison sees it."""

    item_id: str
    family: str
    image: str
    positive: str
    negative: str


@dataclass(frozen=True)
class ComparePair:
    pair_id: str
    family: str
    match: str
    a: Negative
    b: Negative
    left: str  # "a" or "b": which benchmark's negative the page shows on the left


def _rng(seed: int, *key: str) -> np.random.Generator:
    digest = hashlib.sha256("\x00".join((str(seed), *key)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def norm_text(text: str) -> str:
    return re.sub(r"\s+", " ", str(text).strip().casefold()).rstrip(".").strip()


def family_of(row, aliases: dict[str, str] | None = None) -> str:
    """The type family of an item (module docstring); ``aliases`` maps more families onto
    others (``{"shuffle": "swap"}``), after the paper's Negate -> Add."""
    op = getattr(row, "operation", None)
    if not isinstance(op, str) or not op.strip():
        et = getattr(row, "edit_type", None)
        op = re.split(r"[_\-\s]", et.strip(), maxsplit=1)[0] if isinstance(et, str) else ""
    op = re.sub(r"[^\w\-]+", "-", op.strip().casefold())[:FAMILY_LIMIT].strip("-")
    op = op or "(none)"  # a family is data: shown in tables, so bounded to word characters
    op = ALIASES.get(op, op)
    return (aliases or {}).get(op, op)


def negatives(bench: Benchmark, seed: int,
              aliases: dict[str, str] | None = None) -> list[Negative]:
    """One :class:`Negative` per item of a benchmark whose items rank captions."""
    kind = bench.item_kind
    candidates = kind.candidate_captions(bench.items)
    if candidates is None:
        raise ReviewError(f"{bench.name}: the comparison needs items with a positive caption "
                          f"and hard negatives (a choice benchmark); this one is of kind "
                          f"{bench.kind!r}")
    image_col = kind.image_columns[0] if kind.image_columns else None
    out = []
    for caps, row in zip(candidates, bench.items.itertuples(index=False), strict=True):
        item_id = str(row.item_id)
        if len(caps) < 2:
            raise ReviewError(f"{bench.name}: item {item_id!r} has no negative caption")
        k = 1 + int(_rng(seed, "negative", item_id).integers(len(caps) - 1))
        image = str(getattr(row, image_col)) if image_col else ""
        out.append(Negative(item_id, family_of(row, aliases), image, str(caps[0]), str(caps[k])))
    if not out:
        raise ReviewError(f"{bench.name}: the benchmark has no items")
    return out


def _shuffled(items: list, seed: int, *key: str) -> list:
    order = _rng(seed, *key).permutation(len(items))
    return [items[i] for i in order]


def _match_family(a: list[Negative], b: list[Negative], seed: int,
                  family: str) -> dict[str, list[tuple[Negative, Negative]]]:
    """Every A item matched at most once, by positive, then image, then at random."""
    got: dict[str, list[tuple[Negative, Negative]]] = {m: [] for m in MATCHES}
    free_b = {x.item_id: x for x in _shuffled(b, seed, "b", family)}
    rest_a = _shuffled(a, seed, "a", family)
    for match, key in (("positive", lambda x: norm_text(x.positive)),
                       ("image", lambda x: PurePosixPath(x.image).name if x.image else None)):
        index: dict[str, list[str]] = {}
        for x in free_b.values():
            if key(x):
                index.setdefault(key(x), []).append(x.item_id)
        left_over = []
        for x in rest_a:
            ids = index.get(key(x)) if key(x) else None
            if ids:
                got[match].append((x, free_b.pop(ids.pop(0))))
            else:
                left_over.append(x)
        rest_a = left_over
    got["sampled"] = list(zip(rest_a, free_b.values(), strict=False))  # the shorter ends it
    return got


def draw_pairs(a: list[Negative], b: list[Negative], n: int, seed: int) -> list[ComparePair]:
    """Up to ``n`` pairs per family present in both (module docstring), in a stable order."""
    if n < 1:
        raise ReviewError(f"the number of pairs per type must be at least 1, got {n}")
    pairs = []
    for family in sorted({x.family for x in a} & {x.family for x in b}):
        matched = _match_family([x for x in a if x.family == family],
                                [x for x in b if x.family == family], seed, family)
        taken = [(m, p) for m in MATCHES for p in matched[m]][:n]
        for i, (match, (x, y)) in enumerate(taken):
            left = "a" if _rng(seed, "side", x.item_id, y.item_id).random() < 0.5 else "b"
            pairs.append(ComparePair(f"{family}/{i}", family, match, x, y, left))
    if not pairs:
        raise ReviewError("the two benchmarks share no type family (operation / edit_type: "
                          f"{sorted({x.family for x in a})} vs {sorted({x.family for x in b})})"
                          "; nothing to compare")
    return pairs


def fingerprint(items: list[Negative]) -> str:
    """A digest of what a benchmark offers the comparison (ids, families, texts)."""
    rows = sorted((x.item_id, x.family, x.positive, x.negative) for x in items)
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]
