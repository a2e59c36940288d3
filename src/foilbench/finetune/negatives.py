"""K hard negatives per positive, for the two arms of the matched comparison.

    "a Swap-only baseline using K=3 Swap negatives per positive, and a Confusion variant using
    K=3 Confusion negatives" (Auto-Comp §5); "we sample K=3 Confusion hard negatives
    stratified across the four error families from Section 6" (App. A.9).

* Swap: K draws, uniform with replacement, from the positive's false Swap negatives. At N = 2
  there is exactly one (N! - 1 = 1), so K = 3 repeats it; the paper's Color N = 2 baseline
  must do the same or use fewer columns, and it does not say which. Repeating keeps both arms
  at K text columns per positive (our reading).
* Confusion: stratified over the families the positive has (in the order of
  :data:`foilbench.finetune.data.FAMILIES`, from a random starting family): draw j goes to
  family (start + j) mod F, a uniform text within it. At N = 2 with K = 3 and three
  non-degenerate families this is one negative per family.
"""

from __future__ import annotations

import numpy as np

from foilbench.finetune.data import FAMILIES, Example


def draw_negatives(example: Example, arm: str, k: int, rng: np.random.Generator) -> list[str]:
    """``k`` negative captions of ``example`` for ``arm`` (``swap`` or ``confusion``); empty
    when the example has none of that kind (its columns are then masked out)."""
    if arm == "swap":
        pool = example.swap
        if not pool:
            return []
        return [pool[int(i)] for i in rng.integers(len(pool), size=k)]
    families = [f for f in FAMILIES if example.families.get(f)]
    if not families:
        return []
    start = int(rng.integers(len(families)))
    out = []
    for j in range(k):
        texts = example.families[families[(start + j) % len(families)]]
        out.append(texts[int(rng.integers(len(texts)))])
    return out
