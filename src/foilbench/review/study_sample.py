"""Seeded balanced samples and Wilson rates for the Auto-Comp human studies.

Auto-Comp §6: "four graduate-level evaluators assessed 200 concepts balanced across all
configurations"; App. A.10: "Each evaluator assessed a balanced subset of 200 concepts
(resulting in 400 images across Minimal and Contextual settings)". The paper does not say how
the 200 were balanced; ours: the concepts are grouped by (task family, N), each group is
shuffled with the seed, and the groups are taken round-robin until the sample size. A sampled
concept brings every unit it has (its Minimal and Contextual images; for solvability also its
Swap and Confusion items).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

import numpy as np

from foilbench.review.units import ReviewError

T = TypeVar("T")
SAMPLE_SIZE = 200  # App. A.10: "a balanced subset of 200 concepts"


class ConceptMember(Protocol):
    """A unit of a sampled concept: its concept and the (task, N) group it balances over."""

    @property
    def concept_id(self) -> str: ...
    @property
    def task(self) -> str: ...
    @property
    def n_objects(self) -> int: ...


U = TypeVar("U", bound=ConceptMember)


def round_robin(groups: Mapping[str, Sequence[T]], n: int, seed: int) -> list[T]:
    """Up to ``n`` members, one group at a time in sorted group order, each group shuffled
    with ``seed`` (module docstring)."""
    if n < 1:
        raise ReviewError(f"the sample size must be at least 1, got {n}")
    rng = np.random.default_rng(seed)
    queues = [[members[int(i)] for i in rng.permutation(len(members))]
              for _, members in sorted(groups.items())]
    out: list[T] = []
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop(0))
    return out


def sample_concepts(units: Sequence[U], n: int, seed: int) -> list[list[U]]:
    """The units of ``n`` concepts, one list per concept in sample order: the concepts
    grouped by (task, N) and taken :func:`round_robin` (module docstring)."""
    by_concept: dict[str, list[U]] = {}
    for u in units:
        by_concept.setdefault(u.concept_id, []).append(u)
    groups: dict[str, list[str]] = {}
    for cid, us in sorted(by_concept.items()):
        groups.setdefault(f"{us[0].task} N={us[0].n_objects}", []).append(cid)
    return [by_concept[cid] for cid in round_robin(groups, n, seed)]


def rate(k: int, n: int) -> dict:
    """``k / n`` with its Wilson 95% interval; ``None`` values when ``n`` is 0."""
    from foilbench.stats.intervals import wilson_ci

    if n == 0:
        return {"k": k, "n": n, "rate": None, "ci_low": None, "ci_high": None}
    lo, hi = wilson_ci(k, n)
    return {"k": k, "n": n, "rate": k / n, "ci_low": lo, "ci_high": hi}
