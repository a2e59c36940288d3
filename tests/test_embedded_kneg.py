"""K = 3 Swap and K = 3 stratified Confusion negatives per mention (Auto-Comp §5 / App. A.9),
the recipes' negative columns, and the training set's determinism."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from foilbench.train.dataset import DataConfig, build_training_data, save_training_data
from foilbench.train.hard_negatives import (
    FAMILIES,
    confusion_family,
    confusion_negatives,
    confusion_pools,
    stratified,
    swap_negatives,
)
from foilbench.train.loop import RECIPES, negative_columns
from foilbench.train.mentions import Mention, mention_text
from foilbench.train.world_source import load_world
from foilbench.world.scene import Obj, Scene

SCENE = Scene((Obj("cube", "red", x=0.2, y=0.5), Obj("sphere", "blue", x=0.7, y=0.5)))
CONJ = Mention("conj", (0, 1), (("color",), ("color",)))
POSITIVE = "a red cube and a blue sphere"

# All 2^2 x 2^2 - 1 arrangements of {cube, sphere} x {red, blue} over the two slots, by hand,
# less "a blue sphere and a red cube" (true of the scene: the same two objects, other order).
HAND = {
    "swap": {"a blue cube and a red sphere", "a red sphere and a blue cube"},
    "shared_objects": {"a red cube and a red sphere", "a blue cube and a blue sphere",
                       "a red sphere and a red cube", "a blue sphere and a blue cube"},
    "shared_attributes": {"a red cube and a blue cube", "a blue cube and a red cube",
                          "a red sphere and a blue sphere", "a blue sphere and a red sphere"},
    "other": {"a red cube and a red cube", "a blue cube and a blue cube",
              "a red sphere and a red sphere", "a blue sphere and a blue sphere"},
}


def _no_scene_caption(scene):
    raise AssertionError("describe_scene is not used by a conj mention")


def test_families_match_finetune_and_the_taxonomy():
    from foilbench.finetune.data import FAMILIES as FINETUNE_FAMILIES

    assert FAMILIES == FINETUNE_FAMILIES


def test_every_arrangement_is_classified_as_by_hand():
    for family, texts in HAND.items():
        for text in texts:
            words = text.split()  # "a COLOR CAT and a COLOR CAT"
            new = (Obj(words[2], words[1], x=0.2, y=0.5), Obj(words[6], words[5], x=0.7, y=0.5))
            assert confusion_family(CONJ, SCENE.objects, new) == family, text
            assert mention_text(CONJ, SCENE, new, _no_scene_caption) == text


def test_confusion_pools_find_exactly_the_hand_enumerated_false_negatives():
    # "the fourth family is degenerate at N=2" (App. A.9): a two-object mention leaves it out
    assert mention_text(CONJ, SCENE, SCENE.objects, _no_scene_caption) == POSITIVE
    union = {f: set() for f in FAMILIES}
    for seed in range(60):
        pools = confusion_pools(CONJ, SCENE, np.random.default_rng(seed), _no_scene_caption,
                                POSITIVE)
        for family, texts in pools.items():
            assert len(texts) == len(set(texts))
            union[family] |= set(texts)
    assert union == {**HAND, "other": set()}


def test_confusion_draws_are_stratified_over_the_families():
    starts, all_three = set(), 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        pools = confusion_pools(CONJ, SCENE, rng, _no_scene_caption, POSITIVE)
        present = [f for f in FAMILIES if pools[f]]
        negs = stratified(pools, 3, rng)
        assert negs == confusion_negatives(CONJ, SCENE, np.random.default_rng(seed),
                                           _no_scene_caption, POSITIVE, 3)
        families = [next(f for f in FAMILIES if t in HAND[f]) for t in negs]
        start = present.index(families[0])
        assert "other" not in present
        # draw j from family (start + j) mod F over the F families found, in FAMILIES order
        assert families == [present[(start + j) % len(present)] for j in range(3)], negs
        if len(present) == 3:  # one negative per family, as finetune/negatives at N = 2
            all_three += 1
            starts.add(start)
            assert sorted(families) == sorted(present)
    assert all_three >= 30 and starts == {0, 1, 2}


def test_three_object_mentions_draw_from_all_four_families():
    objs = (Obj("cube", "red", x=0.1, y=0.5), Obj("sphere", "blue", x=0.5, y=0.5),
            Obj("cone", "green", x=0.9, y=0.5))
    scene = Scene(objs)
    m = Mention("concept", (0, 1, 2))
    pos = mention_text(m, scene, objs, _no_scene_caption)
    union = {f: set() for f in FAMILIES}
    for seed in range(10):
        for family, texts in confusion_pools(m, scene, np.random.default_rng(seed),
                                             _no_scene_caption, pos).items():
            union[family] |= set(texts)
    assert all(union.values())
    # by hand: cube/cube/sphere in red/red/blue repeats a category and a colour: "other";
    # sphere/cone/cube keeps both multisets: "swap"; red/red/blue on the same objects
    other = (objs[0], objs[0].with_(x=0.5), objs[1].with_(x=0.9))
    assert confusion_family(m, objs, other) == "other"
    perm = tuple(o.with_(category=c) for o, c in zip(objs, ("sphere", "cone", "cube"),
                                                     strict=True))
    assert confusion_family(m, objs, perm) == "swap"
    recoloured = tuple(o.with_(color=c) for o, c in zip(objs, ("red", "red", "blue"),
                                                        strict=True))
    assert confusion_family(m, objs, recoloured) == "shared_objects"


def test_stratified_cycles_over_the_non_empty_families_only():
    pools = {"swap": [], "shared_objects": ["o1", "o2"], "shared_attributes": [],
             "other": ["x"]}
    for seed in range(20):
        got = stratified(pools, 3, np.random.default_rng(seed))
        kinds = ["o" if t.startswith("o") else "x" for t in got]
        assert kinds in (["o", "x", "o"], ["x", "o", "x"])
    assert stratified({f: [] for f in FAMILIES}, 3, np.random.default_rng(0)) == []


def test_swap_takes_distinct_negatives_first_then_repeats():
    # three objects of three categories: a noun mention of the cube has four distinct swaps
    scene = Scene(SCENE.objects + (Obj("cone", "green", x=0.9, y=0.5),))
    m = Mention("noun", (0,), (("color",),))
    possible = {"a blue cube", "a red sphere", "a green cube", "a red cone"}
    for seed in range(10):
        negs = swap_negatives(m, scene, np.random.default_rng(seed), _no_scene_caption,
                              "a red cube", 3)
        assert len(set(negs)) == 3 and set(negs) <= possible
    # a two-object scene has only two: the third draw repeats one
    negs = swap_negatives(m, SCENE, np.random.default_rng(0), _no_scene_caption, "a red cube", 3)
    assert sorted(set(negs)) == ["a blue cube", "a red sphere"] and len(negs) == 3


TINY = DataConfig(n_scenes=10, image_size=32, render_size=32, n_twins=2)


@pytest.fixture(scope="module")
def tiny_data():
    return build_training_data(load_world("standin"), TINY, progress=False)


def test_data_holds_k_negatives_per_mention_and_none_for_twins(tiny_data):
    n_images, n_mentions = tiny_data.positive.shape
    assert tiny_data.swap.shape == tiny_data.confusion.shape == (n_images, n_mentions, 3)
    assert (tiny_data.swap[10:] == -1).all() and (tiny_data.confusion[10:] == -1).all()
    scenes_conf = tiny_data.confusion[:10]
    assert (scenes_conf >= 0).any()
    # a mention has all K negatives of a kind or none
    for arr in (tiny_data.swap[:10], scenes_conf):
        filled = (arr >= 0).sum(-1)
        assert set(np.unique(filled)) <= {0, 3}
    for s in range(10):  # never the mention's own positive
        for k in range(n_mentions):
            negs = set(tiny_data.swap[s, k]) | set(tiny_data.confusion[s, k])
            assert tiny_data.positive[s, k] not in negs
    assert tiny_data.stats["k_negatives"] == 3


def test_recipes_have_0_3_3_negative_columns(tiny_data):
    assert RECIPES == {"plain": (), "swapneg": ("swap",), "confneg": ("confusion",)}
    images = np.arange(10)
    which = np.zeros(10, np.int64)
    cols = {r: negative_columns(tiny_data, r, images, which) for r in RECIPES}
    assert {r: c.shape for r, c in cols.items()} == {"plain": (10, 0), "swapneg": (10, 3),
                                                     "confneg": (10, 3)}
    np.testing.assert_array_equal(cols["swapneg"], tiny_data.swap[images, which])
    np.testing.assert_array_equal(cols["confneg"], tiny_data.confusion[images, which])


def test_two_builds_are_byte_identical_and_another_seed_differs(tmp_path, tiny_data):
    again = build_training_data(load_world("standin"), TINY, progress=False)
    other = build_training_data(load_world("standin"), replace(TINY, seed=1), progress=False)
    for name, data in (("a", tiny_data), ("b", again), ("c", other)):
        save_training_data(data, tmp_path / name)
    for suffix in (".npz", ".json"):
        a, b, c = ((tmp_path / n).with_suffix(suffix).read_bytes() for n in "abc")
        assert a == b
        assert a != c


def test_the_cache_key_changes_with_k():
    assert TINY.key("standin") != replace(TINY, k_negatives=2).key("standin")
    with pytest.raises(ValueError, match="k_negatives"):
        DataConfig(k_negatives=0)


def test_each_recipe_trains_with_k_columns_per_image(tiny_data, monkeypatch):
    import foilbench.train.loop as loop
    from foilbench.models.embedded_arch import ArchConfig
    from foilbench.train.loop import TrainConfig, train_model
    from foilbench.train.pipeline import build_tokenizer

    seen = []
    real = loop.contrastive_loss

    def spy(img, txt, negs, valid, scale):
        seen[-1].append(0 if negs is None else len(negs) / len(img))
        return real(img, txt, negs, valid, scale)

    monkeypatch.setattr(loop, "contrastive_loss", spy)
    tok = build_tokenizer(tiny_data)
    arch = ArchConfig(cnn_width=8, token_dim=32, heads=2, text_layers=1, embed_dim=16,
                      vocab_size=tok.vocab_size, max_len=tok.max_len, image_size=32)
    weights = {}
    for recipe in RECIPES:
        seen.append([])
        cfg = TrainConfig(recipe=recipe, steps=3, batch_size=6, warmup=1, threads=1)
        net, log = train_model(tiny_data, tok, arch, cfg, progress=False)
        assert np.isfinite(log["final_loss"]) and log["train_unknown_words"] == 0
        weights[recipe] = np.concatenate([p.detach().numpy().ravel() for p in net.parameters()])
    assert seen == [[0, 0, 0], [3, 3, 3], [3, 3, 3]]
    assert not np.allclose(weights["plain"], weights["confneg"])
    assert not np.allclose(weights["swapneg"], weights["confneg"])


def test_a_cache_from_before_k_negatives_is_refused_by_name(tmp_path, tiny_data):
    from foilbench.errors import FoilbenchError
    from foilbench.train.dataset import load_training_data

    old = replace(tiny_data, swap=tiny_data.swap[..., 0], confusion=tiny_data.confusion[..., 0])
    save_training_data(old, tmp_path / "old")
    with pytest.raises(FoilbenchError, match=r"old\.npz.*'swap'.*older foilbench"):
        load_training_data(tmp_path / "old")
