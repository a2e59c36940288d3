"""``foilbench build``: build benchmarks from the procedural world."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import click

from foilbench.cli._table import format_table
from foilbench.errors import FoilbenchError


@click.group()
def build() -> None:
    """Build benchmarks from the procedural world (no download, seeded, byte-identical).

    \b
      foilbench build synth                      the embedded suite, into the run cache
      foilbench build synth --seed 1 --out ./synth --size 224
    """


def _counts_table(benches) -> str:
    rows = [(b.name, b.kind, len(b), len(b.unique_images()), len(b.unique_texts()))
            for b in benches]
    return format_table(("benchmark", "kind", "items", "images", "texts"), rows)


def _autocomp_table(bench) -> str:
    items = bench.items
    grouped = items.groupby(["task", "n_objects"], sort=True)
    rows = [(task, n, g["concept_id"].nunique(), len(g), int(g["n_negatives"].min()),
             int(g["n_negatives"].max()), int(g["n_duplicates_removed"].sum()),
             int((g["n_true_negatives"] > 0).sum()) if "n_true_negatives" in g else "-")
            for (task, n), g in grouped]
    return format_table(("task", "N", "concepts", "items", "neg min", "neg max", "dup removed",
                         "items with a true negative"), rows)


def _controls_summary(bench) -> str:
    """CompoSET data controls of the pair set: affected-pixel fraction and token change."""
    from foilbench.analysis.controls import audit_controls

    summary = audit_controls(bench, minilm=False)["summary"]
    px = summary.get("pixels", {})
    lines = [f"fraction of pixels affected (CompoSET App. F.1: 512 px, blur 1, >10/255) over "
             f"{px.get('n_pairs', 0)} pairs: median "
             f"{px.get('fraction_affected_median', float('nan')):.4f} (CompoSET 0.048), mean "
             f"{px.get('fraction_affected', float('nan')):.4f} (CompoSET 0.083)"]
    by_type = summary.get("fraction_affected_by_edit_type", {})
    if by_type:
        lines.append(format_table(("edit type", "median fraction affected"),
                                  [(k, f"{v:.4f}") for k, v in sorted(by_type.items())]))
    rows = [(tier, vals.get("token_change_fraction", float("nan")))
            for tier, vals in summary["text_by_tier"].items()]
    lines.append(format_table(("tier", "token change fraction"), rows))
    return "\n".join(lines)


@build.command()
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of every scene, concept and backdrop; same seed, same bytes.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None,
              help="Output folder. Default: the cache folder `foilbench run` reads.")
@click.option("--size", type=click.IntRange(32, 2048), default=None,
              help="Image side in pixels (default 160, the suite's size).")
@click.option("--controls/--no-controls", default=True, show_default=True,
              help="Print the data-control audit of the pair set (pixels, token change).")
@click.option("--force", is_flag=True, help="Rebuild even if the output folder has a suite.")
def synth(seed: int, out_dir: Path | None, size: int | None, controls: bool,
          force: bool) -> None:
    """Write the embedded suite: single-edit pairs, Auto-Comp Swap/Confusion, COMPASS.

    Each benchmark is a foilbench folder (manifest.json, items.parquet, images) under the
    output folder, indexed by suite.json. Counts per benchmark are printed, then the
    Auto-Comp cells and the data-control audit of the pairs.
    """
    from foilbench.construct.suite import (
        DEFAULT_SIZE,
        SUITE_FILE,
        build_suite,
        cache_dir,
        load_suite,
    )

    if out_dir is None:
        if size not in (None, DEFAULT_SIZE):
            raise click.UsageError(f"the run cache holds {DEFAULT_SIZE}px images; give --out "
                                   f"to build at --size {size}")
        out_dir = cache_dir(seed)
    size = size or DEFAULT_SIZE
    if (out_dir / SUITE_FILE).exists() and not force:
        click.echo(f"suite already built in {out_dir} (use --force to rebuild)")
    else:
        if force and out_dir.exists():
            shutil.rmtree(out_dir)
        index = build_suite(out_dir, seed=seed, size=size, progress=sys.stderr.isatty())
        for part, why in index["skipped"].items():
            click.echo(f"note: skipped {part}: {why}")
        click.echo(f"wrote {out_dir}")
    benches = load_suite(out_dir, check_images=False)
    click.echo(_counts_table(benches))
    by_name = {b.name: b for b in benches}
    if "autocomp-confusion" in by_name:
        click.echo("\nAuto-Comp Confusion (N=1 has no negatives, so no items):")
        click.echo(_autocomp_table(by_name["autocomp-confusion"]))
    pairs = next((b for b in benches if b.item_kind.is_edit_pair), None)
    if controls and pairs is not None:
        try:
            text = _controls_summary(pairs)
        except (ImportError, FoilbenchError) as e:
            # optional dependencies (open_clip's BPE): the suite is written, so this is a note
            text = f"(data-control audit unavailable: {e})"
        click.echo(f"\nData controls of {pairs.name}:")
        click.echo(text)
