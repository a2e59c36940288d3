"""Run a construction pipeline by name: resolve backends, estimate spend, build, write.

Each pipeline module exposes ``ROLES`` ({role: required}), a config dataclass, ``plan(config)``
(most calls per role, for the estimate) and ``build(ctx, config) -> ConstructResult``.

Before any call (also for ``--dry-run``): the roles are checked (:func:`check_roles`), each
backend is checked to fit its role (:func:`check_fit`: an inpainting pipeline cannot generate,
the ``world`` validators read only world images) and the output folder is checked to be new
or this build's (:mod:`.outdir`). A run stopped by a spend cap (any
:class:`~foilbench.errors.SpendCapReached`) still writes its survival tables and provenance,
with every candidate not yet decided logged as ``not reached: spend cap``.
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
from foilbench.construct.engine.outdir import build_identity, check_out
from foilbench.construct.engine.resolve import backend_usage
from foilbench.construct.engine.stages import ConstructError, Context
from foilbench.data.format import Benchmark
from foilbench.errors import SpendCapReached

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
    #: per (stage, reason) that dropped candidates: count and the first causes verbatim
    drop_causes: list[dict] = field(default_factory=list)
    #: damaged call-cache entries met (each recomputed)
    cache_damaged: list[str] = field(default_factory=list)
    #: reservations a killed earlier run left open, found at the start (each still counted at
    #: its worst case until released: ``foilbench construct spend OUT --release``)
    left_open: list[dict] = field(default_factory=list)
    #: paid requests settled into this folder by every run (from the ledger)
    requests_total: int = 0


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


def _spec(backend: Backend) -> str:
    return str(getattr(backend, "spec", "") or "")


def _is_world(backend: Backend) -> bool:
    return _spec(backend) == "world"


#: world backends by role -> the roles whose images they read (the scene rides in the image)
WORLD_READERS = {"detector": ("image", "edit"), "vqa": ("image", "edit"), "edit": ("image",)}
WORLD_ALTERNATIVES = {"detector": "hf-det:DIR", "vqa": "hf-vlm:DIR or api:PROVIDER:MODEL",
                      "edit": "api:openai-image:MODEL or diffusers:DIR (with --detector)"}


def check_fit(name: str, backends: dict[str, Backend]) -> None:
    """Refuse a backend that cannot serve its role, with the fix (before any call is made)."""
    image = backends.get("image")
    pipe = getattr(image, "pipeline", None)
    if image is not None and pipe is not None and \
            "Inpaint" in str(getattr(pipe, "class_name", "")):
        raise ConstructError(
            f"--image {_spec(image)} is an inpainting pipeline ({pipe.class_name}): it repaints "
            "a masked region of a given image and cannot draw one from a prompt; give a "
            "text-to-image pipeline as --image (and this one as --edit, with --detector)")
    # a backend resolved from a user's spec other than world draws images without the scene
    # (one built in code, with no spec, is trusted: it may carry the scene along)
    drawn = [r for r in ("image", "edit") if r in backends and _spec(backends[r])
             and not (_is_world(backends[r]) or getattr(backends[r], "reads_structure", False))]
    for role, reads in WORLD_READERS.items():
        sources = [r for r in drawn if r in reads]
        if role in backends and _is_world(backends[role]) and sources:
            others = ", ".join(f"--{r} {_spec(backends[r]) or backends[r].fingerprint}"
                               for r in sources)
            raise ConstructError(
                f"--{role} world reads the scene that the world renderer stores in its images, "
                f"so it cannot {'edit' if role == 'edit' else 'check'} images from {others}; "
                f"give --{role} {WORLD_ALTERNATIVES[role]}"
                f"{' (or none)' if role == 'detector' and name == 'composet' else ''}, or use "
                + " and ".join(f"--{r} world" for r in sources))


def _headline(message: str, limit: int = 80) -> str:
    """An error's first clause, cut at a word for a table title (the log has it whole)."""
    head = message.split(";")[0].split(": on ")[0]
    return head if len(head) <= limit else head[:limit].rsplit(" ", 1)[0] + " ..."


