"""What an item kind owns: its columns, slot layout, outcomes (ties, chance), margins, API
questions and caption candidates.

One subclass per kind lives in its own module of this package with a module-level ``KIND``
instance; :mod:`foilbench.kinds.registry` finds it. Everything outside the package asks the
kind object (``bench.item_kind``) instead of comparing kind names, so a new kind is one new
module plus its tests.

Tie policy, everywhere: strict ``>`` (a tie is a failure, and is counted).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from foilbench.errors import BenchmarkError
from foilbench.kinds.asks import Ask
from foilbench.kinds.slots import SlotLayout

TIE_POLICY = "strict>"

PerMetric = dict[str, np.ndarray]


class ItemKind(ABC):
    """One item kind. Class attributes describe the table; methods hold the kind's logic."""

    name: ClassVar[str]
    image_columns: ClassVar[tuple[str, ...]] = ()  # scalar image path columns
    image_list_columns: ClassVar[tuple[str, ...]] = ()  # list-of-path columns, positive first
    text_columns: ClassVar[tuple[str, ...]] = ()
    text_list_columns: ClassVar[tuple[str, ...]] = ()
    metrics: ClassVar[tuple[str, ...]]
    default_metric: ClassVar[str]
    rank: ClassVar[int] = 100  # listing order (built-in kinds first)
    # items are single-edit base/foil pairs (image_base/image_foil, caption_base/caption_foil):
    # what the dataset controls and the edit x tier views need
    is_edit_pair: ClassVar[bool] = False
    # items are one image with ranked captions (candidate_captions gives them): the blind
    # text-only audits apply
    has_caption_candidates: ClassVar[bool] = False
    # two-option questions per item under the API protocol (0: the protocol does not apply)
    api_ask_count: ClassVar[int] = 0

    @property
    def required(self) -> tuple[str, ...]:
        """Columns every item table of this kind must have."""
        return ("item_id", *self.image_columns, *self.image_list_columns, *self.text_columns,
                *self.text_list_columns)

    @abstractmethod
    def layout(self, items: pd.DataFrame, image_index: dict[str, int],
               text_index: dict[str, int]) -> SlotLayout:
        """Slots of every item; the indexes map image refs / texts to unique positions."""

    @abstractmethod
    def outcomes(self, matrix: np.ndarray, n_slots: np.ndarray
                 ) -> tuple[PerMetric, PerMetric, PerMetric]:
        """(outcomes as 0/1 floats, ties, chance) per metric from the -inf-padded score
        matrix (one row per item, slots in layout order) and each item's slot count."""

    def item_outcomes(self, items: pd.DataFrame, matrix: np.ndarray, n_slots: np.ndarray, *,
                      where: str = "") -> tuple[PerMetric, PerMetric, PerMetric]:
        """:meth:`outcomes` plus any metric the item table itself enables (the engine's call);
        ``where`` names the benchmark in errors. Default: :meth:`outcomes` alone."""
        return self.outcomes(matrix, n_slots)

    @abstractmethod
    def margins(self, matrix: np.ndarray) -> PerMetric:
        """Signed margins per direction (name -> values). A name that is a metric, or a
        metric followed by ``_decision``, is > 0 exactly when that strict outcome is correct
        for single-comparison kinds; a pair's paper margins (CompoSET App. G.3, anchored on
        the base) are not, its ``*_decision`` margins are (:mod:`foilbench.kinds.pair`)."""

    def frame_fits(self, columns: Collection[str], score_lengths: Sequence[int]) -> bool:
        """Whether a results frame (outcome columns, per-row score lengths) holds this kind;
        the registry asks the kinds in rank order."""
        return False

    def api_asks(self, row: Any) -> list[Ask]:
        """The two-option questions for one item (a row of ``items.itertuples()``)."""
        raise BenchmarkError(f"the API protocol has no questions for kind {self.name!r}")

    def api_outcomes(self, correct: np.ndarray) -> tuple[PerMetric, PerMetric]:
        """(outcomes, chance) per metric from the (n, api_ask_count) averaged correctness."""
        raise BenchmarkError(f"the API protocol has no outcomes for kind {self.name!r}")

    def candidate_captions(self, items: pd.DataFrame) -> list[list[str]] | None:
        """Per item ``[positive, negative_1, ..., negative_K]`` captions for one image, or None
        when the kind's items are not one image with ranked captions (blind text audits)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
