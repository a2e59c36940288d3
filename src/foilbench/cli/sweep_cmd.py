"""``foilbench sweep``: every model on every benchmark, resumable, one Table-8 matrix.

The run loop is :func:`foilbench.evaluation.evaluate_and_store` (the same call ``foilbench run``
makes); this command only adds the resume check (a stored run with the same model fingerprint,
benchmark checksum and config hash is reused, not recomputed), one embedding cache shared by
all benchmarks, and the matrix (:mod:`foilbench.analysis.matrix`) written to the store and as
CSV, Markdown and LaTeX.
"""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd
from rich.console import Console

from foilbench import evaluation
from foilbench.analysis import matrix
from foilbench.data.registry import resolve_benchmarks
from foilbench.data.validate import format_problems
from foilbench.errors import FoilbenchError
from foilbench.evaluation import evaluate_and_store
from foilbench.models.device import DTYPES
from foilbench.models.registry import resolve_model
from foilbench.provenance import git_revision
from foilbench.stats.breakdown import CI_METHODS
from foilbench.store.cache import EmbeddingCache
from foilbench.store.db import ResultsStore, new_batch_id
from foilbench.store.sweeps import write_sweep

DB_FILE = "foilbench.duckdb"


def ensure_checksum(bench) -> str:
    if not bench.manifest.checksum:
        bench.manifest.checksum = bench.compute_checksum()
    return bench.manifest.checksum


def sweep_cells(loaded, benches, store, *, cache, settings: dict, batch_size: int,
                batch_id: str, progress: bool, err: Console,
                failures: list[str]) -> pd.DataFrame:
    """Evaluate or reuse every (model, benchmark); one matrix cell per pair.

    A pair whose evaluation raises a :class:`FoilbenchError` is named in ``failures`` and left
    out (its cell prints as a dash); the others still run and are stored.

    ``settings`` (seed, n_boot, ci_method) are the ones that change the stored numbers and
    enter the resume key; ``batch_size`` does not.
    """
    cfg = evaluation.run_config_hash(**settings)
    revision = git_revision()
    rows: list[dict] = []
    for spec, adapter in loaded:
        fingerprint = adapter.info.fingerprint
        for bench in benches:
            metric = bench.manifest.primary_metric
            run_id = store.find_run(fingerprint, ensure_checksum(bench), cfg)
            reused = run_id is not None
            if reused:
                err.print(f"skip [cyan]{spec}[/cyan] x [cyan]{bench.name}[/cyan]: "
                          f"finished run {run_id}")
                metrics = store.load_metrics(run_id)
            else:
                err.print(f"evaluating [cyan]{spec}[/cyan] on [cyan]{bench.name}[/cyan] "
                          f"({len(bench)} items)")
                try:
                    record = evaluate_and_store(adapter, bench, store, cache=cache,
                                                batch_size=batch_size, batch_id=batch_id,
                                                progress=progress, revision=revision,
                                                **settings)
                except FoilbenchError as e:  # one failed cell must not lose the others
                    err.print(f"[red]failed[/red] {spec} x {bench.name}: {e}")
                    failures.append(f"{spec} x {bench.name}")
                    continue
                run_id, metrics = record.run_id, record.metrics
            rows.append({"model": spec, "benchmark": bench.name,
                         **matrix.cell_from_metrics(metrics, metric),
                         "partial": bool(bench.manifest.partial), "run_id": run_id,
                         "reused": reused})
    return pd.DataFrame(rows, columns=[*matrix.CELL_COLUMNS, "reused"])


def write_outputs(cells: pd.DataFrame, out_dir: Path, models: list[str],
                  benchmarks: list[str]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    forms = {"matrix.csv": matrix.to_csv(cells),
             "matrix.md": matrix.to_markdown(cells, models, benchmarks),
             "matrix.tex": matrix.to_latex(cells, models, benchmarks)}
    paths = []
    for name, text in forms.items():
        (out_dir / name).write_text(text)
        paths.append(out_dir / name)
    return paths


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--model", "models", multiple=True, required=True, metavar="SPEC",
              help="Model (repeatable): a name from `foilbench models` or SCHEME:REST.")
