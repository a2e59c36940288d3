"""From seed to shipped files: data (cached), vocabulary, one training run per variant."""

from __future__ import annotations

import json
import platform
from dataclasses import replace
from pathlib import Path

import torch

from foilbench.hashing import sha256_text
from foilbench.jsonio import write_json
from foilbench.models.embedded import model_name, save_model
from foilbench.models.embedded_arch import ArchConfig, DualEncoderNet
from foilbench.models.word_tokenizer import WordTokenizer
from foilbench.train.dataset import (
    DataConfig,
    TrainingData,
    cached_data_path,
    cached_training_data,
    load_training_data,
)
from foilbench.train.loop import TrainConfig, train_model
from foilbench.train.world_source import WorldSource
from foilbench.world import vocab

# Token length of the embedded text tower ([CLS] + words; position embeddings follow it). The
# longest embedded-suite caption (seed 0, default suite) is a COMPASS L2-OR caption of 56
# words = 57 tokens; a caption of COMPASS's largest structure (12 primitives, e.g. 3 objects
# and 9 relations of at most 8 words each) stays under 80. Batches are trimmed to their
# longest text, so the margin costs no compute.
MAX_LEN = 80

# The shipped recipe: `foilbench train` with no options reproduces the shipped weights.
# One torch thread: on the shared 2-core machine two OpenMP threads ran a step 2.5x slower in
# wall time than one (a descheduled thread stalls the other at every barrier); the second core
# renders the training set and runs fine-tunes side by side instead (``workers``).
SHIPPED_ARCH = ArchConfig(image_size=128, stem=((24, 2), (48, 2), (96, 2), (128, 2)),
                          image_layers=2)
SHIPPED_DATA = DataConfig(n_scenes=12000, n_twins=8000, image_size=128, max_objects=6,
                          contextual=0.5)
# 6,000 + 1,000 steps (0.3.0): at the world's new scale 2,400 + 400 steps gave pairs Group 6.2
# and autocomp-n1 R@1 74.2 (plain), 6,000 + 1,000 gave 7.9 and 79.7 (model card, "Budget").
SHIPPED_TRAIN = TrainConfig(steps=6000, batch_size=64, lr=1e-3, warmup=150, minimal_first=0.25,
                            threads=1, finetune_steps=1000, finetune_lr=3e-4,
                            finetune_warmup=50)


# Words the caption templates write inline rather than from a vocabulary table: COMPASS's
# decomposed captions "There is a cube in the image." / "The cube is left of the sphere."
# (construct/compass/realise.py) and the training "next to" mention (train/mentions.py).
TEMPLATE_WORDS: tuple[str, ...] = ("there", "is", "in", "the", "image", "next", "to")


def world_words() -> list[str]:
    """Every word the world's captions and the embedded suite's captions can use, so none of
    them is ever [UNK]: the closed vocabulary, the backdrop phrases, Auto-Comp's caption
    frames, COMPASS's predicates and :data:`TEMPLATE_WORDS` (multi-word entries are split by
    the tokenizer). ``tests/test_embedded_vocabulary.py`` checks a built suite against it."""
    from foilbench.construct.autocomp.captions import CONTEXT_FRAMES, MINIMAL_FRAME, SLOT
    from foilbench.construct.compass.world_graph import RELATION_GROUPS
    from foilbench.world.captions import BACKGROUND_WORDS
    from foilbench.world.phrases import (
        ACTION_VERB,
        ACTION_WORDS,
        LOCATION_WORDS,
        MATERIAL_WORDS,
        NUMBER_WORDS,
        RELATION_WORDS,
        plural,
    )

    words = [*vocab.CATEGORIES, *map(plural, vocab.CATEGORIES), *vocab.COLORS,
             *vocab.MATERIALS, *MATERIAL_WORDS.values(), *vocab.PATTERNS, *vocab.TRANSPARENCIES,
             *vocab.SIZES, *vocab.RELATIONS, *vocab.SIZE_RELATIONS, *LOCATION_WORDS.values(),
             *ACTION_WORDS.values(), ACTION_VERB, *RELATION_WORDS.values(),
             *NUMBER_WORDS, "a", "an", "the", "and", "no", "of", "to", "with",
             *BACKGROUND_WORDS.values(), *RELATION_GROUPS,
             *(frame.replace(SLOT, " ") for frame in (MINIMAL_FRAME, *CONTEXT_FRAMES)),
             *TEMPLATE_WORDS]
    for states in vocab.STATES.values():
        words.extend(states)
    return words


def build_tokenizer(data: TrainingData) -> WordTokenizer:
    return WordTokenizer.build(data.texts, MAX_LEN, extra_words=world_words())


