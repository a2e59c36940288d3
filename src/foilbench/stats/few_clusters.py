"""An interval for a clustered proportion when the clusters are few, or the estimate sits at
0 or 1: Wilson's score interval on the design-effect sample size with a t critical value.

Why not the scene-clustered bootstrap there. CompoSET App. C resamples its 80 scenes; with a
handful of scenes the percentile bootstrap has only a few distinct resamples and its interval
is too narrow (seeded simulation, planted scene effects, ``tests/test_few_clusters.py``: about
81% coverage at 5 scenes, 87% at 10, 92% at 20-30, 95% at 80), and at an estimate of 0 or 1
every resample is the estimate, so it returns [p, p]. App. C: "For rates near 0 or 1 ... we use
the Wilson score interval ... Wilson is asymmetric near the boundaries, always lies in [0,1]".

What we compute (the paper is silent on few clusters; this is our choice). With G clusters,
per-cluster sums S_g and sizes n_g, n = sum n_g, p = sum S_g / n:

    V      = G / (G - 1) * sum_g (S_g - p n_g)^2 / n^2     (cluster-robust variance of p)
    deff   = max(1, V / (p (1 - p) / n))                   (never narrower than Wilson)
    n_eff  = n / deff
    z      = t quantile (1 - alpha/2) with G - 1 degrees of freedom
    CI     = Wilson(k = p n_eff, n = n_eff, z)

The t quantile with G - 1 degrees of freedom is the usual small-number-of-clusters correction
(it is 12.7 at 2 clusters, 2.78 at 5, 2.26 at 10, 2.05 at 30). At p = 0 or 1 the clusters show
no spread (V = 0), so deff = 1 and the interval is Wilson's over the items with the t quantile.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.stats.intervals import wilson_ci

MIN_BOOTSTRAP_CLUSTERS = 30  # below this, "auto" uses cluster_wilson_ci instead of the bootstrap


def t_quantile(level: float, df: int) -> float:
    """Two-sided t critical value, e.g. 12.706 at 95% with 1 degree of freedom.

    >>> round(t_quantile(0.95, 1), 3), round(t_quantile(0.95, 9), 3)
    (12.706, 2.262)
    """
    # scipy.stats' t.ppf is stdtrit(df, q) * 1 + 0; scipy.special imports in a third of the
    # time of scipy.stats (0.24 s vs 0.59 s on one core), which a run pays when any row has
    # fewer than 30 scenes. tests/test_few_clusters.py checks the two agree bit for bit.
    from scipy.special import stdtrit

    return float(stdtrit(df, 1 - (1 - level) / 2))


def design_effect(values: np.ndarray, codes: np.ndarray, n_clusters: int) -> float:
    """max(1, cluster-robust variance / binomial variance) of the pooled mean (1 at p = 0, 1).

    Two scenes [1, 1] and [0, 0]: p = 1/2, S - p n = (1, -1), V = 2/1 * 2/16 = 1/4 against
    p (1 - p) / n = 1/16: deff = 4 (the items of a scene are one observation each).

    >>> design_effect(np.array([1., 1, 0, 0]), np.array([0, 0, 1, 1]), 2)
    4.0
    """
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    sums = np.bincount(codes, weights=values, minlength=n_clusters)
    sizes = np.bincount(codes, minlength=n_clusters)
    p = sums.sum() / n
    binomial = p * (1 - p) / n
    if binomial <= 0 or n_clusters < 2:
        return 1.0
    robust = n_clusters / (n_clusters - 1) * float(np.sum((sums - p * sizes) ** 2)) / n ** 2
    return float(max(1.0, robust / binomial))


def cluster_wilson_ci(values: np.ndarray, clusters: np.ndarray,
                      level: float = 0.95) -> tuple[float, float]:
    """Wilson interval on n / deff with the t(G - 1) quantile (see the module docstring).

    Hand-computed: two scenes, [1, 1] and [0, 0]: p = 1/2, deff = 4, n_eff = 1, z = 12.706,
    z^2 = 161.44; Wilson(0.5, 1, z): centre (0.5 + 80.72) / 162.44 = 1/2, half-width
    12.706 * sqrt(0.25 + 40.36) / 162.44 = 0.4985 -> [0.0015, 0.9985].

    >>> lo, hi = cluster_wilson_ci(np.array([1., 1, 0, 0]), np.array(["a", "a", "b", "b"]))
    >>> round(lo, 4), round(hi, 4)
    (0.0015, 0.9985)
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or len(values) == 0:
        raise ValueError("values must be a non-empty 1-D array")
    if not (np.isfinite(values).all() and ((values >= 0) & (values <= 1)).all()):
        raise ValueError("cluster_wilson_ci takes outcomes in [0, 1] (a NaN or a score is not "
                         "an outcome)")
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    clusters = np.asarray(clusters)
    if len(clusters) != len(values):
        raise ValueError(f"clusters has length {len(clusters)}, values has length {len(values)}")
    if pd.isna(clusters).any():
        raise ValueError("every value needs a cluster label (some are null)")
    _, codes = np.unique(clusters.astype(str), return_inverse=True)
    g = int(codes.max()) + 1
    if g < 2:
        raise ValueError("cluster_wilson_ci needs at least 2 clusters (one cluster carries no "
                         "information about the spread between clusters)")
    n = len(values)
    p = float(values.sum()) / n
    n_eff = n / design_effect(values, codes, g)
    lo, hi = wilson_ci(p * n_eff, n_eff, t_quantile(level, g - 1))
    return float(lo), float(hi)
