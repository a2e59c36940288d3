"""Adversarial refinement (SugarCrepe Algorithm 1): subsample a benchmark so two blind
scorers can no longer tell positives from negatives.

Each item carries two score gaps in [-1, 1], g_a and g_b (scorer's value of the positive minus
that of the negative; > 0 means the blind scorer picks the positive). Each axis is cut into K
equal bins over [-1, 1] (K even, so 0 is a bin edge), plus one bin that holds exact zeros (a
blind tie, frequent for length on replace edits): K + 1 bins, the zero bin in the middle.
Cell (i, j) holds items with g_a in bin i and g_b in bin j; its symmetric cell is the point
reflection (K-i, K-j), which holds the gaps of opposite sign and equal magnitude. Each pair of
symmetric cells is balanced by subsampling the larger to the size of the smaller (seeded);
the self-symmetric cell (zero, zero) is kept whole. Afterwards every positive-favouring cell
is matched one-for-one by a negative-favouring one, so each blind scorer prefers the positive
exactly as often as the negative (ties, still failures under strict >, aside).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Refinement:
    kept: np.ndarray  # sorted indices of the kept items
    before: dict[str, float]  # blind accuracy of each scorer on all items
    after: dict[str, float]  # ... on the kept items
    grid_before: np.ndarray  # (K+1) x (K+1) counts, the zero bin in the middle
    grid_after: np.ndarray


def grid_cells(gaps: np.ndarray, k: int) -> np.ndarray:
    """Bin index in [0, k] of each gap: k/2 for an exact zero, k/2 + 1 .. k for positive gaps
    (equal bins of width 2/k over (0, 1]), k/2 - 1 .. 0 for the mirrored negative ones."""
    g = np.asarray(gaps, np.float64)
    half = k // 2
    step = np.minimum(np.floor(np.abs(g) * half).astype(np.int64), half - 1)
    return np.where(g > 0, half + 1 + step, np.where(g < 0, half - 1 - step, half))


def blind_accuracy(gaps: np.ndarray) -> float:
    """Share of items whose gap is strictly positive (the scorer prefers the positive); NaN
    for no items (everything refined away)."""
    gaps = np.asarray(gaps)
    return float(np.mean(gaps > 0)) if len(gaps) else float("nan")


def refine(gap_a: np.ndarray, gap_b: np.ndarray, k: int = 10, seed: int = 0) -> Refinement:
    """Balance the symmetric cells of the (K+1) x (K+1) gap grid (see the module docstring)."""
    gap_a = np.asarray(gap_a, np.float64)
    gap_b = np.asarray(gap_b, np.float64)
    if gap_a.shape != gap_b.shape or gap_a.ndim != 1:
        raise ValueError(f"gap arrays must be 1-D and equal length, got {gap_a.shape}, "
                         f"{gap_b.shape}")
    for name, g in (("gap_a", gap_a), ("gap_b", gap_b)):
        if np.isnan(g).any() or np.abs(g).max(initial=0) > 1:
            raise ValueError(f"{name} must lie in [-1, 1] without NaN (scale the gaps first)")
    if k < 2 or k % 2:
        raise ValueError(f"grid size k must be even and >= 2, got {k}")
    side = k + 1
    cell = grid_cells(gap_a, k) * side + grid_cells(gap_b, k)
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(cell), bool)
    n_cells = side * side
    order = np.argsort(cell, kind="stable")
    starts = np.searchsorted(cell[order], np.arange(n_cells + 1))
    members = [order[starts[c] : starts[c + 1]] for c in range(n_cells)]
    for c in range(n_cells):
        m = n_cells - 1 - c  # the point reflection (K-i, K-j) of cell (i, j)
        if c > m:
            continue
        if c == m:
            keep[members[c]] = True
            continue
        n = min(len(members[c]), len(members[m]))
        for group in (members[c], members[m]):
            keep[rng.choice(group, size=n, replace=False)] = True
    kept = np.flatnonzero(keep)
    counts = lambda idx: np.bincount(cell[idx], minlength=n_cells).reshape(side, side)  # noqa: E731
    return Refinement(
        kept=kept,
        before={"a": blind_accuracy(gap_a), "b": blind_accuracy(gap_b)},
        after={"a": blind_accuracy(gap_a[kept]), "b": blind_accuracy(gap_b[kept])},
        grid_before=counts(np.arange(len(cell))),
        grid_after=counts(kept),
    )
