"""Largest-remainder (Hamilton) proportional allocation, shared by the G.4 subsets
(:mod:`foilbench.data.subset`, :mod:`foilbench.data.subset_instances`)."""

from __future__ import annotations

import numpy as np


def allocate(sizes: dict[tuple, int], n: int) -> dict[tuple, int]:
    """Largest-remainder proportional allocation of ``n`` over strata of ``sizes``.

    >>> allocate({("a",): 6, ("b",): 3, ("c",): 1}, 5)
    {('a',): 3, ('b',): 2, ('c',): 0}
    """
    total = sum(sizes.values())
    quota = {k: n * s / total for k, s in sizes.items()}
    out = {k: int(np.floor(q)) for k, q in quota.items()}
    left = n - sum(out.values())
    order = sorted(sizes, key=lambda k: (-(quota[k] - out[k]), -sizes[k], k))
    for k in order[:left]:
        out[k] += 1
    return out
