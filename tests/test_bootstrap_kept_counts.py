"""The bootstrap's count matrix drawn once per (G, B, seed) inside ``shared_resamples`` gives
the numbers of drawing it each time (stats/bootstrap._kept_counts): bit for bit, whatever the
values, in any order; nothing is kept outside the block."""

from __future__ import annotations

import numpy as np

from foilbench.stats import bootstrap
from foilbench.stats.bootstrap import (
    cluster_bootstrap_ci,
    cluster_bootstrap_means,
    shared_resamples,
)


def _drawn_each_time(sums, sizes, n_boot, seed):
    """The code before the matrix was kept: a fresh generator and draw on every call."""
    g = len(sums)
    rng = np.random.default_rng(seed)
    block = max(1, bootstrap._MAX_CELLS // g)
    out = np.empty(n_boot)
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        draws = rng.integers(0, g, size=(b, g))
        offsets = (np.arange(b) * g)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=b * g).reshape(b, g)
        counts = counts.astype(np.float64)
        out[start : start + b] = (counts @ sums) / (counts @ sizes)
    return out


def _case(rng, g):
    sizes = rng.integers(1, 30, size=g).astype(np.float64)
    sums = np.floor(rng.random(g) * (sizes + 1))
    return sums, sizes


def test_kept_counts_give_the_numbers_of_a_fresh_draw_on_every_call():
    rng = np.random.default_rng(7)
    calls = [(80, 10_000, 42), (80, 10_000, 42), (79, 10_000, 42), (80, 10_000, 3),
             (5, 2_000, 42), (80, 10_000, 42), (300, 10_000, 42), (80, 10_000, 42)]
    with shared_resamples():
        for g, n_boot, seed in calls:
            sums, sizes = _case(rng, g)
            got = bootstrap._resampled_means(sums, sizes, n_boot, seed)
            want = _drawn_each_time(sums, sizes, n_boot, seed)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got, want)  # bit for bit, not approximately
        kept = bootstrap._KEPT.get()
        assert kept and len(kept) <= bootstrap._KEPT_AT_MOST
        assert all(not c.flags.writeable for c in kept.values())
    assert bootstrap._KEPT.get() is None  # dropped with the block


def test_outside_the_block_nothing_is_kept_and_the_numbers_are_the_same():
    rng = np.random.default_rng(11)
    sums, sizes = _case(rng, 80)
    got = bootstrap._resampled_means(sums, sizes, 10_000, 42)
    assert np.array_equal(got, _drawn_each_time(sums, sizes, 10_000, 42))
    assert bootstrap._KEPT.get() is None


def test_large_matrices_are_drawn_in_blocks_as_before_and_not_kept():
    rng = np.random.default_rng(1)
    g = 1_000  # 10,000 x 1,000 counts: over the kept size, three blocks of 4,000 rows
    sums, sizes = _case(rng, g)
    with shared_resamples():
        got = bootstrap._resampled_means(sums, sizes, 10_000, 42)
        assert bootstrap._KEPT.get() == {}
    assert np.array_equal(got, _drawn_each_time(sums, sizes, 10_000, 42))


def test_public_interval_unchanged_on_a_second_call_with_other_values():
    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(80), 22)
    a = (rng.random(len(clusters)) > 0.5).astype(float)
    b = (rng.random(len(clusters)) > 0.9).astype(float)
    with shared_resamples():
        first_a = cluster_bootstrap_ci(a, clusters)
        first_b = cluster_bootstrap_ci(b, clusters)  # the kept matrix of a's call
    codes = np.unique(clusters.astype(str), return_inverse=True)[1]
    for values, got in ((a, first_a), (b, first_b)):
        sums = np.bincount(codes, weights=values, minlength=80)
        sizes = np.bincount(codes, minlength=80).astype(np.float64)
        means = _drawn_each_time(sums, sizes, 10_000, 42)
        want = tuple(float(q) for q in np.quantile(means, [0.025, 0.975]))
        assert got == want
    assert np.array_equal(cluster_bootstrap_means(a, clusters),
                          cluster_bootstrap_means(a, clusters))
