"""Scene-clustered percentile bootstrap, vectorised over resamples.

Each resample draws G clusters with replacement from the G observed clusters; a cluster drawn
k times contributes all its rows k-fold. With per-cluster sums S_g and sizes n_g and draw
counts C[b, g], the resampled pooled mean is

    mean_b = (C[b] . S) / (C[b] . n)

so B resamples cost one (B x G) count matrix and two matrix-vector products, no Python loop.
The interval is the (alpha/2, 1 - alpha/2) percentile of mean_b.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

DEFAULT_N_BOOT = 10_000
DEFAULT_SEED = 42


def _cluster_codes(clusters: np.ndarray | None, n: int) -> tuple[np.ndarray, int]:
    if clusters is None:
        return np.arange(n), n
    clusters = np.asarray(clusters)
    if len(clusters) != n:
        raise ValueError(f"clusters has length {len(clusters)}, values has length {n}")
    _, codes = np.unique(clusters.astype(str), return_inverse=True)
    return codes, int(codes.max()) + 1


_MAX_CELLS = 4_000_000  # resamples are drawn in blocks of at most this many counts


def _count_block(rng: np.random.Generator, b: int, g: int) -> np.ndarray:
    """(b x g) draw counts: row r says how often each cluster was drawn in resample r."""
    draws = rng.integers(0, g, size=(b, g))
    offsets = (np.arange(b) * g)[:, None]
    counts = np.bincount((draws + offsets).ravel(), minlength=b * g).reshape(b, g)
    return counts.astype(np.float64)


# the count matrix of one block depends on (g, n_boot, seed) only, not on the values: a
# run's metric table bootstraps every metric, tier and breakdown group of one benchmark with
# the same seed and, mostly, the same G (its scenes), so inside :func:`shared_resamples` the
# matrix is drawn once and reused (the same numbers as drawing it again). Small matrices
# only (at most _KEPT_CELLS counts each, _KEPT_AT_MOST of them), read-only, and dropped when
# the block ends: nothing stays in the caller's process after a run.
_KEPT_CELLS = 1_000_000
_KEPT_AT_MOST = 4
_KEPT: ContextVar[dict[tuple[int, int, int], np.ndarray] | None] = ContextVar(
    "foilbench_bootstrap_counts", default=None)


@contextmanager
def shared_resamples() -> Iterator[None]:
    """Inside this block, bootstraps with the same clusters count, resamples and seed reuse
    one count matrix (:func:`_kept_counts`); outside it every call draws its own. The
    numbers are the same either way."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def _kept_counts(g: int, n_boot: int, seed: int) -> np.ndarray:
    kept = _KEPT.get()
    if kept is None:
        return _count_block(np.random.default_rng(seed), n_boot, g)
    key = (g, n_boot, seed)
    counts = kept.pop(key, None)
    if counts is None:
        counts = _count_block(np.random.default_rng(seed), n_boot, g)
        counts.setflags(write=False)
    while len(kept) >= _KEPT_AT_MOST:
        del kept[next(iter(kept))]  # the least recently used
    kept[key] = counts
    return counts


def _resampled_means(sums: np.ndarray, sizes: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    g = len(sums)
    if n_boot * g <= _KEPT_CELLS:  # one block (_KEPT_CELLS <= _MAX_CELLS): drawn once
        counts = _kept_counts(g, n_boot, seed)
        return (counts @ sums) / (counts @ sizes)
    rng = np.random.default_rng(seed)
    block = max(1, _MAX_CELLS // g)
    out = np.empty(n_boot)
    for start in range(0, n_boot, block):  # blocks bound memory; each block is vectorised
        b = min(block, n_boot - start)
        counts = _count_block(rng, b, g)
        out[start : start + b] = (counts @ sums) / (counts @ sizes)
    return out


def cluster_bootstrap_means(values: np.ndarray, clusters: np.ndarray | None = None,
                            n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED) -> np.ndarray:
    """The B resampled pooled means (clusters=None resamples rows)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or len(values) == 0:
        raise ValueError("values must be a non-empty 1-D array")
    codes, g = _cluster_codes(clusters, len(values))
    sums = np.bincount(codes, weights=values, minlength=g)
    sizes = np.bincount(codes, minlength=g).astype(np.float64)
    return _resampled_means(sums, sizes, n_boot, seed)


def cluster_bootstrap_ci(values: np.ndarray, clusters: np.ndarray | None = None,
                         n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED,
                         level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the pooled mean under cluster resampling.

    >>> import numpy as np
    >>> cluster_bootstrap_ci(np.ones(6), np.array([0, 0, 1, 1, 2, 2]))
    (1.0, 1.0)
    """
    means = cluster_bootstrap_means(values, clusters, n_boot, seed)
    alpha = 1 - level
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def paired_delta_ci(values_a: np.ndarray, values_b: np.ndarray,
                    clusters: np.ndarray | None = None, n_boot: int = DEFAULT_N_BOOT,
                    seed: int = DEFAULT_SEED, level: float = 0.95) -> dict[str, float]:
    """Model A minus model B on the same items, clusters resampled jointly for both.

    Returns ``delta`` (mean(a) - mean(b)), the percentile interval, and the two-sided
    bootstrap p-value 2 min(P(delta_b <= 0), P(delta_b >= 0)) (capped at 1).
    """
    a = np.asarray(values_a, dtype=np.float64)
    b = np.asarray(values_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired arrays differ in shape: {a.shape} vs {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("paired values must be finite (drop items without an outcome first): "
                         f"{int((~np.isfinite(a)).sum())} + {int((~np.isfinite(b)).sum())} are "
                         "not")
    diffs = cluster_bootstrap_means(a - b, clusters, n_boot, seed)
    alpha = 1 - level
    lo, hi = np.quantile(diffs, [alpha / 2, 1 - alpha / 2])
    p = min(1.0, 2 * min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0))))
    return {"delta": float(a.mean() - b.mean()), "ci_low": float(lo), "ci_high": float(hi),
            "p_value": float(p), "n": int(len(a))}
