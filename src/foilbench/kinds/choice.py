"""``choice``: one image, ``captions[0]`` the positive and ``captions[1:]`` the K negatives.

Slots, 1 + K per item: ``(image, captions[j])`` for j = 0..K, positive first. Scored by R@1
(:mod:`foilbench.kinds.ranking`). The only kind whose items are one image with ranked captions,
so the one the blind text-only audits apply to (SugarCrepe, abstract: "blind models with no
access to the image outperform state-of-the-art vision-language models").

Items whose ``true_negatives`` column lists caption indices of negatives that are true of the
image (Auto-Comp, :mod:`foilbench.construct.autocomp.truth`) also get ``r1_valid`` beside the
paper's ``r1`` (:mod:`foilbench.kinds.valid`).
"""

from __future__ import annotations

from foilbench.kinds.asks import CaptionAsk, require_two
from foilbench.kinds.ranking import RankingKind
from foilbench.kinds.slots import SlotLayout, codes, positions, ragged
from foilbench.kinds.valid import METRIC as VALID_METRIC
from foilbench.kinds.valid import valid_outcomes


class ChoiceKind(RankingKind):
    """1 image, K + 1 captions: image-to-text R@1."""

    name = "choice"
    image_columns = ("image",)
    text_list_columns = ("captions",)
    rank = 1
    has_caption_candidates = True
    # r1_valid only where items carry ``true_negatives`` (foilbench.kinds.valid)
    metrics = ("r1", VALID_METRIC)

    def layout(self, items, image_index, text_index):
        lens, flat = ragged(items["captions"])
        item, pos = positions(lens)
        image_idx = codes(items["image"], image_index)[item]
        return SlotLayout(image_idx, codes(flat, text_index), item, pos, lens)

    def item_outcomes(self, items, matrix, n_slots, *, where=""):
        outcomes, ties, chance = self.outcomes(matrix, n_slots)
        valid = valid_outcomes(items, matrix, n_slots, where=where)
        if valid is not None:
            outcomes[VALID_METRIC], ties[VALID_METRIC], chance[VALID_METRIC] = valid
        return outcomes, ties, chance

    def api_asks(self, row):
        positive, negative = require_two(row.captions, row.item_id, "captions")
        return [CaptionAsk(row.image, positive, negative)]

    def candidate_captions(self, items):
        return [list(c) for c in items["captions"]]


KIND = ChoiceKind()