def run_pipeline(name: str, config: Any, backends: dict[str, Backend], out: str | Path, *,
                 max_spend: float | None = None, retries: int = 2, backoff_s: float = 1.0,
                 progress: bool = True, dry_run: bool = False, ray: Any = None,
                 ledger: SpendLedger | None = None,
                 invocation: dict[str, Any] | None = None,
                 count_tokens: bool = False) -> RunSummary:
    """Build pipeline ``name`` into ``out`` (see the module docstring). With ``dry_run`` only
    the spend estimate is computed (no call is made, nothing is written). With ``ray`` (a
    :class:`~.ray_backends.RayConstructOptions`, backends from
    :func:`~.ray_backends.resolve_backends_on_ray`) the heavy stages run on Ray Data.
    ``invocation`` (the CLI's resolved options, ``--config`` file included) is recorded in
    ``construction.json`` under ``options.invocation``. With ``count_tokens`` (only with
    ``dry_run``) the bound asks the providers' free count endpoints for each stage's fixed
    prompt part (:func:`~.budget.estimate`)."""
    from foilbench.construct.engine.export import write_record, write_result

    module = pipeline_module(name)
    check_roles(name, backends)
    check_fit(name, backends)
    if int(retries) < 0:
        raise ConstructError(f"--retries must be 0 or more, got {retries}")
    check_out(out, build_identity(name, config.options(), backends), claim=not dry_run)
    budget = ledger or SpendLedger(out, max_spend)
    if count_tokens and not dry_run:
        raise ConstructError("count_tokens (--count-tokens) only applies to a dry run")
    summary = RunSummary(name, Path(out), estimate(module.plan(config), backends,
                                                   count_tokens=count_tokens))
    summary.estimate.committed_usd = budget.total
    if dry_run:
        return summary
    preflight(backends, budget)
    summary.left_open = budget.left_open()
    context: Any = Context
    extra: dict[str, Any] = {}
    if ray is not None:
        from foilbench.construct.engine.ray_calls import RayContext

        context, extra = RayContext, {"ray_options": ray}
    ctx = context(out, backends, budget=budget, retries=retries, backoff_s=backoff_s,
                  progress=progress, pipeline=name, **extra)
    options = {"config": config.options(), "retries": retries, "max_spend": budget.cap}
    if invocation is not None:  # the command's resolved options and config file (CLI)
        options["invocation"] = invocation
    try:
        result = module.build(ctx, config)
        summary.benchmark = write_result(ctx, result, options)
    except ConstructError as e:
        e.survival = ctx.log.survival()  # "nothing survived": the table says where and why
        e.drop_causes = ctx.log.drop_causes()
        # a stage that ended the build (e.g. "Algorithm 1 kept no item") leaves the tables too
        write_record(ctx, name, options, stopped=_headline(str(e)))
        raise
    except KeyboardInterrupt:  # Ctrl-C: every open candidate gets an outcome, tables written
        ctx.log.not_reached("interrupted")
        write_record(ctx, name, options, stopped="interrupted")
        raise
    except SpendCapReached as e:  # every candidate gets an outcome, the tables are written
        e.not_reached = ctx.log.not_reached("spend cap")
        write_record(ctx, name, options, stopped="spend cap")
        e.survival = ctx.log.survival()
        e.drop_causes = ctx.log.drop_causes()
        raise
    finally:
        ctx.close()
    summary.survival = ctx.log.survival()
    summary.drop_causes = ctx.log.drop_causes()
    summary.cache_damaged = list(ctx.cache.damaged)
    summary.calls = {k: dict(v) for k, v in ctx.stats.items()}
    summary.spent_usd = budget.spent
    summary.spent_total_usd = budget.total
    summary.requests_total = budget.requests
    summary.usage = backend_usage(backends)
    return summary
