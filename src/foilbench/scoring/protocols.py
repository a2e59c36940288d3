"""Per-item outcomes under the strict ``>`` tie policy (a tie is a failure).

The formulas live with their kinds: pair items (CompoSET Eq. 1-3, chance 1/4, 1/4, 1/6) in
:mod:`foilbench.kinds.pair`, R@1 over one positive and K negatives (chance 1 / (K + 1)) in
:mod:`foilbench.kinds.ranking`. They are re-exported here, the scoring layer's names for them.
"""

from __future__ import annotations

from foilbench.kinds.base import TIE_POLICY
from foilbench.kinds.pair import PAIR_CHANCE, pair_chance, pair_outcomes, pair_ties
from foilbench.kinds.ranking import choice_chance, choice_outcomes, choice_ties
from foilbench.kinds.slots import pad_scores

__all__ = ["PAIR_CHANCE", "TIE_POLICY", "choice_chance", "choice_outcomes", "choice_ties",
           "pad_ragged", "pair_chance", "pair_outcomes", "pair_ties"]

pad_ragged = pad_scores  # stack ragged score rows, padded with -inf
