"""``foilbench sweep``: every model on every benchmark, resumable, one Table-8 matrix.

Parses options and prints; the work (resume check, shared embedding cache, the matrix in the
store and as CSV, Markdown and LaTeX) is :func:`foilbench.runner.sweep`.
"""

from __future__ import annotations

import click
from rich.console import Console

from foilbench.cli.config_option import config_option
from foilbench.cli.log_level import log_from
from foilbench.cli.options import evaluation_options, ray_from, ray_options, settings_from
from foilbench.display import safe_message
from foilbench.models.labels import split_labels
from foilbench.runner import sweep as run_sweep
from foilbench.runner.settings import DB_FILE
from foilbench.scoring.prepared import summary_line


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@evaluation_options(specs_required=True, out_help="sweep-<id>/matrix.{csv,md,tex}")
@ray_options()
@config_option()
@click.option("--db", "db_path", default=None, type=click.Path(dir_okay=False),
              help=f"Results database (default OUT/{DB_FILE}); finished runs in it are reused.")
@click.option("--matrix-only", is_flag=True,
              help="Evaluate nothing, load no model: rebuild the matrix files of these models "
                   "x benchmarks from the runs stored in the database (each cell must be "
                   "there).")
def sweep(models: tuple[str, ...], benchmarks: tuple[str, ...], out_dir: str,
          db_path: str | None, matrix_only: bool, **options) -> None:
    """Models x benchmarks in one matrix, like CompoSET Table 8 (resumable).

    Each cell is the benchmark's primary metric (Group for 2x2 benchmarks, T2I R@1 for
    image-foil-only, I2T R@1 for text-foil-only ones) with its 95% interval, the one `run`
    and `show` print; matrix.md and matrix.tex hold CompoSET Table 8's Wald intervals
    (labelled), matrix.csv both. Run it again with
    more models or benchmarks: finished (model, benchmark, settings) runs are reused, so only
    the new cells are computed. With --ray the cells run on Ray workers, one model load per
    worker (docs/scale-out.md); the stored results are the same.

    \b
    Examples:
      foilbench sweep --model tiny-random --benchmark tiny-builtin --out /tmp/fb
      foilbench sweep --model openclip:ViT-B-32:/w/b32.pt --model hf:/w/siglip \\
          --benchmark winoground:/data/winoground --benchmark sugarcrepe:/data/sc?images=/coco
      foilbench sweep --config sweep.toml   (models = ["@models.txt"], ...; docs/config.md)
      foilbench sweep --ray auto --device cuda --model hf:/w/siglip --benchmark /data/bench
    """
    err = Console(stderr=True)
    ray = ray_from(options)
    config = options.pop("config_file")
    models = tuple(split_labels(models)[0])  # the matrix names each model by its spec
    outcome = run_sweep(models, benchmarks, out_dir, db=db_path, settings=settings_from(options),
                        log=log_from(options, err), ray=ray, config=config,
                        matrix_only=matrix_only)
    # the stored interval, as `run` and `show` print it; benchmark and model names escaped
    click.echo(safe_message(outcome.markdown(), None))
    if outcome.comparisons is not None and not outcome.comparisons.empty:
        from foilbench.report.comparisons import markdown as comparisons_markdown

        versus = safe_message(comparisons_markdown(outcome.comparisons), None)
        click.echo(f"\nModel vs model (paired, primary metric):\n\n{versus}")
    err.print(f"sweep {outcome.sweep_id}: {outcome.computed} run(s) computed, "
              f"{outcome.reused} reused; database {outcome.db_path}; matrix: "
              f"{', '.join(map(str, outcome.paths))}")
    images = summary_line(outcome.preparation)
    if images:
        err.print(images)
    if outcome.failures:
        raise click.ClickException(f"{len(outcome.failures)} cell(s) failed: "
                                   f"{'; '.join(outcome.failures)}")
