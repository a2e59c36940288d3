"""Settling near ties in float64: the model's own decision where float32 rounding could flip it.

A near tie (:mod:`foilbench.scoring.near_ties`) is a decision within float32 rounding of a
tie: two correct float32 implementations may score it opposite ways. Issue 30's bench found
one in 37,555 sweep decisions (SugarCrepe swap_att item 266, a seed-4 tiny model): foilbench's
float32 margin was +4.98e-8, SugarCrepe's own loop's -8.01e-8, and the same model in float64
gives -5.07e-8, so SugarCrepe's float32 was right there and foilbench's was not.

The papers are silent (their numbers are float32, from whatever batch shapes their code
used); this is foilbench's choice. For an adapter that can recompute in float64
(:meth:`foilbench.models.batched.BatchedDualEncoder.float64_embeddings`: the open_clip,
Hugging Face and embedded adapters, loaded in float32), every slot of every item with a near
tie in any decision is rescored from float64 features of its images and texts, and the
outcomes come from those scores. The decision is then the model's up to about 1e-16, the same
whatever batch size, thread count or kernel produced the float32 pass. Strict ``>`` holds as
everywhere: a float64 margin of exactly 0 is a tie and a failure.

What the run records (``result.stats``): ``near_ties`` still counts the float32 near ties per
metric; ``near_ties_settled`` the items rescored; ``near_ties_changed`` per metric the
outcomes that float64 turned around. Adapters that cannot (pairwise and API models, functions
wrapped as dual encoders, bf16/fp16 runs) leave their near ties counted and unsettled.

Cost: only the near-tie items' inputs are recomputed, one image or text per near tie or so,
plus casting the network to float64 and back once per run that has any.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from foilbench.kinds.slots import SlotLayout


def settle_near_ties(adapter: Any, items: np.ndarray, matrix: np.ndarray, layout: SlotLayout,
                     image_of_ref: np.ndarray, text_of_ref: np.ndarray,
                     load_images: Callable[[list[int]], list],
                     load_texts: Callable[[list[int]], list[str]]
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``(matrix, items)``: the score matrix with the rows of ``items`` (the near-tie items'
    indices, :func:`foilbench.scoring.near_ties.near_tie_masks`) rescored in float64, and
    those items (empty, matrix unchanged, when there are none or the adapter cannot
    recompute).

    ``image_of_ref`` / ``text_of_ref`` map the layout's unique refs to the positions the
    loaders take (inputs deduplicated by content); ``load_images`` gives the adapter's
    prepared images at positions, ``load_texts`` the texts."""
    recompute = getattr(adapter, "float64_embeddings", None)
    if len(items) == 0 or not callable(recompute):
        return matrix, items[:0]
    slots = np.isin(layout.item_idx, items)
    image_pos = image_of_ref[layout.image_idx[slots]]
    text_pos = text_of_ref[layout.text_idx[slots]]
    images, image_rows = np.unique(image_pos, return_inverse=True)
    texts, text_rows = np.unique(text_pos, return_inverse=True)
    features = recompute(load_images(images.tolist()), load_texts(texts.tolist()))
    if features is None:
        return matrix, items[:0]
    image_emb, text_emb = features
    scores = np.asarray(adapter.pair_scores(image_emb[image_rows], text_emb[text_rows]),
                        dtype=np.float64).reshape(-1)
    settled = matrix.copy()
    settled[layout.item_idx[slots], layout.slot_idx[slots]] = scores
    return settled, items


def outcomes_changed_at(before: dict[str, np.ndarray], after: dict[str, np.ndarray],
                        items: np.ndarray) -> dict[str, int]:
    """Per metric, how many of ``items`` have another outcome in ``after`` than in ``before``."""
    return {metric: int((np.asarray(before[metric])[items]
                         != np.asarray(after[metric])[items]).sum()) for metric in after}
