"""From seed to shipped files: data (cached), vocabulary, one training run per variant."""

from __future__ import annotations

import platform
from dataclasses import replace
from pathlib import Path

import torch

from foilbench.models.embedded import model_name, save_model
from foilbench.models.embedded_arch import ArchConfig
from foilbench.models.word_tokenizer import WordTokenizer
from foilbench.train.dataset import DataConfig, TrainingData, cached_training_data
from foilbench.train.loop import TrainConfig, train_model
from foilbench.train.world_source import WorldSource
from foilbench.world import vocab

MAX_LEN = 48


def world_words() -> list[str]:
    """Every word of the world's closed vocabulary, so none of them is ever [UNK]."""
    from foilbench.world.phrases import LOCATION_WORDS, MATERIAL_WORDS, NUMBER_WORDS, plural

    words = [*vocab.CATEGORIES, *map(plural, vocab.CATEGORIES), *vocab.COLORS,
             *vocab.MATERIALS, *MATERIAL_WORDS.values(), *vocab.PATTERNS, *vocab.TRANSPARENCIES,
             *vocab.SIZES, *vocab.RELATIONS, *vocab.SIZE_RELATIONS, *LOCATION_WORDS.values(),
             *NUMBER_WORDS, "a", "an", "the", "and", "no", "of", "to", "with"]
    for states in vocab.STATES.values():
        words.extend(states)
    return words


def build_tokenizer(data: TrainingData) -> WordTokenizer:
    return WordTokenizer.build(data.texts, MAX_LEN, extra_words=world_words())


def train_variants(world: WorldSource, data_cfg: DataConfig, train_cfg: TrainConfig,
                   variants: list[str], out_dir: Path, cache_dir: Path | None,
                   arch: ArchConfig | None = None, progress: bool = True) -> dict[str, dict]:
    """Train each variant on one shared data set; returns each variant's record."""
    data = cached_training_data(world, data_cfg, cache_dir, progress)
    tokenizer = build_tokenizer(data)
    arch = replace(arch or ArchConfig(), vocab_size=tokenizer.vocab_size, max_len=MAX_LEN,
                   image_size=data_cfg.image_size)
    records = {}
    for variant in variants:
        cfg = replace(train_cfg, recipe=variant)
        net, log = train_model(data, tokenizer, arch, cfg, progress)
        record = {"recipe": variant, "world": world.name, "data": data_cfg.__dict__,
                  "data_stats": data.stats, "train": cfg.as_dict(), "log": log,
                  "torch": torch.__version__, "python": platform.python_version()}
        path = save_model(net, tokenizer, record, out_dir, model_name(variant))
        records[variant] = {**record, "path": str(path), "bytes": path.stat().st_size}
    return records
