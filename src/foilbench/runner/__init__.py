"""The runner: what ``foilbench run`` and ``foilbench sweep`` do, as a Python API.

The CLI only parses options and prints; everything between (loading models and benchmarks,
evaluating and storing each (model, benchmark) cell, resume, summary, reference rows, COMPASS
tables, the sweep matrix) is here::

    from foilbench import runner

    outcome = runner.run(models=["tiny-random"], benchmarks=["tiny-builtin"], out="/tmp/fb",
                         n_boot=200, progress=False, report=False)
    outcome.summary["runs"][0]["metrics"]["group"]["value"]

For a scheduler that spreads cells over workers: :func:`evaluate_cell` computes one cell and
writes nothing; :func:`write_cell` stores it from the one process that owns the store;
:func:`finished_run` is the resume check. ``run(..., ray=...)`` and ``sweep(..., ray=...)``
(an address, ``True`` or :class:`RayOptions`) compute the cells on Ray workers with those
(``runner/ray/``, docs/scale-out.md).
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> submodule; loaded on first use, so importing one light submodule (the CLI's
# printing needs only ``log`` and ``summary``) does not pull in the models and the engine
_EXPORTS = {
    "CellRecord": "cell", "CellResult": "cell", "compass_summary": "cell",
    "evaluate_cell": "cell", "finished_run": "cell", "write_cell": "cell",
    "Log": "log", "blind_reference": "reference", "chance_rows": "reference",
    "RunOutcome": "runs", "run": "runs", "DB_FILE": "settings", "RunnerError": "settings",
    "RunSettings": "settings", "overall_metrics": "summary", "summary_entry": "summary",
    "SweepOutcome": "sweeps", "sweep": "sweeps", "RayOptions": "ray.cluster",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'foilbench.runner' has no attribute {name!r}")
    return getattr(importlib.import_module(f"foilbench.runner.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
