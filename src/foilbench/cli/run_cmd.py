"""``foilbench run``: evaluate models on benchmarks, store every run, write summary.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from foilbench.cli.run_output import print_tables
from foilbench.data.registry import resolve_benchmarks
from foilbench.data.validate import format_problems
from foilbench.evaluation import (
    autocomp_summary,
    blind_rows,
    chance_rows,
    compass_summary,
    evaluate_and_store,
    summary_entry,
)
from foilbench.models.device import DTYPES
from foilbench.models.registry import EMBEDDED_DEFAULTS, resolve_model
from foilbench.provenance import collect_provenance, git_revision
from foilbench.stats.breakdown import CI_METHODS
from foilbench.store.cache import EmbeddingCache
from foilbench.store.db import ResultsStore, new_batch_id, to_json

DB_FILE = "foilbench.duckdb"
DEFAULT_SUITE = "synth"


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--model", "models", multiple=True, metavar="SPEC",
              help="Model to evaluate (repeatable): a name from `foilbench models` "
                   "(tiny-random, foilbench-plain, ...) or SCHEME:REST, e.g. "
                   "openclip:ViT-B-32:/path/weights.pt or hf:/local/clip_dir. "
                   "Default: the three embedded models.")
@click.option("--benchmark", "benchmarks", multiple=True, metavar="SPEC",
              help="Benchmark (repeatable): a suite or registered name (see `foilbench "
                   "benchmarks`), a foilbench-format folder, or LOADER:PATH such as "
                   "sugarcrepe:/data/sugarcrepe. Default: the embedded synth suite.")
@click.option("--out", "out_dir", default="foilbench-runs", show_default=True,
              type=click.Path(file_okay=False), help="Folder for the results database "
              f"({DB_FILE}) and one subfolder per invocation holding summary.json.")
@click.option("--device", default="auto", show_default=True,
              help="auto, cpu, cuda, cuda:N or mps.")
@click.option("--dtype", default="float32", show_default=True, type=click.Choice(DTYPES))
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(min=1),
              help="Unique inputs per forward pass.")
@click.option("--n-boot", default=10_000, show_default=True, type=click.IntRange(min=100),
              help="Bootstrap resamples for the scene-clustered intervals.")
@click.option("--seed", default=42, show_default=True, type=int, help="Bootstrap seed.")
@click.option("--ci-method", default="auto", show_default=True, type=click.Choice(CI_METHODS),
              help="auto = scene-clustered bootstrap when items carry scene_id, else Wilson.")
@click.option("--allow-partial", is_flag=True,
              help="Drop invalid items (reported with counts) instead of refusing the "
                   "benchmark; the run is marked partial everywhere.")
@click.option("--cache", "cache_dir", default=None, type=click.Path(file_okay=False),
              help="Embedding cache folder (default $FOILBENCH_CACHE or "
                   "~/.cache/foilbench/embeddings).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the embedding cache.")
@click.option("--no-report", is_flag=True, help="Skip the HTML report.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
def run(models: tuple[str, ...], benchmarks: tuple[str, ...], out_dir: str, device: str,
        dtype: str, batch_size: int, n_boot: int, seed: int, ci_method: str,
        allow_partial: bool, cache_dir: str | None, no_cache: bool, no_report: bool,
        quiet: bool) -> None:
    """Evaluate every --model on every --benchmark, one stored run per pair.

    Pair benchmarks report I2T, T2I and Group (CompoSET Eq. 1-3); choice benchmarks report R@1.
    Ties count as failures (strict >) and are reported. Each metric comes with a 95% interval
    and its chance level.

    \b
    Examples:
      foilbench run
      foilbench run --model tiny-random --benchmark tiny-builtin --out /tmp/fb
      foilbench run --model openclip:ViT-B-32:/w/vitb32.pt --benchmark ./my_bench
    """
    err = Console(stderr=True)
    on_invalid = "drop" if allow_partial else "raise"
    # models first: a bad spec or device fails before any benchmark is built
    if not models:
        models = EMBEDDED_DEFAULTS
        err.print(f"[bold]default[/bold] models: the embedded {', '.join(models)}")
    loaded = [(spec, resolve_model(spec, device=device, dtype=dtype)) for spec in models]
    if not benchmarks:
        benchmarks = (DEFAULT_SUITE,)
        err.print(f"[bold]default[/bold] benchmarks: the embedded {DEFAULT_SUITE!r} suite")
    benches = [b for spec in benchmarks for b in resolve_benchmarks(spec, on_invalid=on_invalid)]
    for bench in benches:
        if bench.dropped:
            err.print(f"[yellow]warning[/yellow]: {bench.name}: dropped {bench.dropped.n} invalid "
                      f"item(s); results are PARTIAL.\n{format_problems(bench.dropped.problems)}")

    out = Path(out_dir)
    batch_id = new_batch_id()
    batch_dir = out / batch_id
    batch_dir.mkdir(parents=True, exist_ok=True)
    cache = None if no_cache else EmbeddingCache(cache_dir)
    revision = git_revision()
    records = []
    with ResultsStore(out / DB_FILE) as store:
        for spec, adapter in loaded:
            for bench in benches:
                err.print(f"evaluating [cyan]{spec}[/cyan] on [cyan]{bench.name}[/cyan] "
                          f"({len(bench)} items)")
                records.append(evaluate_and_store(
                    adapter, bench, store, cache=cache, batch_size=batch_size, n_boot=n_boot,
                    seed=seed, ci_method=ci_method, batch_id=batch_id, progress=not quiet,
                    revision=revision))
    reference = {b.name: _reference(b, records, err) for b in benches}
    summary = {
        "batch_id": batch_id,
        "db_path": str(out / DB_FILE),
        "provenance": collect_provenance(seed=seed, n_boot=n_boot, ci_method=ci_method,
                                         revision=revision),
        "results": [{"run_id": r.run_id, "model": r.result.model.spec,
                     "benchmark": r.result.benchmark.name, "metric": m, **v}
                    for r in records for m, v in summary_entry(r)["metrics"].items()],
        "runs": [summary_entry(r) for r in records],
        "reference": reference,
        "compass": {r.run_id: c for r in records if (c := compass_summary(r)) is not None},
        "autocomp": {r.run_id: a for r in records if (a := autocomp_summary(r)) is not None},
    }
    summary_path = batch_dir / "summary.json"
    summary_path.write_text(to_json(summary) + "\n")
    print_tables(Console(), records, reference)
    for run_id, tables in summary["compass"].items():
        spec = next(r.result.model.spec for r in records if r.run_id == run_id)
        click.echo(f"\nCOMPASS integration gap by level ({spec}; by N in summary.json and "
                   f"the report):\n{tables['gap_by_level_markdown']}\n"
                   f"\nCOMPASS skill load ({spec}):\n{tables['skill_load_markdown']}")
    _print_autocomp(records, summary["autocomp"])
    err.print(f"stored {len(records)} run(s) in {out / DB_FILE}; summary: {summary_path}")
    if not no_report:
        _report(out / DB_FILE, [r.run_id for r in records], batch_dir / "report.html", err)


def _reference(bench, records, err: Console) -> dict[str, Any]:
    """Chance per metric (from the stored per-item chance) and the blind baseline if any."""
    mine = [r for r in records if r.result.benchmark is bench]
    ref: dict[str, Any] = {"chance": chance_rows(mine[0].metrics) if mine else {}}
    try:
        blind = blind_rows(bench)
    except Exception as e:  # an optional audit must never lose the runs already stored
        err.print(f"[yellow]warning[/yellow]: blind baseline skipped on {bench.name}: {e}")
        blind = None
    if blind:
        ref["blind"] = json.loads(to_json(blind))
    return ref


def _print_autocomp(records, blocks: dict[str, dict]) -> None:
    """Auto-Comp r1 vs r1_valid for every model side by side, and the affected item counts."""
    if not blocks:
        return
    from foilbench.analysis.autocomp_valid import batch_markdown

    click.echo("\nAuto-Comp: r1 (the paper's, all candidates) vs r1_valid (primary *, false "
               "negatives only); chance = mean per-item 1/(K+1), paper_chance = the closed "
               "form (per-cell tables in summary.json and the report):")
    click.echo(batch_markdown([r.result for r in records]))
    seen = {}
    for block in blocks.values():
        seen.setdefault(block["benchmark"], block)
    for name, block in seen.items():
        click.echo(f"{name}: {block['items_with_true_negative']} of {block['n_items']} items "
                   "hold a true negative")


def _report(db_path: Path, run_ids: list[str], out_path: Path, err: Console) -> None:
    from foilbench.report import write_report

    err.print(f"report: {write_report(db_path, run_ids, out_path)}")
