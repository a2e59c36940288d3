"""Edited twins: a training scene and a copy of it after one single edit, captioned by the edit.

Trained with random batches only, a contrastive model can tell most scenes apart by colour
alone, so nothing pushes it to see shape, material, pattern, state, count or place: the first
shipped models read colour (Group 51% on modify_color) and were at or below chance on every
other edit, with base and foil images of a pair nearly equal in embedding. A *twin* puts both
images of one single edit in the same batch, each with its own caption at one of the three tiers
(:func:`foilbench.world.captions.edit_captions`), so the ordinary CLIP loss has to tell them
apart. This is a choice of data, shared by all three recipes (the hard-negative recipes add
*text* negatives on top). Twin scenes come from the training stream and are checked against the
benchmark signatures like every training scene (bases and foils); edit types are balanced per
chunk by :func:`foilbench.construct.composet.pair_plan.plan_edits` (least used first). Swap edits are
never twins (see ``TWIN_TYPES``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from foilbench.construct.composet.pair_plan import plan_edits
from foilbench.world.captions import TIERS, edit_captions
from foilbench.world.edits import EDIT_TYPES
from foilbench.world.scene import Scene

# Swap edits are left out: re-binding (who has which colour, material, place or role) is what
# the swap and confusion negatives teach, and the three recipes must differ in exactly that.
TWIN_TYPES: tuple[str, ...] = tuple(name for name, spec in EDIT_TYPES.items()
                                    if spec.operation != "swap")


def make_twin(scene: Scene, rng: np.random.Generator, counts: Counter):
    """``(foil scene, edit type, [(base caption, foil caption) per tier])`` or ``None`` when
    no edit of ``TWIN_TYPES`` applies."""
    edits = plan_edits(scene, rng, 1, counts, TWIN_TYPES)
    if not edits:
        return None
    edit = edits[0]
    captions = edit_captions(edit)
    return edit.foil, edit.edit_type, [captions[t] for t in TIERS]
