"""Adversarial refinement (SugarCrepe Algorithm 1): the grid is symmetric afterwards."""

from __future__ import annotations

import numpy as np
import pytest

from foilbench.audit.refinement import grid_cells, refine


def biased_gaps(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    a = np.clip(rng.normal(0.3, 0.3, n), -1, 1)  # scorer A prefers the positive ~84%
    b = np.clip(0.5 * a + rng.normal(0.1, 0.3, n), -1, 1)
    return a, b


def test_grid_cells_bins_with_a_zero_bin():
    gaps = np.array([-1.0, -0.6, -0.01, 0.0, 0.01, 0.49, 0.5, 1.0])
    assert grid_cells(gaps, 4).tolist() == [0, 0, 1, 2, 3, 3, 4, 4]


@pytest.mark.parametrize("k,zero_bin", [(2, True), (4, True), (10, True), (100, False),
                                        (10, False)])
def test_refined_grid_is_point_symmetric_and_blind_accuracy_is_half(k, zero_bin):
    a, b = biased_gaps()
    res = refine(a, b, k=k, seed=1, zero_bin=zero_bin)
    assert res.before["a"] > 0.75
    g = res.grid_after
    assert np.array_equal(g, g[::-1, ::-1])  # cell (i, j) matches (K-1-i, K-1-j)
    expected = np.minimum(res.grid_before, res.grid_before[::-1, ::-1])
    assert np.array_equal(g, expected)  # each pair shrunk to the smaller one, no further
    assert res.after["a"] == 0.5 and res.after["b"] == 0.5  # no gap is exactly 0 here
    assert len(res.kept) == g.sum()


def test_exact_zero_gaps_are_kept_and_subsampling_is_seeded():
    a, b = biased_gaps(seed=2)
    a[:50], b[:50] = 0.0, 0.0  # blind ties on both axes: the self-symmetric centre cell
    r1, r2 = refine(a, b, k=4, seed=3, zero_bin=True), refine(a, b, k=4, seed=3, zero_bin=True)
    assert np.array_equal(r1.kept, r2.kept)
    assert r1.grid_after[2, 2] == r1.grid_before[2, 2] == 50
    assert set(range(50)) <= set(r1.kept.tolist())
    assert not np.array_equal(r1.kept, refine(a, b, k=4, seed=4, zero_bin=True).kept)
    with pytest.raises(ValueError, match="even"):
        refine(a, b, k=5, zero_bin=True)


def test_refine_rejects_unscaled_gaps():
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        refine(np.array([0.5, 2.0]), np.array([0.1, 0.2]))
