"""``foilbench finetune``: Auto-Comp App. A.9 hard-negative fine-tuning of a real dual
encoder, Swap-only vs Confusion-only, with a before/after table on held-out concepts."""

from __future__ import annotations

from pathlib import Path

import click

from foilbench.cli._table import format_table


def table8_text(deltas: list[dict], cfg) -> str:
    """The deltas in Auto-Comp Table 8's layout, with its legend."""
    from foilbench.finetune.table8 import table8

    frame = table8(deltas)
    return ("Auto-Comp Table 8 layout (R@1 deltas in points [95% paired bootstrap]; "
            f"* = trained cell: {cfg.task}, N = {cfg.n_objects}, {cfg.condition}, "
            "held-out concepts; other cells: all their concepts)\n"
            + format_table(list(frame.columns), frame.values.tolist()))


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r}: give comma-separated integers") from None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--model", "model_spec", required=True,
              help="openclip:ARCH:WEIGHTS, openclip:CONFIG.json[:WEIGHTS] or hf:DIR.")
@click.option("--benchmark", "benchmarks", multiple=True, default=("synth",),
              show_default=True, help="Auto-Comp benchmarks (swap and confusion items of the "
              "same concepts); repeatable; a suite gives its Auto-Comp members.")
@click.option("--negatives", default="swap,confusion", show_default=True,
              help="swap, confusion, or both (the paper's matched comparison).")
@click.option("--k", type=int, default=3, show_default=True, help="Hard negatives per positive.")
@click.option("--task", default="color", show_default=True, help="Training task (A.9: color).")
@click.option("--n", "n_objects", type=int, default=2, show_default=True,
              help="Training N (A.9: 2).")
@click.option("--condition", default="minimal", show_default=True,
              help="Training condition (A.9: minimal).")
@click.option("--steps", type=int, default=5000, show_default=True,
              help="Optimiser steps at most (A.9: 5000).")
@click.option("--warmup", type=int, default=500, show_default=True,
              help="Linear learning-rate warm-up steps (A.9: 500).")
@click.option("--lr", type=float, default=1e-6, show_default=True,
              help="Peak learning rate of AdamW (A.9: 1e-6).")
@click.option("--weight-decay", type=float, default=0.1, show_default=True,
              help="AdamW weight decay (A.9: 0.1).")
@click.option("--batch-size", type=int, default=2048, show_default=True,
              help="Positives per step (A.9: 2048 CLIP, 4096 SigLIP).")
@click.option("--micro-batch", type=int, default=0, show_default=True,
              help="Gradient accumulation in micro-batches of this size (0: one pass).")
@click.option("--eval-every", type=int, default=250, show_default=True,
              help="Steps between validation Confusion evaluations (early stopping).")
@click.option("--patience", type=int, default=4, show_default=True,
              help="Evaluations without improvement before stopping.")
@click.option("--seeds", default="0,1,2", show_default=True, help="Comma-separated seeds.")
@click.option("--split-seed", type=int, default=0, show_default=True,
              help="Seed of the concepts' train / validation / test split.")
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda, cuda:N.")
@click.option("--no-mixed-precision", is_flag=True, help="On cuda, train in float32.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("foilbench-finetune"), show_default=True,
              help="Folder for each arm's weights and finetune.json.")
def finetune(model_spec: str, benchmarks: tuple[str, ...], negatives: str, k: int, task: str,
             n_objects: int, condition: str, steps: int, warmup: int, lr: float,
             weight_decay: float, batch_size: int, micro_batch: int, eval_every: int,
             patience: int, seeds: str, split_seed: int, device: str, no_mixed_precision: bool,
             out_dir: Path) -> None:
    """Fine-tune MODEL with K hard negatives per positive (Auto-Comp App. A.9) and compare
    R@1 before and after on every (task, N, condition) cell the benchmarks hold.

    The trained cell (--task, --n, --condition) and its other condition are scored on the
    held-out 20% of its concepts; every other cell (other N, other tasks: cross-axis) on
    all its concepts. Deltas per cell against the pretrained model and Delta_C (Confusion
    arm minus Swap arm) are printed per row and in Auto-Comp Table 8's layout, the
    trained cell marked *.

    \b
      foilbench finetune --model openclip:ViT-B-16:openai --device cuda --micro-batch 256
      foilbench finetune --model hf:/models/siglip --negatives confusion --seeds 0
    """
    from foilbench.finetune.config import FinetuneConfig
    from foilbench.finetune.run import finetune as run_finetune

    cfg = FinetuneConfig(
        negatives=tuple(x.strip() for x in negatives.split(",") if x.strip()), k=k, task=task,
        n_objects=n_objects, condition=condition, steps=steps, warmup=warmup, lr=lr,
        weight_decay=weight_decay, batch_size=batch_size, micro_batch=micro_batch,
        eval_every=eval_every, patience=patience, seeds=_ints(seeds), split_seed=split_seed,
        device=device, mixed_precision=not no_mixed_precision)
    record = run_finetune(model_spec, benchmarks, out_dir, cfg,
                          log=lambda msg: click.echo(msg, err=True))
    click.echo(format_table(
        ["model", "task", "N", "set", "condition", "role", "n", "R@1 [95% Wilson]",
         "R@1-valid [95% Wilson]", "ties"],
        [[r["model"], r["task"], r["n_objects"], r["negative_set"], r["condition"], r["role"],
          r["n"], f"{r['r1']:.3f} [{r['r1_low']:.3f}, {r['r1_high']:.3f}]",
          f"{r['r1_valid']:.3f} [{r['r1_valid_low']:.3f}, {r['r1_valid_high']:.3f}]",
          r["ties"]] for r in record["r1"]]))
    click.echo("")
    click.echo(format_table(
        ["task", "N", "set", "condition", "role", "comparison (R@1, seeds averaged)", "n",
         "delta [95% bootstrap]", "p"],
        [[r["task"], r["n_objects"], r["negative_set"], r["condition"], r["role"],
          r["comparison"], r["n"],
          f"{r['delta']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]",
          f"{r['p_value']:.3f}"] for r in record["deltas"]]))
    click.echo("")
    click.echo(table8_text(record["deltas"], cfg))
    click.echo("")
    for name, spec in record["weights"].items():
        click.echo(f"{name}: {spec}")
    click.echo(f"record: {out_dir / 'finetune.json'}")
