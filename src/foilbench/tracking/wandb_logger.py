"""``on_result`` for Weights & Biases: each stored run's scalars, at its training step.

``wandb.init(...)`` first (``mode="offline"`` writes to disk only; ``wandb sync`` uploads
later), then ``runner.run(..., metadata={"step": step}, on_result=WandbLogger())``.
"""

from __future__ import annotations

from typing import Any

from foilbench.errors import FoilbenchError
from foilbench.tracking.rows import DEFAULT_KEY, scalars, step_of


class WandbLogger:
    """Logs :func:`~foilbench.tracking.rows.scalars` of each run with ``run.log`` (the
    active ``wandb.run`` unless ``run`` is given) at the run's step (``metadata["step"]``)."""

    def __init__(self, run: Any = None, *, prefix: str = "foilbench",
                 key: str = DEFAULT_KEY) -> None:
        if run is None:  # the active run: only then is wandb needed here
            from foilbench.extras import require

            require("wandb", what="WandbLogger")
            import wandb

            run = wandb.run
        self.run = run
        if self.run is None:
            raise FoilbenchError("WandbLogger: no W&B run is active; call wandb.init(...) "
                                 "first (mode='offline' to log without a server) or pass "
                                 "run=")
        self.prefix, self.key = prefix, key

    def __call__(self, record: Any) -> None:
        values = scalars(record, self.prefix, self.key)
        step = step_of(record)
        if step is None:
            self.run.log(values)
        else:
            self.run.log(values, step=step)
