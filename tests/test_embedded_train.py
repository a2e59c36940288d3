"""`foilbench train` machinery: determinism, disjointness from the benchmark, the CLI."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from foilbench.models.embedded import load_variant
from foilbench.models.embedded_arch import ArchConfig
from foilbench.train.dataset import DataConfig, cached_training_data
from foilbench.train.loop import TrainConfig
from foilbench.train.pipeline import train_variants
from foilbench.train.world_source import load_world, sample_training_scenes

TINY_ARCH = ArchConfig(cnn_width=8, token_dim=32, heads=2, text_layers=1, embed_dim=16)
TINY_DATA = DataConfig(n_scenes=12, image_size=32, render_size=32, n_twins=4)
TINY_TRAIN = TrainConfig(steps=3, batch_size=8, warmup=1, threads=1)
TINY_FINETUNE = replace(TINY_TRAIN, finetune_steps=2, finetune_warmup=1)


def _train(out: Path, seed: int = 0, recipe: str = "plain") -> bytes:
    world = load_world("standin")
    train_variants(world, replace(TINY_DATA, seed=seed), replace(TINY_TRAIN, seed=seed),
                   [recipe], out, None, arch=TINY_ARCH, progress=False)
    return (out / f"foilbench-{recipe}.safetensors").read_bytes()


def test_same_seed_gives_identical_weights_and_another_seed_does_not(tmp_path):
    first = _train(tmp_path / "a")
    again = _train(tmp_path / "b")
    other = _train(tmp_path / "c", seed=1)
    assert first == again
    assert first != other


def _finetuned(out: Path, workers: int = 1, cache: Path | None = None) -> dict[str, bytes]:
    world = load_world("standin")
    train_variants(world, TINY_DATA, TINY_FINETUNE, ["plain", "swapneg", "confneg"], out, cache,
                   arch=TINY_ARCH, progress=False, workers=workers)
    return {v: (out / f"foilbench-{v}.safetensors").read_bytes()
            for v in ("plain", "swapneg", "confneg")}


def test_fine_tuned_variants_are_reproducible_and_differ_only_by_their_negatives(tmp_path):
    first = _finetuned(tmp_path / "a")
    # rendering and fine-tuning in worker processes (from the cached set): the same weights
    again = _finetuned(tmp_path / "b", workers=2, cache=tmp_path / "cache")
    assert first == again
    assert len(set(first.values())) == 3
    record = load_variant("swapneg", device="cpu", directory=tmp_path / "a").config
    assert record["log"]["pretrain"]["steps"] == 3 and record["log"]["finetune"]["steps"] == 2
    assert record["train"]["recipe"] == "swapneg"


def test_an_interrupted_run_resumes_from_the_saved_pretraining(tmp_path, monkeypatch):
    import foilbench.train.pipeline as pipeline

    first = _finetuned(tmp_path / "a", cache=tmp_path / "cache")
    saved = sorted(p.name for p in (tmp_path / "cache").glob("pretrained-*"))
    assert [n.rsplit(".", 1)[1] for n in saved] == ["json", "safetensors"]
    steps = []
    real = pipeline.train_model
    monkeypatch.setattr(pipeline, "train_model",
                        lambda data, tok, arch, cfg, *a, **k: steps.append(cfg.steps)
                        or real(data, tok, arch, cfg, *a, **k))
    again = _finetuned(tmp_path / "b", cache=tmp_path / "cache")
    assert steps == [2, 2, 2]  # the three fine-tunes only: the 3-step pretraining was reused
    assert again == first
    steps.clear()  # another fine-tune recipe reuses it too; another pretraining does not
    train_variants(load_world("standin"), TINY_DATA, replace(TINY_FINETUNE, finetune_steps=1),
                   ["plain"], tmp_path / "c", tmp_path / "cache", arch=TINY_ARCH,
                   progress=False)
    train_variants(load_world("standin"), TINY_DATA, replace(TINY_FINETUNE, steps=4),
                   ["plain"], tmp_path / "d", tmp_path / "cache", arch=TINY_ARCH,
                   progress=False)
    assert steps == [1, 4, 2]
    record = load_variant("plain", device="cpu", directory=tmp_path / "b").config
    assert record["log"]["pretrain"]["steps"] == 3


def test_hard_negative_recipes_train_and_load(tmp_path):
    plain = _train(tmp_path, recipe="plain")
    conf = _train(tmp_path, recipe="confneg")
    assert plain != conf  # the extra negative columns change the gradient
    model = load_variant("confneg", device="cpu", directory=tmp_path)
    emb = model.embed_texts(["a red cube"])
    assert np.isfinite(emb).all() and model.config["recipe"] == "confneg"


def test_cache_round_trip_gives_the_same_data(tmp_path):
    world = load_world("standin")
    built = cached_training_data(world, TINY_DATA, tmp_path, progress=False)
    loaded = cached_training_data(world, TINY_DATA, tmp_path, progress=False)
    assert len(list(tmp_path.iterdir())) == 2  # one .npz and one .json
    np.testing.assert_array_equal(built.pixels, loaded.pixels)
    np.testing.assert_array_equal(built.confusion, loaded.confusion)
    assert built.texts == loaded.texts and built.pixels.shape == (12 + 2 * 4, 32, 32, 3)
    np.testing.assert_array_equal(built.minimal, loaded.minimal)
    np.testing.assert_array_equal(built.twin, loaded.twin)
    # twins follow the scenes in adjacent pairs, each the other's partner, captioned apart
    assert (built.twin[:12] == -1).all()
    assert list(built.twin[12:]) == [13, 12, 15, 14, 17, 16, 19, 18]
    first, second = (built.texts[built.positive[i, 0]] for i in (12, 13))
    assert first != second and first.split()[-1] == second.split()[-1]
    assert built.minimal[12] == built.minimal[13]


def test_procedural_twins_are_single_edits_captioned_at_three_tiers():
    from collections import Counter

    from foilbench.train.twins import make_twin
    from foilbench.world.cast import sample_training_scene

    rng = np.random.default_rng(4)
    counts: Counter = Counter()
    for _ in range(12):
        scene = sample_training_scene(rng, 4, "minimal")
        foil, edit_type, tiers = make_twin(scene, rng, counts)
        assert foil != scene and len(tiers) == 3
        assert all(base != foil_text for base, foil_text in tiers)
    assert len(counts) >= 8  # least-used types first: the twelve edits spread over the types
    assert not any(name.startswith("swap_") for name in counts)  # re-binding is left to negatives


def test_a_scene_whose_signature_is_a_benchmark_scene_is_dropped():
    world = load_world("standin")
    clean, stats = sample_training_scenes(world, 5, seed=3)
    assert stats["benchmark_collisions_dropped"] == 0
    banned = {world.scene_signature(clean[0]), world.scene_signature(clean[2])}
    rigged = replace(world, benchmark_signatures=lambda: banned)
    scenes, stats = sample_training_scenes(rigged, 5, seed=3)
    assert stats["benchmark_collisions_dropped"] == 2
    assert not {world.scene_signature(s) for s in scenes} & banned
    assert world.scene_signature(scenes[0]) == world.scene_signature(clean[1])


@pytest.mark.slow
def test_real_training_scenes_are_disjoint_from_the_benchmark():
    from foilbench.construct.composet.pair_plan import benchmark_scene_signatures
    from foilbench.world.sample import scene_signature

    world = load_world("procedural")
    scenes, stats = sample_training_scenes(world, 200, seed=0)
    assert stats["n_benchmark_signatures"] > 0
    assert not {scene_signature(s) for s in scenes} & benchmark_scene_signatures()


def test_cli_trains_a_tiny_standin_model(tmp_path, monkeypatch):
    import foilbench.train.pipeline as pipeline
    from foilbench.cli.main import cli

    # the shipped recipe with 4 twin pairs, not 8,000 (--scenes sets only the scenes): the
    # options' wiring is what is tested here; the twins' own tests use TINY_DATA's 4 too
    monkeypatch.setattr(pipeline, "SHIPPED_DATA", replace(pipeline.SHIPPED_DATA, n_twins=4))
    result = CliRunner().invoke(cli, ["train", "--model", "plain", "--world", "standin",
                                      "--steps", "2", "--finetune-steps", "1", "--scenes",
                                      "10", "--batch-size", "4", "--threads", "1",
                                      "--workers", "1", "--no-cache", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "plain: final loss" in result.output
    assert (tmp_path / "foilbench-plain.safetensors").exists()
    bad = CliRunner().invoke(cli, ["train", "--steps", "0", "--out", str(tmp_path)])
    assert bad.exit_code != 0 and "--steps" in bad.output
