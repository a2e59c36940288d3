"""I2T / T2I / Group (CompoSET Eq. 1-3) and R@1 against hand-computed cases, ties included."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
import pytest

from _core_helpers import ColourEncoder, colour_pair_folder, solid
from foilbench.data.format import Manifest, make_benchmark
from foilbench.scoring.engine import evaluate, item_outcomes
from foilbench.scoring.protocols import (
    PAIR_CHANCE,
    choice_chance,
    choice_outcomes,
    choice_ties,
    pad_ragged,
    pair_outcomes,
    pair_ties,
)

# sims[n, caption, image]; rows: [[s(c0,i0), s(c0,i1)], [s(c1,i0), s(c1,i1)]]
CASES = {
    "all correct": ([[0.9, 0.2], [0.1, 0.8]], (1, 1, 1), (0, 0, 0)),
    # I2T: 0.5 > 0.4 and 0.7 > 0.6; T2I: 0.5 > 0.6 fails
    "i2t only": ([[0.5, 0.6], [0.4, 0.7]], (1, 0, 0), (0, 0, 0)),
    # I2T: 0.5 > 0.6 fails; T2I: 0.5 > 0.4 and 0.7 > 0.6
    "t2i only": ([[0.5, 0.4], [0.6, 0.7]], (0, 1, 0), (0, 0, 0)),
    # s(c0,i0) == s(c1,i0): I2T tie -> failure; T2I: 0.5 > 0.1 and 0.9 > 0.5
    "i2t tie": ([[0.5, 0.1], [0.5, 0.9]], (0, 1, 0), (1, 0, 1)),
    # s(c1,i1) == s(c1,i0): T2I tie -> failure; I2T: 0.5 > 0.2 and 0.2 > 0.1
    "t2i tie": ([[0.5, 0.1], [0.2, 0.2]], (1, 0, 0), (0, 1, 1)),
    "all equal": ([[0.3, 0.3], [0.3, 0.3]], (0, 0, 0), (1, 1, 1)),
    "swapped": ([[0.1, 0.9], [0.9, 0.1]], (0, 0, 0), (0, 0, 0)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_pair_outcomes_hand_cases(name):
    sims, expected, expected_ties = CASES[name]
    out = pair_outcomes(np.array([sims]))
    ties = pair_ties(np.array([sims]))
    assert tuple(int(out[m][0]) for m in ("i2t", "t2i", "group")) == expected
    assert tuple(int(ties[m][0]) for m in ("i2t", "t2i", "group")) == expected_ties


def test_pair_outcomes_vectorised_equals_rowwise():
    sims = np.array([c[0] for c in CASES.values()])
    out = pair_outcomes(sims)
    for k, (_, expected, _ties) in enumerate(CASES.values()):
        assert (int(out["i2t"][k]), int(out["t2i"][k]), int(out["group"][k])) == expected


def test_pair_chance_levels_match_all_orderings():
    """Over the 24 orderings of four distinct scores, I2T and T2I hold in 6 and Group in 4."""
    hits = {"i2t": 0, "t2i": 0, "group": 0}
    for perm in permutations([1.0, 2.0, 3.0, 4.0]):
        out = pair_outcomes(np.array(perm).reshape(1, 2, 2))
        for m in hits:
            hits[m] += int(out[m][0])
    assert hits == {"i2t": 6, "t2i": 6, "group": 4}
    assert {m: h / 24 for m, h in hits.items()} == pytest.approx(PAIR_CHANCE)


def test_pair_shape_is_checked():
    with pytest.raises(ValueError, match=r"\(n, 2, 2\)"):
        pair_outcomes(np.zeros((3, 4)))


def test_choice_r1_ragged_with_ties():
    rows = [np.array([0.5, 0.4, 0.1]),  # positive strictly first
            np.array([0.5, 0.5, 0.1]),  # tie with a negative -> failure
            np.array([0.3, 0.9]),  # K = 1, negative wins
            np.array([0.2, -1.0, -2.0, -3.0])]  # K = 3
    scores = pad_ragged(rows)
    assert scores.shape == (4, 4) and np.isneginf(scores[0, 3]) and np.isneginf(scores[2, 2])
    assert choice_outcomes(scores).tolist() == [True, False, False, True]
    assert choice_ties(scores).tolist() == [False, True, False, False]
    assert choice_chance([3, 3, 2, 4]).tolist() == [1 / 3, 1 / 3, 1 / 2, 1 / 4]


def test_item_outcomes_pair_layout_and_chance():
    flat = np.array([[0.9, 0.2, 0.1, 0.8], [0.5, 0.1, 0.5, 0.9]])  # [c0i0, c0i1, c1i0, c1i1]
    out, ties, chance = item_outcomes("pair", flat, np.array([4, 4]))
    assert out["group"].tolist() == [1.0, 0.0] and out["t2i"].tolist() == [1.0, 1.0]
    assert ties["i2t"].tolist() == [False, True]
    assert chance["group"].tolist() == pytest.approx([1 / 6, 1 / 6])


def test_engine_pair_scores_follow_eq_1_to_3(tmp_path):
    """Colour encoder: s(c, i) = share of the caption's colour in the image (1 or 0)."""
    bench = make_benchmark(Manifest(name="colours", kind="pair"),
                           pd.read_parquet(colour_pair_folder(tmp_path) / "items.parquet"),
                           tmp_path)
    result = evaluate(ColourEncoder(), bench, progress=False)
    # every item: s(c0,i0) = s(c1,i1) = 1 and the cross scores are 0 -> all correct
    assert [s.tolist() for s in result.scores] == [[1, 0, 0, 1]] * 4
    assert all(result.outcomes[m].tolist() == [1.0] * 4 for m in ("i2t", "t2i", "group"))