@click.option("--benchmark", "benchmarks", multiple=True, required=True, metavar="SPEC",
              help="Benchmark (repeatable): a suite, a registered name, a foilbench folder "
                   "or LOADER:PATH, e.g. sugarcrepe:/data/sugarcrepe?images=/data/val2017.")
@click.option("--out", "out_dir", default="foilbench-runs", show_default=True,
              type=click.Path(file_okay=False),
              help=f"Folder for the database ({DB_FILE}) and sweep-<id>/matrix.{{csv,md,tex}}.")
@click.option("--db", "db_path", default=None, type=click.Path(dir_okay=False),
              help=f"Results database (default OUT/{DB_FILE}); finished runs in it are reused.")
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda[:N], mps.")
@click.option("--dtype", default="float32", show_default=True, type=click.Choice(DTYPES))
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(min=1))
@click.option("--n-boot", default=10_000, show_default=True, type=click.IntRange(min=100))
@click.option("--seed", default=42, show_default=True, type=int, help="Bootstrap seed.")
@click.option("--ci-method", default="auto", show_default=True, type=click.Choice(CI_METHODS))
@click.option("--allow-partial", is_flag=True,
              help="Drop invalid items instead of refusing a benchmark; marked partial "
                   "(dagger) in every output.")
@click.option("--cache", "cache_dir", default=None, type=click.Path(file_okay=False),
              help="Embedding cache folder, shared by all benchmarks of the sweep.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the embedding cache.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
def sweep(models, benchmarks, out_dir, db_path, device, dtype, batch_size, n_boot, seed,
          ci_method, allow_partial, cache_dir, no_cache, quiet) -> None:
    """Models x benchmarks in one matrix, like CompoSET Table 8 (resumable).

    Each cell is the benchmark's primary metric (Group for 2x2 benchmarks, T2I R@1 for
    image-foil-only, I2T R@1 for text-foil-only ones) with its 95% interval. Run it again with
    more models or benchmarks: finished (model, benchmark, settings) runs are reused, so only
    the new cells are computed.

    \b
    Examples:
      foilbench sweep --model tiny-random --benchmark tiny-builtin --out /tmp/fb
      foilbench sweep --model openclip:ViT-B-32:/w/b32.pt --model hf:/w/siglip \\
          --benchmark winoground:/data/winoground --benchmark sugarcrepe:/data/sc?images=/coco
    """
    err = Console(stderr=True)
    on_invalid = "drop" if allow_partial else "raise"
    benches = [b for spec in benchmarks for b in resolve_benchmarks(spec, on_invalid=on_invalid)]
    for bench in benches:
        if bench.dropped:
            err.print(f"[yellow]warning[/yellow]: {bench.name}: dropped {bench.dropped.n} "
                      f"invalid item(s); PARTIAL.\n{format_problems(bench.dropped.problems)}")
    loaded = [(spec, resolve_model(spec, device=device, dtype=dtype)) for spec in models]
    out = Path(out_dir)
    db = Path(db_path) if db_path else out / DB_FILE
    sweep_id = new_batch_id()
    cache = None if no_cache else EmbeddingCache(cache_dir)
    settings = {"seed": seed, "n_boot": n_boot, "ci_method": ci_method}
    failures: list[str] = []
    with ResultsStore(db) as store:
        cells = sweep_cells(loaded, benches, store, cache=cache, settings=settings,
                            batch_size=batch_size, batch_id=sweep_id, progress=not quiet,
                            err=err, failures=failures)
        write_sweep(store.con, sweep_id, cells)
    paths = write_outputs(cells.drop(columns=["reused"]), out / f"sweep-{sweep_id}",
                          list(models), [b.name for b in benches])
    click.echo(matrix.to_markdown(cells.drop(columns=["reused"]), list(models),
                                  [b.name for b in benches]))
    reused = int(cells["reused"].sum())
    err.print(f"sweep {sweep_id}: {len(cells) - reused} run(s) computed, {reused} reused; "
              f"database {db}; matrix: {', '.join(map(str, paths))}")
    if failures:
        raise click.ClickException(f"{len(failures)} cell(s) failed: {'; '.join(failures)}")
