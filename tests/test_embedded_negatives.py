"""Training captions: mentions, swap / confusion re-bindings, and the contrastive loss."""

from __future__ import annotations

import math

import numpy as np
import torch

from foilbench.train.hard_negatives import confusion_negatives, swap_negatives
from foilbench.train.loop import TrainConfig, contrastive_loss, lr_at
from foilbench.train.mentions import Mention, mention_is_true, mention_text
from foilbench.world.scene import Obj, Scene

RED_CUBE = Obj("cube", "red", x=0.2, y=0.5)
BLUE_SPHERE = Obj("sphere", "blue", x=0.7, y=0.5)
SCENE = Scene((RED_CUBE, BLUE_SPHERE))


def _describe(scene):  # whole-scene captions are not used by these mentions
    raise AssertionError("describe_scene should not be called")


def test_conj_swap_negative_exchanges_colours():
    m = Mention("conj", (0, 1), (("color",), ("color",)))
    pos = mention_text(m, SCENE, SCENE.objects, _describe)
    assert pos == "a red cube and a blue sphere"
    texts = swap_negatives(m, SCENE, np.random.default_rng(0), _describe, pos, 3)
    # swap attributes (colours) or swap objects (categories), NegCLIP's two swap kinds: both
    # distinct ones, the third draw repeats one of them
    assert len(texts) == 3
    assert set(texts) == {"a blue cube and a red sphere", "a red sphere and a blue cube"}


def test_noun_negatives_borrow_another_objects_attribute_and_are_false():
    m = Mention("noun", (0,), (("color",),))
    pos = mention_text(m, SCENE, SCENE.objects, _describe)
    assert pos == "a red cube"
    for seed in range(10):
        for make in (swap_negatives, confusion_negatives):
            negs = make(m, SCENE, np.random.default_rng(seed), _describe, pos, 3)
            assert len(negs) == 3
            assert set(negs) <= {"a blue cube", "a red sphere", "a blue sphere"}


def test_one_object_scene_has_no_hard_negative():
    scene = Scene((RED_CUBE,))
    m = Mention("noun", (0,), (("color",),))
    rng = np.random.default_rng(0)
    assert swap_negatives(m, scene, rng, _describe, "a red cube", 3) == []
    assert confusion_negatives(m, scene, rng, _describe, "a red cube", 3) == []


def test_a_negative_that_is_true_of_the_scene_is_refused():
    # two red cubes and a blue sphere: "a red cube" swapped with the other red cube is still true
    scene = Scene((RED_CUBE, RED_CUBE.with_(x=0.5), BLUE_SPHERE))
    m = Mention("noun", (0,), (("color",),))
    assert mention_is_true(m, scene, scene.objects)
    for seed in range(10):
        negs = swap_negatives(m, scene, np.random.default_rng(seed), _describe, "a red cube", 3)
        assert len(negs) == 3 and "a red cube" not in negs


def test_relation_swap_reverses_the_objects():
    m = Mention("relation", (0, 1), relation="left of")
    pos = mention_text(m, SCENE, SCENE.objects, _describe)
    assert pos == "a cube left of a sphere"
    negs = swap_negatives(m, SCENE, np.random.default_rng(0), _describe, pos, 3)
    assert negs == ["a sphere left of a cube"] * 3  # the one role swap, repeated to K


def test_contrastive_loss_matches_hand_computation():
    img = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    txt = torch.tensor([[1.0, 0.0], [0.6, 0.8]])
    scale = torch.tensor(2.0)
    # i2t rows: [2, 0] and [1.2, 1.6]; t2i rows: [2, 0] and [1.2, 1.6] (same matrix, transposed)
    row0 = -2 + math.log(math.exp(2) + math.exp(0))
    row1 = -1.6 + math.log(math.exp(1.2) + math.exp(1.6))
    i2t = (row0 + row1) / 2
    t2i_row0 = -2 + math.log(math.exp(2) + math.exp(1.2))
    t2i_row1 = -1.6 + math.log(math.exp(0) + math.exp(1.6))
    expected = (i2t + (t2i_row0 + t2i_row1) / 2) / 2
    got = contrastive_loss(img, txt, None, None, scale)
    assert abs(float(got) - expected) < 1e-6


def test_masked_negative_columns_change_nothing_and_real_ones_raise_the_loss():
    torch.manual_seed(0)
    img = torch.nn.functional.normalize(torch.randn(4, 8), dim=1)
    txt = torch.nn.functional.normalize(torch.randn(4, 8), dim=1)
    negs = torch.nn.functional.normalize(torch.randn(4, 8), dim=1)
    scale = torch.tensor(10.0)
    base = contrastive_loss(img, txt, None, None, scale)
    masked = contrastive_loss(img, txt, negs, torch.zeros(4, dtype=torch.bool), scale)
    used = contrastive_loss(img, txt, negs, torch.ones(4, dtype=torch.bool), scale)
    assert torch.allclose(base, masked)
    assert used > base


def test_learning_rate_warms_up_then_decays_to_zero():
    cfg = TrainConfig(steps=100, warmup=10, lr=1.0)
    assert lr_at(0, cfg) == 0.1 and lr_at(9, cfg) == 1.0
    assert abs(lr_at(10, cfg) - 1.0) < 1e-12 and lr_at(99, cfg) < 0.01