def train_variants(world: WorldSource, data_cfg: DataConfig, train_cfg: TrainConfig,
                   variants: list[str], out_dir: Path, cache_dir: Path | None,
                   arch: ArchConfig | None = None, progress: bool = True,
                   workers: int = 1) -> dict[str, dict]:
    """Train each variant on one shared data set; returns each variant's record.

    With ``train_cfg.finetune_steps`` > 0, one plain model is pretrained for ``steps`` and
    each variant is a fine-tune of it (:meth:`TrainConfig.finetune`); otherwise each variant
    is trained from scratch with its own recipe."""
    data = cached_training_data(world, data_cfg, cache_dir, progress, workers)
    tokenizer = build_tokenizer(data)
    arch = replace(arch or SHIPPED_ARCH, vocab_size=tokenizer.vocab_size, max_len=MAX_LEN,
                   image_size=data_cfg.image_size)
    base, base_log, tuned = None, None, {}
    data_path = cached_data_path(world, data_cfg, cache_dir)
    if train_cfg.finetune_steps:
        base, base_log = pretrained_stage(data, tokenizer, arch, train_cfg, progress, data_path)
        if workers > 1 and len(variants) > 1 and data_path is not None:
            tuned = _parallel_finetunes(data_path, tokenizer, arch, train_cfg, variants, base,
                                        Path(out_dir), workers)
    records = {}
    for variant in variants:
        cfg = replace(train_cfg, recipe=variant)
        if base is None:
            net, log = train_model(data, tokenizer, arch, cfg, progress)
        else:
            if variant in tuned:
                net, log = tuned[variant]
            else:
                net, log = train_model(data, tokenizer, arch, train_cfg.finetune(variant),
                                       progress, init=base)
            log = {"pretrain": base_log, "finetune": log,
                   "seconds": round(base_log["seconds"] + log["seconds"], 1),
                   "final_loss": log["final_loss"], "steps": base_log["steps"] + log["steps"]}
        record = {"recipe": variant, "world": world.name, "data": data_cfg.__dict__,
                  "data_stats": data.stats, "train": cfg.as_dict(), "log": log,
                  "torch": torch.__version__, "python": platform.python_version()}
        path = save_model(net, tokenizer, record, out_dir, model_name(variant))
        records[variant] = {**record, "path": str(path), "bytes": path.stat().st_size}
    return records


def pretrained_stage(data: TrainingData, tokenizer: WordTokenizer, arch: ArchConfig,
                     train_cfg: TrainConfig, progress: bool,
                     data_path: Path | None) -> tuple[dict, dict]:
    """The shared plain pretraining (weights, log), kept beside the cached training set.

    Pretraining is the long stage (about half an hour on one core), so its result is saved
    (safetensors + JSON log, written to a temporary name and renamed) under a key of the data,
    the architecture, the plain recipe and the torch version; a run interrupted during the
    fine-tunes resumes from it, and a rerun reuses it. Without a cache nothing is saved."""
    from safetensors.torch import load_file, save_file

    cfg = replace(train_cfg, recipe="plain")
    path = None
    if data_path is not None:
        # keyed by what shapes the pretraining only: a new fine-tune recipe reuses it
        shaping = replace(cfg, finetune_steps=0, finetune_lr=TrainConfig.finetune_lr,
                          finetune_warmup=TrainConfig.finetune_warmup)
        key = sha256_text(json.dumps([data_path.name, arch.as_dict(), shaping.as_dict(),
                                      torch.__version__], sort_keys=True))[:16]
        path = data_path.with_name(f"pretrained-{key}.safetensors")
        if path.exists() and path.with_suffix(".json").exists():
            return load_file(str(path)), json.loads(path.with_suffix(".json").read_text())
    net, log = train_model(data, tokenizer, arch, cfg, progress)
    base = {k: v.clone() for k, v in net.state_dict().items()}
    if path is not None:
        partial = path.with_name(path.name + ".partial")
        save_file({k: v.contiguous() for k, v in base.items()}, str(partial))
        write_json(path.with_suffix(".json"), log)
        partial.replace(path)  # the weights last: both files present means both complete
    return base, log


def _finetune_job(data_path: str, tokenizer_config: dict, arch: dict, cfg: dict,
                  base_path: str, out_path: str) -> dict:
    """One fine-tune in a worker process: reads the cached data and the pretrained weights
    from disk (safetensors), writes the tuned weights to ``out_path``, returns the log."""
    from safetensors.torch import load_file, save_file

    data = load_training_data(Path(data_path))
    tokenizer = WordTokenizer.from_config(tokenizer_config)
    net, log = train_model(data, tokenizer, ArchConfig(**arch), TrainConfig(**cfg), False,
                           init=load_file(base_path))
    save_file({k: v.contiguous() for k, v in net.state_dict().items()}, out_path)
    return log


def _parallel_finetunes(data_path: Path, tokenizer: WordTokenizer, arch: ArchConfig,
                        train_cfg: TrainConfig, variants: list[str], base: dict,
                        out_dir: Path, workers: int) -> dict:
    """Fine-tune the variants side by side, one single-threaded process each (each process
    computes exactly what it would in the parent: same data, weights, seed, thread count)."""
    import multiprocessing
    import tempfile
    from concurrent.futures import ProcessPoolExecutor

    from safetensors.torch import load_file, save_file

    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".finetune-") as tmp:
        base_path = str(Path(tmp) / "pretrained.safetensors")
        save_file({k: v.contiguous() for k, v in base.items()}, base_path)
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(workers, len(variants)), mp_context=context) as pool:
            jobs = {v: pool.submit(_finetune_job, str(data_path), tokenizer.to_config(),
                                   arch.as_dict(), train_cfg.finetune(v).as_dict(), base_path,
                                   str(Path(tmp) / f"{v}.safetensors")) for v in variants}
            logs = {v: job.result() for v, job in jobs.items()}
        out = {}
        for v in variants:
            net = DualEncoderNet(arch)
            net.load_state_dict(load_file(str(Path(tmp) / f"{v}.safetensors")))
            out[v] = (net.eval(), logs[v])
    return out
