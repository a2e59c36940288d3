"""``image_choice``: one caption, ``images[0]`` the positive and ``images[1:]`` the K negatives.

Slots, 1 + K per item: ``(images[j], caption)`` for j = 0..K, positive first. Scored by R@1
(:mod:`foilbench.kinds.ranking`): text-to-image selection, CompoSET Table 8's protocol "T2I for
image-foil-only benchmarks (NaturalBench, ColorBench)".
"""

from __future__ import annotations

from foilbench.kinds.asks import ImageAsk, require_two
from foilbench.kinds.ranking import RankingKind
from foilbench.kinds.slots import SlotLayout, codes, positions, ragged


class ImageChoiceKind(RankingKind):
    """1 caption, K + 1 images: text-to-image R@1."""

    name = "image_choice"
    image_list_columns = ("images",)
    text_columns = ("caption",)
    rank = 2

    def layout(self, items, image_index, text_index):
        lens, flat = ragged(items["images"])
        item, pos = positions(lens)
        text_idx = codes(items["caption"], text_index)[item]
        return SlotLayout(codes(flat, image_index), text_idx, item, pos, lens)

    def api_asks(self, row):
        positive, negative = require_two(row.images, row.item_id, "images")
        return [ImageAsk(row.caption, positive, negative)]


KIND = ImageChoiceKind()
