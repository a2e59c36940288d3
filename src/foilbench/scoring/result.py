"""The in-memory result of evaluating one model on one benchmark (before it is stored)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from foilbench.data.format import Benchmark
from foilbench.models.base import ModelInfo


@dataclass
class EvalResult:
    """Per-item raw scores and outcomes of one (model, benchmark) evaluation.

    ``scores[k]`` is item k's flattened score vector (pair: [s(c0,i0), s(c0,i1), s(c1,i0),
    s(c1,i1)]; choice / image_choice: positive first). ``outcomes[metric][k]`` lies in [0, 1]
    (booleans as 0/1; API models may average two asks). ``ties[metric][k]`` marks an exact tie
    that was scored as a failure; ``chance[metric][k]`` is the item's chance level.
    """

    benchmark: Benchmark
    model: ModelInfo
    scores: list[np.ndarray]
    outcomes: dict[str, np.ndarray]
    ties: dict[str, np.ndarray]
    chance: dict[str, np.ndarray]
    stats: dict[str, Any] = field(default_factory=dict)  # forward passes, cache hits, timings

    @property
    def metrics(self) -> list[str]:
        return list(self.outcomes)
