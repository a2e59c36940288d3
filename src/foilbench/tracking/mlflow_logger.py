"""``on_result`` for MLflow: each stored run's scalars, at its training step.

With an active run (``mlflow.start_run()``; else MLflow starts one) and any tracking URI
(a ``file:`` folder for local use, ``sqlite:///mlflow.db`` with the full ``mlflow``
package):
``runner.run(..., metadata={"step": step}, on_result=MlflowLogger())``.
"""

from __future__ import annotations

from typing import Any

from foilbench.tracking.rows import DEFAULT_KEY, scalars, step_of


class MlflowLogger:
    """Logs :func:`~foilbench.tracking.rows.scalars` of each run with
    ``mlflow.log_metrics`` at the run's step (``metadata["step"]``, else MLflow's 0), and
    the foilbench run id as a tag ``foilbench_run/<benchmark>``."""

    def __init__(self, *, prefix: str = "foilbench", key: str = DEFAULT_KEY) -> None:
        from foilbench.extras import require

        require("mlflow", what="MlflowLogger")
        self.prefix, self.key = prefix, key

    def __call__(self, record: Any) -> None:
        import mlflow

        from foilbench.tracking.rows import safe_part

        step = step_of(record)
        mlflow.log_metrics(scalars(record, self.prefix, self.key),
                           **({} if step is None else {"step": step}))
        mlflow.set_tag(f"foilbench_run/{safe_part(record.result.benchmark.name)}",
                       record.run_id)
