"""A stored run as tracker scalars: ``{prefix}/{benchmark}/{metric}`` = value, with
``_ci_low``, ``_ci_high``, ``_n`` and ``_chance`` beside it (an interval is part of the
result, so it is logged with it).

Key parts keep letters, digits and ``_ - . /`` and space (what MLflow accepts in a metric
name; W&B takes them too); anything else becomes ``_``, and a part is cut at 100
characters. With several models in one call give ``key`` with ``{model}`` in it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from foilbench.runner.summary import overall_metrics

DEFAULT_KEY = "{prefix}/{benchmark}/{metric}"
PART_LIMIT = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. ]")
SUFFIXES = {"value": "", "ci_low": "_ci_low", "ci_high": "_ci_high", "n": "_n",
            "chance": "_chance"}


def safe_part(text: Any) -> str:
    """One key part with only characters every tracker accepts (``/`` too: it nests)."""
    return _UNSAFE.sub("_", str(text))[:PART_LIMIT] or "_"


def scalars(record: Any, prefix: str = "foilbench", key: str = DEFAULT_KEY
            ) -> dict[str, float]:
    """The run's overall metrics as ``{key: float}`` (missing or non-finite values left out).
    ``record``: what ``on_result`` receives (a :class:`foilbench.runner.CellRecord`)."""
    fields = {"prefix": safe_part(prefix), "model": safe_part(record.result.model.spec),
              "benchmark": safe_part(record.result.benchmark.name)}
    out: dict[str, float] = {}
    for metric, row in overall_metrics(record.metrics).items():
        base = key.format(**fields, metric=safe_part(metric))
        for field, suffix in SUFFIXES.items():
            value = row.get(field)
            if value is None:
                continue
            value = float(value)
            if math.isfinite(value):
                out[base + suffix] = value
    return out


def step_of(record: Any, step: int | None = None) -> int | None:
    """``step`` when given, else the run's ``metadata["step"]`` (``runner.run(...,
    metadata={"step": N})``), else None."""
    if step is not None:
        return int(step)
    found = (record.result.stats.get("metadata") or {}).get("step")
    return int(found) if isinstance(found, (int, float)) and not isinstance(found, bool) \
        else None
