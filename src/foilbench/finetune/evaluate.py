"""R@1 of a dual encoder on Auto-Comp items, with Wilson intervals.

    "Evaluation follows Section 3: Swap against the full N!-1 set, Confusion against the full
    negative set." (Auto-Comp App. A.9)

An item is right when its positive scores strictly above every negative (a tie is a failure,
counted in ``ties``). ``r1`` scores every negative, as the paper does; ``r1_valid`` only the
false ones (foilbench's primary Auto-Comp metric, :mod:`foilbench.kinds.valid`). Scores are
cosines of unit embeddings: every score head the adapters offer is increasing in the cosine
for one image, so the ranking (and R@1) is the same.

Intervals: Wilson over items (``foilbench.stats.wilson_ci``). The two conditions of one
concept are not independent; the table is split by condition, so items within a row are one
per concept.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from PIL import Image

from foilbench.finetune.data import EvalItem


def item_outcomes(adapter, items: Sequence[EvalItem]) -> pd.DataFrame:
    """Per item: ``r1``, ``r1_valid`` (1/0) and ``tie`` (the positive equals the best
    negative) from ``adapter``'s embeddings."""
    images = sorted({str(it.image) for it in items})
    texts = sorted({t for it in items for t in it.captions})
    img_index = {p: i for i, p in enumerate(images)}
    txt_index = {t: i for i, t in enumerate(texts)}
    loaded = []
    for p in images:
        with Image.open(p) as im:
            loaded.append(im.convert("RGB"))
    img_emb = adapter.embed_images(loaded) if loaded else np.zeros((0, 0), np.float32)
    txt_emb = adapter.embed_texts(texts) if texts else np.zeros((0, 0), np.float32)
    rows = []
    for it in items:
        s = txt_emb[[txt_index[t] for t in it.captions]] @ img_emb[img_index[str(it.image)]]
        rows.append({"item_id": it.item_id, "concept_id": it.concept_id,
                     "negative_set": it.negative_set, "condition": it.condition,
                     "task": it.task, "n_objects": it.n_objects,
                     **outcome(s, it.false_mask)})
    return pd.DataFrame(rows)


def outcome(scores: np.ndarray, false_mask: Sequence[bool]) -> dict:
    """R@1 of one item from its scores (``scores[0]`` the positive), strict ``>``.

    >>> outcome(np.array([0.5, 0.4, 0.5]), [True, False])
    {'r1': 0, 'r1_valid': 1, 'tie': 1}
    """
    pos, neg = float(scores[0]), np.asarray(scores[1:], dtype=float)
    mask = np.asarray(false_mask, dtype=bool)
    best = float(neg.max()) if len(neg) else -np.inf
    best_valid = float(neg[mask].max()) if mask.any() else -np.inf
    return {"r1": int(pos > best), "r1_valid": int(pos > best_valid), "tie": int(pos == best)}


def r1_table(outcomes: pd.DataFrame, by: Sequence[str] = ("negative_set", "condition"),
             metrics: Sequence[str] = ("r1", "r1_valid")) -> pd.DataFrame:
    """Per group: n, each metric with its Wilson 95% interval, and ties."""
    from foilbench.stats import wilson_ci

    rows = []
    for key, sub in outcomes.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key, strict=True)) | {"n": len(sub), "ties": int(sub["tie"].sum())}
        for m in metrics:
            k = int(sub[m].sum())
            lo, hi = wilson_ci(k, len(sub))
            row |= {m: k / len(sub), f"{m}_low": lo, f"{m}_high": hi}
        rows.append(row)
    return pd.DataFrame(rows)
