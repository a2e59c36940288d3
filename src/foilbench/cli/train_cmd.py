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
              help="Optimiser steps of the (shared, plain) pretraining (default: the shipped "
              "recipe's).")
@click.option("--finetune-steps", type=int, default=None,
              help="Steps of each model's fine-tune from the pretrained plain model; 0 trains "
              "each recipe from scratch instead (default: the shipped recipe's).")
@click.option("--threads", type=int, default=None,
              help="torch CPU threads per training process (default: the shipped recipe's, "
              "1). Same seed and thread count give identical weights.")
@click.option("--workers", type=int, default=2, show_default=True,
              help="Processes that render the training set and run the fine-tunes side by "
              "side (changes neither the data nor the weights).")
@click.option("--scenes", type=int, default=None,
              help="Training scenes to render (default: the shipped recipe's).")
@click.option("--batch-size", type=int, default=None, help="Images per batch.")
@click.option("--cache", "cache_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Where the rendered training set and the finished "
              "pretraining are kept, so a rerun or an interrupted run resumes from them "
              "[default: $FOILBENCH_HOME/train or ~/.cache/foilbench/train].")
@click.option("--no-cache", is_flag=True, help="Render the training set in memory only.")
@click.option("--world", type=click.Choice(["procedural", "standin"]), default="procedural",
              show_default=True, help="Scene source; 'standin' is a flat-shapes world for "
              "quick smoke tests of the trainer only.")
@click.option("--card", is_flag=True, help="Do not train: score the models in --weights on "
              "the embedded suite and rewrite the score tables of MODEL_CARD.md there.")
@click.option("--weights", "weights_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="With --card: the models' folder [default: the shipped "
              "weights].")
@click.option("--suite", "suite_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="With --card: a built suite folder [default: the cached "
              "embedded suite, built if absent].")
def train(model: str, seed: int, out_dir: Path, steps: int | None, finetune_steps: int | None,
          threads: int | None, workers: int, scenes: int | None, batch_size: int | None,
          cache_dir: Path | None, no_cache: bool, world: str, card: bool,
          weights_dir: Path | None, suite_dir: Path | None) -> None:
    """Train the embedded dual encoders on the procedural world.

    \b
    Renders training scenes from a seed stream of their own (and drops any scene whose
    signature is a benchmark scene's), pretrains one small dual encoder with the plain loss,
    then fine-tunes it once per recipe (as NegCLIP fine-tunes CLIP), same batches for all:
      plain     symmetric InfoNCE (CLIP loss)
      swapneg   + K=3 swap negatives per caption (Auto-Comp's Swap-only arm)
      confneg   + K=3 Auto-Comp confusion negatives, stratified over the error
                families, no swap (Auto-Comp App. A.9's matched design)
    With the defaults, the same --seed and --threads reproduce the shipped weights:
      foilbench train --out ./weights            all three models
      foilbench train --model plain --steps 50   a quick run
      foilbench train --card                     rewrite the shipped model card's scores
    """
    from dataclasses import replace

    from foilbench.train.pipeline import SHIPPED_DATA, SHIPPED_TRAIN, train_variants
    from foilbench.train.world_source import load_world

    for name, value in (("--steps", steps), ("--threads", threads), ("--scenes", scenes),
                        ("--batch-size", batch_size), ("--workers", workers)):
        if value is not None and value < 1:
            raise click.BadParameter(f"must be at least 1, got {value}", param_hint=name)
    if finetune_steps is not None and finetune_steps < 0:
        raise click.BadParameter(f"must be at least 0, got {finetune_steps}",
                                 param_hint="--finetune-steps")
    variants = list(VARIANTS) if model == "all" else [model]
    if card:
        from foilbench.models.embedded import weights_dir as shipped
        from foilbench.train.card import make_card

        make_card(weights_dir or shipped(), suite_dir, variants=variants, progress=True)
        click.echo(f"wrote {(weights_dir or shipped()) / 'MODEL_CARD.md'}")
        return
    data_cfg = replace(SHIPPED_DATA, seed=seed)
    if scenes is not None:
        data_cfg = replace(data_cfg, n_scenes=scenes)
    train_cfg = replace(SHIPPED_TRAIN, seed=seed)
    for field, value in (("steps", steps), ("finetune_steps", finetune_steps),
                         ("threads", threads), ("batch_size", batch_size)):
        if value is not None:
            train_cfg = replace(train_cfg, **{field: value})
    cache = None if no_cache else (cache_dir or _default_cache())
    records = train_variants(load_world(world), data_cfg, train_cfg, variants, out_dir, cache,
                             workers=workers)
    for variant, rec in records.items():
        log = rec["log"]
        click.echo(f"{variant}: final loss {log['final_loss']:.4f} after {log['steps']} steps "
                   f"({log['seconds']:.0f} s) -> {rec['path']} ({rec['bytes'] / 1e6:.1f} MB)")