def test_engine_choice_ragged_k_and_per_item_chance(tmp_path):
    for c in ("red", "green", "blue"):
        solid(tmp_path / f"{c}.png", c)
    items = pd.DataFrame({
        "item_id": ["x", "y", "z"],
        "image": ["red.png", "green.png", "blue.png"],
        "captions": [["a red cube", "a green cube"],  # correct
                     ["a green cube", "a red cube", "a blue cube", "a cube"],  # correct, K=3
                     ["a cube", "a blue cube", "a red cube"]],  # positive scores 0 < 1
    })
    bench = make_benchmark(Manifest(name="ch", kind="choice"), items, tmp_path)
    result = evaluate(ColourEncoder(), bench, progress=False)
    assert result.outcomes["r1"].tolist() == [1.0, 1.0, 0.0]
    assert result.chance["r1"].tolist() == pytest.approx([1 / 2, 1 / 4, 1 / 3])
    assert [len(s) for s in result.scores] == [2, 4, 3]
    assert result.ties["r1"].tolist() == [False, False, False]


def test_engine_image_choice_tie_is_failure(tmp_path):
    for c in ("red", "green"):
        solid(tmp_path / f"{c}.png", c)
    items = pd.DataFrame({"item_id": ["p", "q"], "caption": ["a red cube", "a cube"],
                          "images": [["red.png", "green.png"], ["red.png", "green.png"]]})
    bench = make_benchmark(Manifest(name="ic", kind="image_choice"), items, tmp_path)
    result = evaluate(ColourEncoder(), bench, progress=False)
    # item q: caption without colour scores 0 on both images -> a tie, scored as failure
    assert result.outcomes["r1"].tolist() == [1.0, 0.0]
    assert result.ties["r1"].tolist() == [False, True]


def test_api_choice_family_is_delegated(monkeypatch, tmp_path):
    import foilbench.scoring.api_protocol as api

    seen = {}

    def fake_evaluate(adapter, benchmark, progress=True):
        seen["args"] = (adapter, benchmark, progress)
        return "delegated"

    monkeypatch.setattr(api, "evaluate", fake_evaluate)

    class ApiModel:
        family = "api_choice"

    model, bench = ApiModel(), object()
    assert evaluate(model, bench, progress=False) == "delegated"
    assert seen["args"] == (model, bench, False)


def test_unknown_family_is_refused():
    class Odd:
        family = "generative"

    with pytest.raises(Exception, match="family 'generative'.*'dual', 'pairwise' or 'api_choice'"):
        evaluate(Odd(), object(), progress=False)
