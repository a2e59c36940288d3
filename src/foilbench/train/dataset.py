"""The training set: disjoint scenes, their captions and hard negatives, pixels rendered once.

Each scene is rendered in both conditions (minimal, contextual) and has one set of mentions
(see :mod:`foilbench.train.mentions`), spoken per condition (whole-scene and medium-tier
captions name the backdrop); every mention carries its positive text and, where one exists, a
swap and a confusion negative. Texts are stored once in a table and
referenced by index (-1 = no negative). The whole set is cached as ``.npz`` (arrays only,
loaded without pickle) plus ``.json`` so the three models reuse one rendering.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from foilbench.hashing import sha256_text
from foilbench.jsonio import write_json
from foilbench.models.embedded_preprocess import PREPROCESS_VERSION, image_to_array
from foilbench.train.hard_negatives import confusion_negative, swap_negative
from foilbench.train.mentions import Mention, mention_text, sample_mentions
from foilbench.train.world_source import WorldSource, sample_training_scenes
from foilbench.world.vocab import CONDITIONS

DATA_VERSION = "v1"


@dataclass(frozen=True)
class DataConfig:
    n_scenes: int = 3000
    seed: int = 0
    image_size: int = 64
    render_size: int = 160  # the embedded suite's image size: identical downsampling
    max_objects: int = 6

    def key(self, world: str) -> str:
        text = json.dumps([DATA_VERSION, PREPROCESS_VERSION, world, self.n_scenes, self.seed,
                           self.image_size, self.render_size, self.max_objects])
        return sha256_text(text)[:16]


@dataclass
class TrainingData:
    pixels: np.ndarray  # (n_scenes, n_conditions, S, S, 3) uint8
    texts: list[str]  # text table
    positive: np.ndarray  # (n_scenes, n_conditions, K) int32 index into texts
    swap: np.ndarray  # (n_scenes, n_conditions, K) int32, -1 = none
    confusion: np.ndarray  # (n_scenes, n_conditions, K) int32, -1 = none
    kinds: list[str]  # mention kind of each of the K columns of the first scene (info only)
    stats: dict

    @property
    def n_scenes(self) -> int:
        return len(self.pixels)


class _TextTable:
    def __init__(self) -> None:
        self.texts: list[str] = []
        self.index: dict[str, int] = {}

    def add(self, text: str | None) -> int:
        if text is None:
            return -1
        if text not in self.index:
            self.index[text] = len(self.texts)
            self.texts.append(text)
        return self.index[text]


def _caption_rows(scene, mentions: list[Mention], rng, describe_scene, table: _TextTable):
    pos, swap, conf = [], [], []
    for m in mentions:
        text = mention_text(m, scene, scene.objects, describe_scene)
        pos.append(table.add(text))
        swap.append(table.add(swap_negative(m, scene, rng, describe_scene, text)))
        conf.append(table.add(confusion_negative(m, scene, rng, describe_scene, text)))
    return pos, swap, conf


def build_training_data(world: WorldSource, cfg: DataConfig, progress: bool = True) -> (
        TrainingData):
    """Sample, caption and render ``cfg.n_scenes`` training scenes (deterministic in seed)."""
    scenes, disjoint = sample_training_scenes(world, cfg.n_scenes, cfg.seed, cfg.max_objects)
    rng = np.random.default_rng(np.random.SeedSequence(entropy=cfg.seed, spawn_key=(1,)))
    table = _TextTable()
    pixels = np.zeros((len(scenes), len(CONDITIONS), cfg.image_size, cfg.image_size, 3),
                      np.uint8)
    rows = []
    for s, scene in enumerate(tqdm(scenes, desc="rendering training scenes", disable=not progress,
                                   unit="scene")):
        mentions = sample_mentions(scene, rng)
        per_condition = []
        for c, condition in enumerate(CONDITIONS):
            shown = replace(scene, condition=condition)
            per_condition.append(_caption_rows(shown, mentions, rng, world.describe_scene, table))
            image = world.render(shown, cfg.render_size)
            pixels[s, c] = image_to_array(image, cfg.image_size, name=f"training scene {s}")
        rows.append(per_condition)
    positive, swap, conf = (np.asarray([[rc[k] for rc in r] for r in rows], np.int32)
                            for k in range(3))
    kinds = [m.kind for m in sample_mentions(scenes[0], np.random.default_rng(0))]
    stats = {**disjoint, "n_scenes": len(scenes), "n_images": len(scenes) * len(CONDITIONS),
             "n_texts": len(table.texts), "mentions_per_scene": positive.shape[2],
             "swap_negative_rate": float((swap >= 0).mean()),
             "confusion_negative_rate": float((conf >= 0).mean()),
             "objects_per_scene": np.bincount([len(s.objects) for s in scenes]).tolist()}
    return TrainingData(pixels, table.texts, positive, swap, conf, kinds, stats)


def save_training_data(data: TrainingData, path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path.with_suffix(".npz"), pixels=data.pixels, positive=data.positive,
             swap=data.swap, confusion=data.confusion)
    write_json(path.with_suffix(".json"),
               {"texts": data.texts, "kinds": data.kinds, "stats": data.stats}, indent=None)


def load_training_data(path: Path) -> TrainingData:
    path = Path(path)
    with np.load(path.with_suffix(".npz"), allow_pickle=False) as arrays:
        parts = {k: arrays[k] for k in ("pixels", "positive", "swap", "confusion")}
    meta = json.loads(path.with_suffix(".json").read_text())
    return TrainingData(texts=meta["texts"], kinds=meta["kinds"], stats=meta["stats"], **parts)


def cached_training_data(world: WorldSource, cfg: DataConfig, cache_dir: Path | None,
                         progress: bool = True) -> TrainingData:
    """Load the rendered set for (world, cfg) from ``cache_dir``, building it on a miss."""
    if cache_dir is None:
        return build_training_data(world, cfg, progress)
    path = Path(cache_dir) / f"trainset-{world.name}-{cfg.key(world.name)}"
    if path.with_suffix(".npz").exists() and path.with_suffix(".json").exists():
        return load_training_data(path)
    data = build_training_data(world, cfg, progress)
    save_training_data(data, path)
    return data
