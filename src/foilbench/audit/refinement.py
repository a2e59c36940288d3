"""Adversarial refinement (SugarCrepe Algorithm 1): subsample a benchmark so two blind
scorers can no longer tell positives from negatives.

Each item carries two score gaps in [-1, 1], g_a and g_b (scorer's value of the positive minus
that of the negative; > 0 means the blind scorer picks the positive). SugarCrepe App. D.3:
"we split the 2D space of the joint range of g(1) and g(2) into 100 x 100 equal grids, and for
each pair of symmetric grids, e.g., {(g(1), g(2)) | g(1) in (0.02, 0.04], ...}, we preserve the
same number of data for both grids, therefore we ensure that for the resultant set,
E_i[M_1(p_i) > M_1(n_i)] = 0.5 and E_i[M_2(p_i) > M_2(n_i)] = 0.5."

Two binnings of each axis, both kept:

* the paper's (default, ``zero_bin=False``, K = 100): K equal bins over [-1, 1], half-open on
  the left as the paper's example ``(0.02, 0.04]`` (bin j = ceil((g + 1) K / 2) - 1, g = -1 in
  bin 0). Cell (i, j) and its point reflection (K-1-i, K-1-j) are balanced. An exact zero gap
  (a blind tie, a failure under strict >) lies in the bin (-2/K, 0] and is balanced against
  the bin (0, 2/K]: on the kept set the scorer wins exactly half of the matched pairs.
* foilbench's (``zero_bin=True``, K even): the same K bins plus one bin that holds exact zeros
  (K + 1 bins, the zero bin in the middle). Ties (frequent for length on replace edits) sit in
  the self-symmetric cells and are kept whole rather than traded against small positive gaps;
  on the kept set the scorer then prefers the positive exactly as often as the negative, ties
  aside.

Each pair of symmetric cells is balanced by subsampling the larger to the size of the smaller
(seeded); a self-symmetric cell is kept whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Refinement:
    kept: np.ndarray  # sorted indices of the kept items
    before: dict[str, float]  # blind accuracy of each scorer on all items
    after: dict[str, float]  # ... on the kept items
    grid_before: np.ndarray  # K x K counts (paper), or (K+1) x (K+1) with the zero bin
    grid_after: np.ndarray


PAPER_GRID = 100  # SugarCrepe App. D.3: "100 x 100 equal grids"


def grid_cells(gaps: np.ndarray, k: int) -> np.ndarray:
    """foilbench's binning: index in [0, k] of each gap: k/2 for an exact zero, k/2 + 1 .. k
    for positive gaps (equal bins of width 2/k over (0, 1]), k/2 - 1 .. 0 for the mirrored
    negative ones."""
    g = np.asarray(gaps, np.float64)
    half = k // 2
    step = np.minimum(np.floor(np.abs(g) * half).astype(np.int64), half - 1)
    return np.where(g > 0, half + 1 + step, np.where(g < 0, half - 1 - step, half))


def paper_grid_cells(gaps: np.ndarray, k: int = PAPER_GRID) -> np.ndarray:
    """The paper's binning: K equal bins over [-1, 1] of the form (a, b] (App. D.3's example
    "(0.02, 0.04]"): index ceil((g + 1) K / 2) - 1, with g = -1 in bin 0.

    >>> paper_grid_cells(np.array([-1.0, -0.02, 0.0, 0.02, 0.03, 1.0]), 100).tolist()
    [0, 48, 49, 50, 51, 99]
    """
    g = np.asarray(gaps, np.float64)
    j = np.ceil(np.round((g + 1.0) * k / 2.0, 9)).astype(np.int64) - 1
    return np.clip(j, 0, k - 1)


def blind_accuracy(gaps: np.ndarray) -> float:
    """Share of items whose gap is strictly positive (the scorer prefers the positive); NaN
    for no items (everything refined away)."""
    gaps = np.asarray(gaps)
    return float(np.mean(gaps > 0)) if len(gaps) else float("nan")


def refine(gap_a: np.ndarray, gap_b: np.ndarray, k: int = PAPER_GRID, seed: int = 0,
           zero_bin: bool = False) -> Refinement:
    """Balance the symmetric cells of the gap grid: K x K as the paper (default K = 100), or
    (K+1) x (K+1) with foilbench's zero bin (see the module docstring)."""
    gap_a = np.asarray(gap_a, np.float64)
    gap_b = np.asarray(gap_b, np.float64)
    if gap_a.shape != gap_b.shape or gap_a.ndim != 1:
        raise ValueError(f"gap arrays must be 1-D and equal length, got {gap_a.shape}, "
                         f"{gap_b.shape}")
    for name, g in (("gap_a", gap_a), ("gap_b", gap_b)):
        if np.isnan(g).any() or np.abs(g).max(initial=0) > 1:
            raise ValueError(f"{name} must lie in [-1, 1] without NaN (scale the gaps first)")
    if k < 2 or (zero_bin and k % 2):
        raise ValueError(f"grid size k must be >= 2 (and even with the zero bin), got {k}")
    side = k + 1 if zero_bin else k
    bins = (lambda g: grid_cells(g, k)) if zero_bin else (lambda g: paper_grid_cells(g, k))
    cell = bins(gap_a) * side + bins(gap_b)
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(cell), bool)
    n_cells = side * side
    order = np.argsort(cell, kind="stable")
    starts = np.searchsorted(cell[order], np.arange(n_cells + 1))
    members = [order[starts[c] : starts[c + 1]] for c in range(n_cells)]
    for c in range(n_cells):
        m = n_cells - 1 - c  # the point reflection (side-1-i, side-1-j) of cell (i, j)
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
