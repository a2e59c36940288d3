"""The training set: disjoint scenes, their captions and hard negatives, pixels rendered once.

Each scene is shown in one condition (Minimal or Contextual, drawn per scene), so a rendering
budget buys as many distinct scenes as possible; it has one set of mentions (see
:mod:`foilbench.train.mentions`), each with its positive text and ``DataConfig.k_negatives``
(K = 3, Auto-Comp §5 / App. A.9) Swap and K Confusion negatives, the Confusion ones stratified
over the error families (:mod:`foilbench.train.hard_negatives`). Texts are stored once in a
table and referenced by index; ``swap`` and ``confusion`` are (n_images, n_mentions, K) arrays,
-1 where a mention has no negative of that kind (the trainer masks those columns).
The negatives come from a generator of their own (per chunk), so the mentions and positives do
not depend on how the negatives are made. The whole set is cached as ``.npz`` (arrays only, loaded without pickle) plus
``.json`` so the three models reuse one rendering.

Edited twins (:mod:`foilbench.train.twins`) follow the ordinary scenes in the arrays: two
adjacent images, a scene and its copy after one single edit, each captioned by the edit at the
three tiers (cycled over the mention slots); ``twin`` holds each image's partner (-1 for an
ordinary scene).

Rendering and captioning run in chunks of ``CHUNK`` scenes, each chunk with its own seeded
generator, so the result is the same whether the chunks run in one process or several
(``workers``): a worker count changes the time, never the data.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from foilbench.errors import FoilbenchError
from foilbench.hashing import sha256_text
from foilbench.jsonio import write_json
from foilbench.models.embedded_preprocess import PREPROCESS_VERSION, image_to_array
from foilbench.train.hard_negatives import K_NEGATIVES, confusion_negatives, swap_negatives
from foilbench.train.mentions import Mention, mention_text, sample_mentions
from foilbench.train.world_source import WorldSource, sample_training_scenes

DATA_VERSION = "v4"  # v4: K swap and K stratified confusion negatives per mention
CHUNK = 256  # scenes per generator (and per unit of parallel work)


@dataclass(frozen=True)
class DataConfig:
    n_scenes: int = 3000
    seed: int = 0
    image_size: int = 64
    render_size: int = 160  # the embedded suite's image size: identical downsampling
    max_objects: int = 6
    contextual: float = 0.5  # probability that a scene is shown in the Contextual condition
    n_twins: int = 0  # edited twin pairs (two images each) beyond the n_scenes scenes
    k_negatives: int = K_NEGATIVES  # Swap and Confusion negatives per mention (each)

    def __post_init__(self) -> None:
        if self.k_negatives < 1:
            raise ValueError(f"k_negatives must be >= 1, got {self.k_negatives}")

    def key(self, world: str) -> str:
        from foilbench.world.layout import geometry

        text = json.dumps([DATA_VERSION, PREPROCESS_VERSION, world, self.n_scenes, self.seed,
                           self.image_size, self.render_size, self.max_objects,
                           self.contextual, self.n_twins, self.k_negatives, geometry()])
        return sha256_text(text)[:16]


@dataclass
class TrainingData:
    pixels: np.ndarray  # (n_scenes, S, S, 3) uint8
    minimal: np.ndarray  # (n_scenes,) bool: the scene is shown in the Minimal condition
    texts: list[str]  # text table
    positive: np.ndarray  # (n_scenes, K) int32 index into texts
    swap: np.ndarray  # (n_scenes, K, k_negatives) int32, -1 = none
    confusion: np.ndarray  # (n_scenes, K, k_negatives) int32, -1 = none
    kinds: list[str]  # mention kinds seen, most frequent first (info only)
    stats: dict
    twin: np.ndarray | None = None  # (n_images,) int32: the edited twin's index, -1 = none

    @property
    def n_scenes(self) -> int:
        return len(self.pixels)

    def twin_index(self) -> np.ndarray:
        """Each image's edited twin (-1 = none), all -1 for a set built without twins."""
        if self.twin is None:
            return np.full(len(self.pixels), -1, np.int32)
        return self.twin


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


def _caption_rows(scene, mentions: list[Mention], rng, describe_scene, k: int):
    """(positive, [swap negatives], [confusion negatives]) per mention."""
    rows = []
    for m in mentions:
        text = mention_text(m, scene, scene.objects, describe_scene)
        rows.append((text, swap_negatives(m, scene, rng, describe_scene, text, k),
                     confusion_negatives(m, scene, rng, describe_scene, text, k)))
    return rows


def _padded(table: _TextTable, texts: list[str], k: int) -> list[int]:
    """Text-table indices of ``texts``, -1 up to ``k`` (a refusal if there are more)."""
    if len(texts) > k:
        raise ValueError(f"{len(texts)} negatives for {k} slots")
    return [table.add(t) for t in texts] + [-1] * (k - len(texts))


