"""Writing a constructed benchmark: the foilbench folder, its provenance, the survival table.

Every pipeline ends in :func:`write_result`: the items go through
:func:`foilbench.data.format.make_benchmark` (validation) and ``write_benchmark``; the manifest's
``extras["construction"]`` names the pipeline, every backend (role, spec class, fingerprint),
every prompt id (``name@version``) used with its content hash (``prompt_hashes``), the run's
options, call statistics per stage, the survival table and the drop causes. ``survival.json``,
``survival.md`` and ``construction.json`` (the provenance alone) sit beside it for people and
scripts; :func:`write_record` writes them also when nothing survives and when the run stopped
at the spend cap (``stopped``), so every stopped run still says where each candidate went.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from foilbench import __version__
from foilbench.construct.engine.log import SURVIVAL_HEADERS, survival_cells
from foilbench.construct.engine.stages import ConstructError, Context
from foilbench.data.format import Benchmark, Manifest, make_benchmark, write_benchmark

SURVIVAL_JSON = "survival.json"
SURVIVAL_MD = "survival.md"
#: the provenance, also written when no candidate survives (the manifest is not)
PROVENANCE_JSON = "construction.json"


@dataclass
class ConstructResult:
    """What a pipeline hands to the writer."""

    name: str
    kind: str
    rows: list[dict]
    description: str
    root: Path  # folder the image paths in ``rows`` are relative to
    license: str = "see sources"
    source: str = ""
    extras: dict[str, Any] = field(default_factory=dict)


def markdown_table(headers, rows) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def provenance(ctx: Context, options: dict[str, Any]) -> dict[str, Any]:
    from foilbench.construct.engine.resolve import backend_usage
    from foilbench.provenance import git_revision

    return {
        "pipeline": ctx.pipeline,
        "backends": {role: b.describe() for role, b in sorted(ctx.backends.items())},
        "prompts": sorted(ctx.prompts_used),
        "prompt_hashes": dict(sorted(ctx.prompt_hashes.items())),
        "options": options,
        "calls": {stage: dict(c) for stage, c in ctx.stats.items()},
        "spent_usd": round(ctx.budget.spent, 6),  # this process
        "spent_usd_folder_total": round(ctx.budget.total, 6),
        # every process on this folder (resumes, concurrent runs), from its ledger
        "spend": ctx.budget.describe() if hasattr(ctx.budget, "describe") else {},
        "api_usage": backend_usage(ctx.backends),
        "survival": ctx.log.survival(),
        "drop_causes": ctx.log.drop_causes(),
        "cache_damaged": list(ctx.cache.damaged),  # entries recomputed (or skipped) this run
        "package_version": __version__,
        "git_revision": git_revision(),
    }


def write_record(ctx: Context, name: str, options: dict[str, Any],
                 stopped: str | None = None) -> dict[str, Any]:
    """Write ``survival.json``, ``survival.md`` and ``construction.json``; the provenance."""
    from foilbench.jsonio import write_json

    rows = ctx.log.survival()
    write_json(ctx.out / SURVIVAL_JSON, rows)
    title = f"# {name}: survival per stage"
    if stopped:
        title += f" (run stopped: {stopped}; candidates not reached are in the log)"
    (ctx.out / SURVIVAL_MD).write_text(
        title + "\n\n" + markdown_table(SURVIVAL_HEADERS, survival_cells(rows)))
    prov = provenance(ctx, options)
    if stopped:
        prov["stopped"] = stopped
    (ctx.out / PROVENANCE_JSON).write_text(json.dumps(prov, indent=2, default=str) + "\n")
    return prov


def write_result(ctx: Context, result: ConstructResult, options: dict[str, Any]) -> Benchmark:
    """Validate and write the benchmark to ``ctx.out`` with its provenance and survival."""
    prov = write_record(ctx, result.name, options)
    if not result.rows:
        raise ConstructError(f"{result.name}: no candidate survived every stage, so there is no "
                             f"benchmark to write; see {ctx.out / SURVIVAL_MD} and the "
                             "construction log for why each was dropped")
    manifest = Manifest(name=result.name, kind=result.kind, license=result.license,
                        source=result.source or f"foilbench construct {ctx.pipeline}",
                        description=result.description,
                        extras={**result.extras, "construction": prov})
    bench = make_benchmark(manifest, pd.DataFrame(result.rows), result.root)
    write_benchmark(bench, ctx.out)
    return bench
