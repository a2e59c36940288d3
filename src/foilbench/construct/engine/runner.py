"""Run a construction pipeline by name: resolve backends, estimate spend, build, write.

Each pipeline module exposes ``ROLES`` ({role: required}), a config dataclass, ``plan(config)``
(most calls per role, for the estimate) and ``build(ctx, config) -> ConstructResult``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foilbench.construct.backends.api_preflight import preflight
from foilbench.construct.backends.base import Backend
from foilbench.construct.engine.budget import Estimate, estimate
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.construct.engine.resolve import backend_usage
from foilbench.construct.engine.stages import ConstructError, Context
from foilbench.data.format import Benchmark

PIPELINES: dict[str, tuple[str, str, str]] = {
    # name: (module, config class, one line)
    "composet": ("foilbench.construct.composet.pipeline", "ComposetConfig",
                 "CompoSET App. B: same-scene single-edit pairs, 3 caption tiers"),
    "sugarcrepe": ("foilbench.construct.sugarcrepe.pipeline", "SugarcrepeConfig",
                   "SugarCrepe App. D.2: LLM hard negatives of 7 types, then Alg. 1"),
    "autocomp": ("foilbench.construct.autocomp.pipeline", "AutocompConfig",
                 "Auto-Comp §3: Minimal/Contextual concepts, validation, Swap/Confusion"),
    "compass": ("foilbench.construct.compass.pipeline", "CompassConfig",
                "COMPASS §3: scene-graph captions realised by a text backend"),
}


@dataclass
class RunSummary:
    pipeline: str
    out: Path
    estimate: Estimate
    benchmark: Benchmark | None = None
    survival: list[dict] = field(default_factory=list)
    calls: dict[str, dict] = field(default_factory=dict)
    #: the run's spend by the backends' stated per-call prices (the cap's reckoning)
    spent_usd: float = 0.0
    #: the same over every run into this output folder (what --max-spend caps)
    spent_total_usd: float = 0.0
    #: what API backends counted: HTTP requests, their own cache hits, billed USD
    usage: dict[str, dict] = field(default_factory=dict)


def pipeline_module(name: str):
    if name not in PIPELINES:
        raise ConstructError(f"unknown pipeline {name!r}; possible: {', '.join(PIPELINES)}")
    return importlib.import_module(PIPELINES[name][0])


def check_roles(name: str, backends: dict[str, Backend]) -> None:
    roles = pipeline_module(name).ROLES
    missing = [r for r, required in roles.items() if required and r not in backends]
    if missing:
        raise ConstructError(f"{name} needs backend(s) for {', '.join(missing)} "
                             f"(give --{' --'.join(missing)})")
    extra = [r for r in backends if r not in roles]
    if extra:
        raise ConstructError(f"{name} does not use the {', '.join(extra)} role(s)")


def run_pipeline(name: str, config: Any, backends: dict[str, Backend], out: str | Path, *,
                 max_spend: float | None = None, retries: int = 2, backoff_s: float = 1.0,
                 progress: bool = True, dry_run: bool = False, ray: Any = None,
                 ledger: SpendLedger | None = None) -> RunSummary:
    """Build pipeline ``name`` into ``out`` (see the module docstring). With ``dry_run`` only
    the spend estimate is computed (no call is made, nothing is written). With ``ray`` (a
    :class:`~.ray_backends.RayConstructOptions`, backends from
    :func:`~.ray_backends.resolve_backends_on_ray`) the heavy stages run on Ray Data."""
    from foilbench.construct.engine.export import write_result

    module = pipeline_module(name)
    check_roles(name, backends)
    budget = ledger or SpendLedger(out, max_spend)
    summary = RunSummary(name, Path(out), estimate(module.plan(config), backends))
    summary.estimate.committed_usd = budget.total
    if dry_run:
        return summary
    preflight(backends, budget)
    context: Any = Context
    extra: dict[str, Any] = {}
    if ray is not None:
        from foilbench.construct.engine.ray_calls import RayContext

        context, extra = RayContext, {"ray_options": ray}
    ctx = context(out, backends, budget=budget, retries=retries, backoff_s=backoff_s,
                  progress=progress, pipeline=name, **extra)
    try:
        result = module.build(ctx, config)
        options = {"config": config.options(), "retries": retries, "max_spend": budget.cap}
        summary.benchmark = write_result(ctx, result, options)
    except ConstructError as e:
        e.survival = ctx.log.survival()  # "nothing survived": the table says where and why
        raise
    finally:
        ctx.close()
    summary.survival = ctx.log.survival()
    summary.calls = {k: dict(v) for k, v in ctx.stats.items()}
    summary.spent_usd = budget.spent
    summary.spent_total_usd = budget.total
    summary.usage = backend_usage(backends)
    return summary
