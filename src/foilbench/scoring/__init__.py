"""Protocols: pair (2x2), choice (1 image, K captions), image_choice (1 caption, K images)."""

from foilbench.scoring.protocols import (
    choice_outcomes,
    choice_ties,
    pair_chance,
    pair_outcomes,
    pair_ties,
)

__all__ = ["choice_outcomes", "choice_ties", "pair_chance", "pair_outcomes", "pair_ties"]
