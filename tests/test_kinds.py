"""Item kinds as objects: the registry, each kind's pieces, and a fourth kind added in a test."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pandas as pd
import pytest

from _core_helpers import ColourEncoder, solid
from foilbench.data.format import Manifest, make_benchmark
from foilbench.errors import BenchmarkError
from foilbench.kinds import (
    KINDS,
    CaptionAsk,
    ImageAsk,
    ItemKind,
    SlotLayout,
    kind_of,
    kind_of_frame,
    pad_scores,
    register_kind,
)
from foilbench.kinds.slots import codes
from foilbench.scoring.engine import evaluate


def test_registry_finds_the_three_kinds_in_order():
    assert list(KINDS) == ["pair", "choice", "image_choice"]
    assert kind_of("pair").metrics == ("i2t", "t2i", "group")
    assert kind_of(KINDS["choice"]) is KINDS["choice"]
    with pytest.raises(BenchmarkError, match="unknown item kind 'triple'.*pair, choice"):
        kind_of("triple")


def test_pair_layout_and_outcomes():
    items = pd.DataFrame({"image_base": ["a", "b"], "image_foil": ["b", "a"],
                          "caption_base": ["x", "y"], "caption_foil": ["y", "x"]})
    layout = KINDS["pair"].layout(items, {"a": 0, "b": 1}, {"x": 0, "y": 1})
    # slot 2c + i holds s(c, i): item 0 is (c0=x, c1=y; i0=a, i1=b)
    assert layout.image_idx[:4].tolist() == [0, 1, 0, 1]
    assert layout.text_idx[:4].tolist() == [0, 0, 1, 1]
    matrix = np.array([[0.9, 0.2, 0.1, 0.8], [0.5, 0.5, 0.1, 0.8]])
    out, ties, chance = KINDS["pair"].outcomes(matrix, layout.n_slots)
    assert out["group"].tolist() == [1.0, 0.0] and ties["t2i"].tolist() == [False, True]
    assert chance["group"].tolist() == pytest.approx([1 / 6, 1 / 6])
    assert KINDS["pair"].margins(matrix)["t2i"].tolist() == pytest.approx([0.7, 0.0])


def test_ranking_kinds_pad_with_minus_inf_and_ignore_pads():
    matrix = pad_scores([[0.5, 0.2], [0.1, 0.3, 0.05]])
    assert matrix[0, 2] == -np.inf
    out, ties, chance = KINDS["choice"].outcomes(matrix, np.array([2, 3]))
    assert out["r1"].tolist() == [1.0, 0.0]
    assert chance["r1"].tolist() == pytest.approx([1 / 2, 1 / 3])
    assert KINDS["image_choice"].margins(matrix)["r1"].tolist() == pytest.approx([0.3, -0.2])


def test_api_questions_in_protocol_order():
    Row = namedtuple("Row", "item_id image_base image_foil caption_base caption_foil")
    asks = KINDS["pair"].api_asks(Row("p", "i0", "i1", "c0", "c1"))
    assert asks == [CaptionAsk("i0", "c0", "c1"), CaptionAsk("i1", "c1", "c0"),
                    ImageAsk("c0", "i0", "i1"), ImageAsk("c1", "i1", "i0")]
    Choice = namedtuple("Choice", "item_id image captions")
    with pytest.raises(BenchmarkError, match="item q: .*exactly 2 captions"):
        KINDS["choice"].api_asks(Choice("q", "i", ["a", "b", "c"]))
    out, chance = KINDS["pair"].api_outcomes(np.array([[1.0, 0.5, 1.0, 1.0]]))
    assert out["group"].tolist() == [0.5] and chance["group"].tolist() == [1 / 16]


def test_caption_candidates_only_for_choice():
    items = pd.DataFrame({"image": ["a"], "captions": [["pos", "neg"]]})
    assert KINDS["choice"].candidate_captions(items) == [["pos", "neg"]]
    assert KINDS["pair"].candidate_captions(items) is None
    assert [k for k, v in KINDS.items() if v.has_caption_candidates] == ["choice"]


def test_frame_kind_recognised_from_columns_and_lengths():
    assert kind_of_frame(["i2t", "t2i"], [4, 4]).name == "pair"
    assert kind_of_frame(["r1"], [2, 3]).name == "choice"


class TwoPositiveKind(ItemKind):
    """A toy fourth kind (SugarCrepe++-style): one image, two positive captions that say the
    same thing, one negative. Correct when both positives score strictly above the negative."""

    name = "two_positive"
    image_columns = ("image",)
    text_columns = ("positive_1", "positive_2", "negative")
    metrics = ("itt",)
    default_metric = "itt"

    def layout(self, items, image_index, text_index):
        img = codes(items["image"], image_index)
        txt = np.stack([codes(items[c], text_index) for c in self.text_columns], axis=1)
        n = len(items)
        return SlotLayout(np.repeat(img, 3), txt.reshape(-1), np.repeat(np.arange(n), 3),
                          np.tile(np.arange(3), n), np.full(n, 3))

    def outcomes(self, matrix, n_slots):
        s = np.asarray(matrix, np.float64)
        ok = (s[:, 0] > s[:, 2]) & (s[:, 1] > s[:, 2])
        tie = (s[:, 0] == s[:, 2]) | (s[:, 1] == s[:, 2])
        # the negative must rank last among 3 randomly ordered scores: 2 of 6 orderings
        return {"itt": ok.astype(float)}, {"itt": tie}, {"itt": np.full(len(s), 1 / 3)}

    def margins(self, matrix):
        s = np.asarray(matrix, np.float64)
        return {"itt": np.minimum(s[:, 0], s[:, 1]) - s[:, 2]}


@pytest.fixture
def two_positive():
    kind = register_kind(TwoPositiveKind())
    try:
        yield kind
    finally:
        KINDS.unregister(kind.name)


def test_a_fourth_kind_runs_through_validation_layout_and_outcomes(two_positive, tmp_path):
    for colour in ("red", "blue"):
        solid(tmp_path / f"{colour}.png", colour)
    items = pd.DataFrame({
        "item_id": ["a", "b", "c"],
        "image": ["red.png", "blue.png", "red.png"],
        "positive_1": ["a red square", "a blue square", "a red tile"],
        "positive_2": ["a square that is red", "a square that is blue", "a tile"],
        "negative": ["a blue square", "a red square", "a blue tile"],
    })
    bench = make_benchmark(Manifest(name="toy", kind="two_positive"), items, tmp_path)
    assert bench.item_kind is two_positive and bench.manifest.primary_metric == "itt"
    result = evaluate(ColourEncoder(), bench, progress=False)
    # item c: "a tile" names no colour (score 0) and the blue negative also scores 0 on red
    assert result.outcomes["itt"].tolist() == [1.0, 1.0, 0.0]
    assert result.ties["itt"].tolist() == [False, False, True]
    assert result.chance["itt"].tolist() == pytest.approx([1 / 3] * 3)
    assert [len(s) for s in result.scores] == [3, 3, 3]
    with pytest.raises(BenchmarkError, match="negative"):
        make_benchmark(Manifest(name="toy", kind="two_positive"),
                       items.drop(columns="negative"), tmp_path)
    with pytest.raises(ValueError, match="already registered"):
        register_kind(TwoPositiveKind())


def test_unregistered_fourth_kind_is_unknown():
    assert "two_positive" not in KINDS
    with pytest.raises(BenchmarkError, match="unknown kind 'two_positive'"):
        Manifest(name="toy", kind="two_positive")
