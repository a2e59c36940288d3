"""The three item kinds and the columns each one requires.

pair          base/foil image x base/foil caption (2x2, CompoSET / Winoground)
choice        one image, ``captions[0]`` positive and ``captions[1:]`` the K negatives
image_choice  one caption, ``images[0]`` positive and ``images[1:]`` the K negatives
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KindSpec:
    name: str
    image_columns: tuple[str, ...]  # scalar image path columns
    image_list_columns: tuple[str, ...]  # list-of-path columns
    text_columns: tuple[str, ...]
    text_list_columns: tuple[str, ...]
    metrics: tuple[str, ...]
    default_metric: str

    @property
    def required(self) -> tuple[str, ...]:
        return (
            "item_id",
            *self.image_columns,
            *self.image_list_columns,
            *self.text_columns,
            *self.text_list_columns,
        )


KINDS: dict[str, KindSpec] = {
    "pair": KindSpec(
        name="pair",
        image_columns=("image_base", "image_foil"),
        image_list_columns=(),
        text_columns=("caption_base", "caption_foil"),
        text_list_columns=(),
        metrics=("i2t", "t2i", "group"),
        default_metric="group",
    ),
    "choice": KindSpec(
        name="choice",
        image_columns=("image",),
        image_list_columns=(),
        text_columns=(),
        text_list_columns=("captions",),
        # r1_valid only where items carry ``true_negatives`` (foilbench.scoring.valid)
        metrics=("r1", "r1_valid"),
        default_metric="r1",
    ),
    "image_choice": KindSpec(
        name="image_choice",
        image_columns=(),
        image_list_columns=("images",),
        text_columns=("caption",),
        text_list_columns=(),
        metrics=("r1",),
        default_metric="r1",
    ),
}

# Metadata columns used for breakdowns. All optional; any other column is kept as a free extra.
METADATA_COLUMNS: tuple[str, ...] = (
    "scene_id",
    "edit_type",
    "category",
    "operation",
    "tier",
    "n_objects",
    "condition",
    "level",
    "n_o",
    "n_a",
    "n_r",
    "split",
)
