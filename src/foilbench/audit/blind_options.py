"""At most M options per item for blind audits of benchmarks with very many negatives.

Auto-Comp App. A.8: "We tasked Gemma-3-12b-it with selecting the correct caption from
shuffled positive/negative sets without visual input (subsampling 49 negatives for N=3)";
App. A.10 likewise limits the human Confusion task "to 50 options for feasibility". An item
with more than M - 1 negatives keeps the positive and M - 1 negatives drawn uniformly without
replacement (``max_options = 50``: 49 negatives, chance 1/50); items with fewer keep all.
Each item's draw has its own generator seeded by (seed, item position), so one item's draw
does not depend on the others. The positive stays first here: the text scorers score every
caption on its own, so order cannot matter to them; the multiple-choice scorer (``mc:PATH``,
:mod:`foilbench.audit.blind_mc`) shuffles the kept options itself, with a seeded order per
item, before the model sees them.
"""

from __future__ import annotations

import numpy as np


def subsample_options(captions: list[list[str]], max_options: int | None,
                      seed: int = 0) -> list[list[str]]:
    """``[positive, negatives...]`` per item with at most ``max_options`` captions.

    >>> subsample_options([["p", "a", "b", "c"], ["q", "x"]], 3, seed=0)[1]
    ['q', 'x']
    """
    if max_options is None:
        return [list(c) for c in captions]
    if max_options < 2:
        raise ValueError(f"max_options must be at least 2 (the positive and one negative), "
                         f"got {max_options}")
    out = []
    for i, caps in enumerate(captions):
        caps = list(caps)
        if len(caps) <= max_options:
            out.append(caps)
            continue
        rng = np.random.default_rng([seed, i])
        keep = np.sort(rng.choice(len(caps) - 1, max_options - 1, replace=False)) + 1
        out.append([caps[0], *(caps[int(k)] for k in keep)])
    return out