def _mean_distinct(neg: np.ndarray) -> float:
    """Mean number of distinct negatives per mention that has any (0 when none has)."""
    flat = neg.reshape(-1, neg.shape[-1])
    counts = [len(set(r[r >= 0].tolist())) for r in flat if (r >= 0).any()]
    return round(float(np.mean(counts)), 3) if counts else 0.0


def _chunk(world: WorldSource, cfg: DataConfig, index: int, scenes: list):
    """Captions (strings) and pixels of one chunk of scenes, from the chunk's own generator."""
    rng = np.random.default_rng(np.random.SeedSequence(entropy=cfg.seed, spawn_key=(1, index)))
    neg_rng = np.random.default_rng(np.random.SeedSequence(entropy=cfg.seed,
                                                           spawn_key=(4, index)))
    pixels = np.zeros((len(scenes), cfg.image_size, cfg.image_size, 3), np.uint8)
    captions, kinds = [], []
    for s, scene in enumerate(scenes):
        mentions = sample_mentions(scene, rng)
        kinds.extend(m.kind for m in mentions)
        captions.append(_caption_rows(scene, mentions, neg_rng, world.describe_scene,
                                      cfg.k_negatives))
        image = world.render(scene, cfg.render_size)
        pixels[s] = image_to_array(image, cfg.image_size, name=f"training scene {s}")
    return pixels, captions, kinds


def _twin_chunk(world: WorldSource, cfg: DataConfig, index: int, bases: list, banned: set,
                k_slots: int):
    """Both images of each edited twin in one chunk, captioned by the edit (-1: no negative)."""
    from collections import Counter

    rng = np.random.default_rng(np.random.SeedSequence(entropy=cfg.seed, spawn_key=(3, index)))
    counts: Counter = Counter()
    pixels, captions, kinds, minimal, dropped = [], [], [], [], 0
    for base in bases:
        made = world.make_twin(base, rng, counts)
        if made is None or world.scene_signature(made[0]) in banned:
            dropped += 1
            continue
        foil, edit_type, tiers = made
        pair = [image_to_array(world.render(s, cfg.render_size), cfg.image_size)
                for s in (base, foil)]
        if np.array_equal(*pair):  # the edit does not show at the training size
            dropped += 1
            continue
        pixels.extend(pair)
        minimal.extend([base.condition == "minimal"] * 2)
        for side in (0, 1):
            captions.append([(tiers[k % len(tiers)][side], [], []) for k in range(k_slots)])
        kinds.append(edit_type)
    shape = (0, cfg.image_size, cfg.image_size, 3)
    return ((np.stack(pixels) if pixels else np.zeros(shape, np.uint8)), captions, kinds,
            dropped, minimal)


def _run_chunks(fn, jobs: list[tuple], sizes: list[int], workers: int, bar) -> list:
    results = []
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            futures = [pool.submit(fn, *job) for job in jobs]
            for future, size in zip(futures, sizes, strict=True):
                results.append(future.result())
                bar.update(size)
    else:
        for job, size in zip(jobs, sizes, strict=True):
            results.append(fn(*job))
            bar.update(size)
    return results


