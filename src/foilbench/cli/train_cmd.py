"""``foilbench train``: rebuild the embedded default models from scratch."""

from __future__ import annotations

from pathlib import Path

import click

from foilbench.models.embedded import VARIANTS
from foilbench.paths import train_dir


def _default_cache() -> Path:
    return train_dir()


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--model", "model", type=click.Choice([*VARIANTS, "all"]), default="all",
              show_default=True, help="Which embedded model to train.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seeds the training scenes, the batches and the initial weights.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("foilbench-weights"), show_default=True,
              help="Folder for <name>.safetensors and <name>.json.")
@click.option("--steps", type=int, default=None,
              help="Optimiser steps per model (default: the shipped recipe's).")
@click.option("--threads", type=int, default=1, show_default=True,
              help="torch CPU threads. Same seed and thread count give identical weights.")
@click.option("--scenes", type=int, default=None,
              help="Training scenes to render (default: the shipped recipe's).")
@click.option("--batch-size", type=int, default=None, help="Images per batch.")
@click.option("--cache", "cache_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Where the rendered training set is cached "
              "[default: $FOILBENCH_HOME/train or ~/.cache/foilbench/train].")
@click.option("--no-cache", is_flag=True, help="Render the training set in memory only.")
@click.option("--world", type=click.Choice(["procedural", "standin"]), default="procedural",
              show_default=True, help="Scene source; 'standin' is a flat-shapes world for "
              "quick smoke tests of the trainer only.")
def train(model: str, seed: int, out_dir: Path, steps: int | None, threads: int,
          scenes: int | None, batch_size: int | None, cache_dir: Path | None, no_cache: bool,
          world: str) -> None:
    """Train the embedded dual encoders on the procedural world.

    \b
    Renders training scenes from a seed stream of their own (and drops any scene whose
    signature is a benchmark scene's), then trains one small dual encoder per recipe:
      plain     symmetric InfoNCE (CLIP loss)
      swapneg   + NegCLIP-style swap negatives in the batch
      confneg   + swap and Auto-Comp-style confusion negatives
    With the defaults, the same --seed and --threads reproduce the shipped weights:
      foilbench train --out ./weights            all three models
      foilbench train --model plain --steps 50   a quick run
    """
    from dataclasses import replace

    from foilbench.train.dataset import DataConfig
    from foilbench.train.loop import TrainConfig
    from foilbench.train.pipeline import train_variants
    from foilbench.train.world_source import load_world

    for name, value in (("--steps", steps), ("--threads", threads), ("--scenes", scenes),
                        ("--batch-size", batch_size)):
        if value is not None and value < 1:
            raise click.BadParameter(f"must be at least 1, got {value}", param_hint=name)
    data_cfg = DataConfig(seed=seed)
    if scenes is not None:
        data_cfg = replace(data_cfg, n_scenes=scenes)
    train_cfg = TrainConfig(seed=seed, threads=threads)
    if steps is not None:
        train_cfg = replace(train_cfg, steps=steps)
    if batch_size is not None:
        train_cfg = replace(train_cfg, batch_size=batch_size)
    variants = list(VARIANTS) if model == "all" else [model]
    cache = None if no_cache else (cache_dir or _default_cache())
    records = train_variants(load_world(world), data_cfg, train_cfg, variants, out_dir, cache)
    for variant, rec in records.items():
        log = rec["log"]
        click.echo(f"{variant}: final loss {log['final_loss']:.4f} after {log['steps']} steps "
                   f"({log['seconds']:.0f} s) -> {rec['path']} ({rec['bytes'] / 1e6:.1f} MB)")
