"""Experiment trackers fed from ``on_result``: each stored run's overall metrics, with their
intervals, as scalars (:func:`scalars`), logged at the training step.

``runner.run(..., metadata={"step": step}, on_result=WandbLogger())`` (or
:class:`MlflowLogger`, or any function of one stored run) logs each run the moment it is
stored (docs/training.md). Neither tracker is imported until a logger is made: ``pip
install 'foilbench[wandb]'`` or ``'foilbench[mlflow]'`` when you want one.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"scalars": "rows", "step_of": "rows", "WandbLogger": "wandb_logger",
            "MlflowLogger": "mlflow_logger"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'foilbench.tracking' has no attribute {name!r}")
    return getattr(importlib.import_module(f"foilbench.tracking.{_EXPORTS[name]}"), name)