def build_training_data(world: WorldSource, cfg: DataConfig, progress: bool = True,
                        workers: int = 1) -> TrainingData:
    """Sample, caption and render ``cfg.n_scenes`` training scenes and ``cfg.n_twins`` edited
    twins (deterministic in seed, independent of ``workers``)."""
    every, disjoint = sample_training_scenes(world, cfg.n_scenes + cfg.n_twins, cfg.seed,
                                             cfg.max_objects, cfg.contextual)
    scenes, bases = every[:cfg.n_scenes], every[cfg.n_scenes:]
    chunks = [scenes[k:k + CHUNK] for k in range(0, len(scenes), CHUNK)]
    twin_chunks = [bases[k:k + CHUNK] for k in range(0, len(bases), CHUNK)]
    bar = tqdm(total=len(every), desc="rendering training scenes", disable=not progress,
               unit="scene")
    results = _run_chunks(_chunk, [(world, cfg, k, c) for k, c in enumerate(chunks)],
                          [len(c) for c in chunks], workers, bar)
    k_slots = len(results[0][1][0]) if results and results[0][1] else 7
    banned = set(world.benchmark_signatures()) if twin_chunks else set()
    twins = _run_chunks(_twin_chunk, [(world, cfg, k, c, banned, k_slots)
                                      for k, c in enumerate(twin_chunks)],
                        [len(c) for c in twin_chunks], workers, bar)
    bar.close()
    table = _TextTable()
    rows, kinds, twin_types = [], {}, {}
    k = cfg.k_negatives

    def indexed(image_rows):
        return [[table.add(pos)] + _padded(table, swaps, k) + _padded(table, confs, k)
                for pos, swaps, confs in image_rows]

    for _, captions, chunk_kinds in results:
        rows.extend(indexed(scene_rows) for scene_rows in captions)
        for kind in chunk_kinds:
            kinds[kind] = kinds.get(kind, 0) + 1
    for _, captions, types, _, _ in twins:
        rows.extend(indexed(image_rows) for image_rows in captions)
        for t in types:
            twin_types[t] = twin_types.get(t, 0) + 1
    arr = np.asarray(rows, np.int32).reshape(len(rows), -1, 1 + 2 * k)  # (n_images, M, 1+2K)
    positive, swap, conf = arr[..., 0], arr[..., 1:1 + k], arr[..., 1 + k:]
    pixels = np.concatenate([r[0] for r in results] + [t[0] for t in twins])
    n_twin_images = len(pixels) - len(scenes)
    twin = np.full(len(pixels), -1, np.int32)
    firsts = np.arange(len(scenes), len(pixels), 2)
    twin[firsts], twin[firsts + 1] = firsts + 1, firsts
    minimal = np.asarray([s.condition == "minimal" for s in scenes] +
                         [m for t in twins for m in t[4]], dtype=bool)
    stats = {**disjoint, "n_scenes": len(scenes), "n_images": len(pixels),
             "n_twin_pairs": n_twin_images // 2, "twin_edit_types": twin_types,
             "twins_dropped": sum(t[3] for t in twins),
             "minimal_scenes": int(minimal.sum()), "n_texts": len(table.texts),
             "mentions_per_scene": positive.shape[1], "mention_kinds": kinds,
             "k_negatives": k,
             # share of the scenes' mentions with at least one negative of the kind
             "swap_negative_rate": float((swap[:len(scenes), :, 0] >= 0).mean()),
             "confusion_negative_rate": float((conf[:len(scenes), :, 0] >= 0).mean()),
             "distinct_swap_per_mention": _mean_distinct(swap[:len(scenes)]),
             "distinct_confusion_per_mention": _mean_distinct(conf[:len(scenes)]),
             "objects_per_scene": np.bincount([len(s.objects) for s in scenes]).tolist(),
             "scenes_with_agents": sum(any(o.category == "robot" for o in s.objects)
                                       for s in scenes)}
    order = sorted(kinds, key=lambda k: (-kinds[k], k))
    return TrainingData(pixels, minimal, table.texts, positive, swap, conf, order, stats, twin)


def save_training_data(data: TrainingData, path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path.with_suffix(".npz"), pixels=data.pixels, minimal=data.minimal,
             positive=data.positive, swap=data.swap, confusion=data.confusion,
             twin=data.twin_index())
    write_json(path.with_suffix(".json"),
               {"texts": data.texts, "kinds": data.kinds, "stats": data.stats}, indent=None)


def load_training_data(path: Path) -> TrainingData:
    path = Path(path)
    with np.load(path.with_suffix(".npz"), allow_pickle=False) as arrays:
        parts = {k: arrays[k] for k in ("pixels", "minimal", "positive", "swap", "confusion",
                                        "twin")}
    for name in ("swap", "confusion"):
        if parts[name].ndim != 3:
            raise FoilbenchError(f"{path.with_suffix('.npz')}: {name!r} has shape "
                                 f"{parts[name].shape}, not (images, mentions, K): a training "
                                 "set from an older foilbench; delete it to rebuild")
    meta = json.loads(path.with_suffix(".json").read_text())
    return TrainingData(texts=meta["texts"], kinds=meta["kinds"], stats=meta["stats"], **parts)


def cached_data_path(world: WorldSource, cfg: DataConfig, cache_dir: Path | None) -> (
        Path | None):
    """Where the rendered set for (world, cfg) is cached (no suffix), or None without a cache."""
    if cache_dir is None:
        return None
    return Path(cache_dir) / f"trainset-{world.name}-{cfg.key(world.name)}"


def cached_training_data(world: WorldSource, cfg: DataConfig, cache_dir: Path | None,
                         progress: bool = True, workers: int = 1) -> TrainingData:
    """Load the rendered set for (world, cfg) from ``cache_dir``, building it on a miss."""
    path = cached_data_path(world, cfg, cache_dir)
    if path is None:
        return build_training_data(world, cfg, progress, workers)
    if path.with_suffix(".npz").exists() and path.with_suffix(".json").exists():
        return load_training_data(path)
    data = build_training_data(world, cfg, progress, workers)
    save_training_data(data, path)
    return data
