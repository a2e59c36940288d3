"""``r1_valid``: R@1 against the false negatives only, for choice items with true negatives.

Auto-Comp §3 scores the positive against every candidate: "accuracy is reported as the rate at
which the positive caption is selected", chance 1 / |candidates| (Table 5's "random chance").
Its Confusion sets (and some relational Swap sets) hold captions that are true of the image
(:mod:`foilbench.construct.autocomp.truth`); under strict ``>`` a model that judges truth
perfectly scores those items 0, because a true caption can only tie with the positive or beat
it. foilbench keeps the paper's ``r1`` and adds, for items whose ``true_negatives`` column
lists the caption indices (1-based, ``captions = [positive, *negatives]``) of true negatives:

    R@1_valid(n) = [scores[n, 0] > max over false negatives k of scores[n, k]]
    chance(n)    = 1 / (1 + #false negatives)

A true negative is neither a competitor nor counted in chance. An item whose negatives are all
true has no false one: it counts as a success with chance 1 (no such item in the suite). Ties
follow the strict rule: a false negative equal to the positive is a failure, and counted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from foilbench.errors import BenchmarkError

METRIC = "r1_valid"
COLUMN = "true_negatives"


def valid_choice(scores: np.ndarray, n_slots: Sequence[int],
                 true_idx: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(outcome, tie, chance) per item from the padded (n, K + 1) choice score matrix.

    >>> import numpy as np
    >>> s = np.array([[0.5, 0.9, 0.4], [0.5, 0.5, 0.1]])
    >>> out, tie, chance = valid_choice(s, [3, 3], [[1], []])
    >>> out.tolist(), tie.tolist(), chance.tolist()
    ([1.0, 0.0], [False, True], [0.5, 0.3333333333333333])
    """
    s = np.array(scores, dtype=np.float64)
    slots = np.asarray(n_slots, dtype=np.int64)
    if s.ndim != 2 or len(s) != len(slots) or len(true_idx) != len(s):
        raise ValueError(f"valid_choice: scores {s.shape}, {len(n_slots)} slot counts and "
                         f"{len(true_idx)} true-negative lists must agree")
    neg = s[:, 1:].copy()
    for row, idx in enumerate(true_idx):
        where = np.asarray(list(idx), dtype=np.int64)
        if where.size and (where.min() < 1 or where.max() >= slots[row]):
            raise ValueError(f"item #{row}: true negative index out of 1..{slots[row] - 1}: "
                             f"{where.tolist()}")
        neg[row, where - 1] = -np.inf
    best = neg.max(axis=1) if neg.shape[1] else np.full(len(s), -np.inf)
    n_false = (slots - 1) - np.array([len(set(i)) for i in true_idx], dtype=np.int64)
    outcome = (s[:, 0] > best).astype(np.float64)
    tie = s[:, 0] == best
    return outcome, tie, 1.0 / (1.0 + n_false)


def valid_outcomes(items, matrix: np.ndarray, n_slots, *, where: str = ""
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(outcome, tie, chance) of ``r1_valid`` when the choice items carry ``true_negatives``,
    else None; ``where`` (the benchmark's name) prefixes the error for a malformed list."""
    if COLUMN not in items.columns:
        return None
    lists = []
    for item_id, value in zip(items["item_id"], items[COLUMN], strict=True):
        try:
            lists.append([int(v) for v in (value if value is not None else [])])
        except (TypeError, ValueError):
            raise BenchmarkError(f"{where}: item {item_id!r}: column {COLUMN!r} must "
                                 f"be a list of caption indices, got {value!r}") from None
    try:
        return valid_choice(matrix, n_slots, lists)
    except ValueError as e:
        raise BenchmarkError(f"{where}: {e}") from None
