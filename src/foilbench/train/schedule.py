"""The learning-rate schedule both training loops use (the embedded models' and
``foilbench finetune``'s): linear warm-up, then cosine decay to zero."""

from __future__ import annotations

import math
from typing import Any


def lr_at(step: int, cfg: Any) -> float:
    """Learning rate at ``step`` (0-based) for a config with ``lr``, ``warmup``, ``steps``:
    ``lr (step + 1) / warmup`` while warming up, then ``lr / 2 (1 + cos(pi p))`` with ``p``
    the share of the post-warm-up steps done.

    >>> from types import SimpleNamespace
    >>> c = SimpleNamespace(lr=1.0, warmup=2, steps=6)
    >>> [round(lr_at(s, c), 3) for s in range(6)]
    [0.5, 1.0, 1.0, 0.854, 0.5, 0.146]
    """
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * progress))
