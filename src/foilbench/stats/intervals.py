"""Binomial proportion intervals for k successes in n trials.

Wald:    p +- z sqrt(p (1 - p) / n), clamped to [0, 1].
Wilson:  (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)   (Wilson 1927).
"""

from __future__ import annotations

import math


def _check(k: float, n: float) -> None:
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if k < 0 or k > n:
        raise ValueError(f"k must lie in [0, n], got k={k}, n={n}")


def wald_ci(k: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """Wald interval, clamped to [0, 1].

    >>> wald_ci(50, 100)
    (0.402, 0.598)
    """
    _check(k, n)
    p = k / n
    half = z * math.sqrt(p * (1 - p) / n)
    return (round(max(0.0, p - half), 12), round(min(1.0, p + half), 12))


def wilson_ci(k: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval.

    >>> lo, hi = wilson_ci(0, 10)
    >>> (lo, round(hi, 4))
    (0.0, 0.2775)
    """
    _check(k, n)
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))
