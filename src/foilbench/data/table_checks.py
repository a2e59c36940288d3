"""Checks of a benchmark as a whole, part of :func:`foilbench.data.validate.validate`, so that
``inspect`` and ``run`` ask the same and a run refuses before any item is scored.

Each of these once passed ``inspect`` and failed (or misreported) only after the model had
run: a ``score_unit`` naming no column (a crash in aggregation), a ``unit_chance`` that is
not a number in [0, 1] (a crash, or 7.0 stored and printed as 700%), an instance of a tiered
benchmark spanning two scenes (refused by the run alone), a tier outside the benchmark's tier
set (``"enormous"``: a row of its own in every per-tier table), and a table with no rows
("valid" with nothing to score).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from foilbench.errors import BenchmarkError

if TYPE_CHECKING:
    from foilbench.data.benchmark import Benchmark

# (item_id, field, reason, message, row): the fields of a validation Problem, which
# :mod:`foilbench.data.validate` builds from these (it imports this module, not the reverse)
Finding = tuple[str | None, str, str, str, int | None]

# CompoSET's verbosity tiers (App. A: "three matched caption pairs at three verbosity tiers
# (short, medium, long)"); a benchmark with other tiers names them in extras["tiers"].
DEFAULT_TIERS = ("short", "medium", "long")


def table_problems(bench: Benchmark) -> list[Finding]:
    """Problems of the table and manifest taken together (empty: none)."""
    found: list[Finding] = []
    extras = bench.manifest.extras
    items = bench.items
    if len(items) == 0:
        found.append((None, "items", "no_items",
                      "the benchmark has no items (its table holds 0 rows)", None))
    unit = extras.get("score_unit")
    if unit is not None and (not isinstance(unit, str) or unit not in items.columns):
        found.append((None, "extras.score_unit", "missing_unit_column",
                      f"score_unit {unit!r:.60} names no column of the table (have: "
                      f"{', '.join(map(str, items.columns))})", None))
    if "unit_chance" in extras and not finite_fraction(extras["unit_chance"]):
        found.append((None, "extras.unit_chance", "bad_unit_chance",
                      f"unit_chance must be a finite number in [0, 1], got "
                      f"{extras['unit_chance']!r:.60}", None))
    found += _tier_problems(bench)
    return found


def finite_fraction(value: object) -> bool:
    """A number (not a bool) that is finite and in [0, 1]."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and 0 <= value <= 1)


def benchmark_tiers(bench: Benchmark) -> tuple[str, ...]:
    """The tier names a benchmark may use: its manifest's ``extras["tiers"]``, else
    CompoSET's."""
    declared = bench.manifest.extras.get("tiers")
    if isinstance(declared, (list, tuple)) and all(isinstance(t, str) for t in declared):
        return tuple(declared)
    return DEFAULT_TIERS


def _tier_problems(bench: Benchmark) -> list[Finding]:
    """On a pair benchmark with tiers and an instance key (CompoSET format): every tier in
    the benchmark's tier set, and the instances well formed (one item per instance and tier,
    one scene per instance: :func:`foilbench.data.tiers.check_instances`)."""
    from foilbench.data.tiers import TIER, check_instances, instance_column

    items = bench.items
    instance = instance_column(items.columns)
    if not bench.item_kind.is_edit_pair or TIER not in items.columns or instance is None:
        return []
    allowed = benchmark_tiers(bench)
    found: list[Finding] = []
    ids = items["item_id"].tolist() if "item_id" in items.columns else [None] * len(items)
    for row, (tier, item_id) in enumerate(zip(items[TIER].tolist(), ids, strict=True)):
        if isinstance(tier, str) and tier not in allowed:
            found.append((None if item_id is None else str(item_id), TIER, "unknown_tier",
                          f"tier {tier!r:.60} is not one of the benchmark's tiers "
                          f"({', '.join(allowed)}; a benchmark with others names them in "
                          "manifest extras 'tiers')", row))
    if not bench.manifest.extras.get("score_unit") and items[TIER].dropna().nunique() > 1:
        try:
            check_instances(items, instance, where="tiered benchmark")
        except BenchmarkError as e:
            found.append((None, instance, "bad_instance", str(e), None))
    return found
