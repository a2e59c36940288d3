"""Item kinds as objects: ``pair``, ``choice``, ``image_choice`` (one module each).

A kind owns its columns, slot layout, outcomes with ties and chance, margins, API questions and
caption candidates (:class:`ItemKind`); code elsewhere asks ``bench.item_kind`` or
:func:`kind_of` and never compares kind names. A new kind is one new module here with a
module-level ``KIND`` (see :mod:`foilbench.kinds.registry`).
"""

from foilbench.kinds.asks import Ask, CaptionAsk, ImageAsk
from foilbench.kinds.base import TIE_POLICY, ItemKind
from foilbench.kinds.choice import ChoiceKind
from foilbench.kinds.image_choice import ImageChoiceKind
from foilbench.kinds.pair import PairKind
from foilbench.kinds.ranking import RankingKind
from foilbench.kinds.registry import KINDS, kind_of, kind_of_frame, kinds_where, register_kind
from foilbench.kinds.slots import SlotLayout, pad_scores

__all__ = [
    "KINDS",
    "TIE_POLICY",
    "Ask",
    "CaptionAsk",
    "ChoiceKind",
    "ImageAsk",
    "ImageChoiceKind",
    "ItemKind",
    "PairKind",
    "RankingKind",
    "SlotLayout",
    "kind_of",
    "kind_of_frame",
    "kinds_where",
    "pad_scores",
    "register_kind",
]
