"""SugarCrepe++ ITT / TOT over instance groups: hand-computed cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _loader_fixtures import write_json
from foilbench.analysis.instance_groups import (
    cosine_rows,
    group_all_correct,
    instance_triplets,
    itt_accuracy,
    tot_from_embedder,
    tot_outcomes,
)
from foilbench.data.loaders import sugarcrepe_pp
from foilbench.scoring.protocols import choice_outcomes, choice_ties
from foilbench.stats import wilson_ci

# (model, instance, p1 outcome, p2 outcome); p1 of A's replace_obj/0 is a tie
OUTCOMES = [
    ("A", "swap_att/0", 1, 1), ("A", "swap_att/1", 1, 0),
    ("A", "replace_obj/0", 0, 1), ("A", "replace_obj/1", 1, 1),
    ("B", "swap_att/0", 1, 1), ("B", "swap_att/1", 1, 1),
    ("B", "replace_obj/0", 1, 1), ("B", "replace_obj/1", 0, 1),
]


def _frame() -> pd.DataFrame:
    rows = []
    for model, inst, o1, o2 in OUTCOMES:
        for tag, o in (("p1", o1), ("p2", o2)):
            rows.append({"model": model, "item_id": f"{inst}/{tag}", "instance_id": inst,
                         "edit_type": inst.split("/")[0], "positive": tag, "r1": float(o),
                         "tie_r1": model == "A" and inst == "replace_obj/0" and tag == "p1"})
    # an instance with only one item (e.g. a partial release): left out, counted
    rows.append({"model": "A", "item_id": "replace_obj/2/p1", "instance_id": "replace_obj/2",
                 "edit_type": "replace_obj", "positive": "p1", "r1": 1.0, "tie_r1": False})
    return pd.DataFrame(rows)


def test_itt_is_the_and_of_both_items():
    inst = group_all_correct(_frame())
    assert inst.attrs["incomplete"] == 1
    got = inst.set_index(["model", "instance_id"])["all_correct"].to_dict()
    assert got == {("A", "replace_obj/0"): 0.0, ("A", "replace_obj/1"): 1.0,
                   ("A", "swap_att/0"): 1.0, ("A", "swap_att/1"): 0.0,
                   ("B", "replace_obj/0"): 1.0, ("B", "replace_obj/1"): 0.0,
                   ("B", "swap_att/0"): 1.0, ("B", "swap_att/1"): 1.0}
    assert inst["any_tie"].sum() == 1


def test_itt_accuracy_table_hand_computed():
    table = itt_accuracy(_frame()).set_index(["model", "edit_type"])
    # A: 2 of 4 instances; swap_att 1/2, replace_obj 1/2 (one tie). B: 3/4; swap_att 2/2.
    expected = {("A", "all"): (2, 4, 1), ("A", "swap_att"): (1, 2, 0),
                ("A", "replace_obj"): (1, 2, 1), ("B", "all"): (3, 4, 0),
                ("B", "swap_att"): (2, 2, 0), ("B", "replace_obj"): (1, 2, 0)}
    assert len(table) == len(expected)
    for key, (k, n, ties) in expected.items():
        row = table.loc[key]
        assert row["n"] == n and row["accuracy"] == pytest.approx(k / n) and row["ties"] == ties
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_ci(k, n))


def test_itt_matches_the_paper_formula_on_raw_scores():
    rng = np.random.default_rng(0)
    s = np.round(rng.random((200, 3)), 1)  # s(I,P1), s(I,P2), s(I,N); rounding makes ties
    paper = (s[:, 0] > s[:, 2]) & (s[:, 1] > s[:, 2])
    p1, p2 = s[:, [0, 2]], s[:, [1, 2]]
    rows = [{"instance_id": i, "positive": tag, "r1": float(o), "tie_r1": bool(t)}
            for tag, sc in (("p1", p1), ("p2", p2))
            for i, (o, t) in enumerate(zip(choice_outcomes(sc), choice_ties(sc), strict=True))]
    inst = group_all_correct(pd.DataFrame(rows)).sort_values("instance_id")
    assert inst["all_correct"].to_numpy().astype(bool).tolist() == paper.tolist()
    assert 0 < paper.sum() < 200 and inst["any_tie"].any()


def test_non_binary_outcomes_multiply():
    df = pd.DataFrame({"instance_id": ["x", "x", "y", "y"], "r1": [0.5, 1.0, 0.5, 0.5]})
    got = group_all_correct(df).set_index("instance_id")["all_correct"]
    assert got.to_dict() == {"x": 0.5, "y": 0.25}


def test_tot_outcomes_strict_with_ties():
    correct, tie = tot_outcomes([0.9, 0.5, 0.7, 0.4], [0.1, 0.6, 0.7, 0.1], [0.2, 0.1, 0.3, 0.5])
    assert correct.tolist() == [True, False, False, False]
    assert tie.tolist() == [False, False, True, False]


def test_cosine_rows_hand_values():
    got = cosine_rows(np.array([[1.0, 0.0], [3.0, 4.0], [0.0, 0.0]]),
                      np.array([[1.0, 1.0], [3.0, 4.0], [1.0, 0.0]]))
    assert got == pytest.approx([2 ** -0.5, 1.0, 0.0])


def test_tot_from_loaded_items_with_a_stub_embedder(tmp_path):
    records = {"swap_att": [{"id": 0, "filename": "a.jpg", "caption": "p1 a", "caption2": "p2 a",
                             "negative_caption": "neg a"},
                            {"id": 1, "filename": "b.jpg", "caption": "p1 b",
                             "caption2": "p2 b", "negative_caption": "neg b"},
                            {"id": 2, "filename": "c.jpg", "caption": "p1 c",
                             "caption2": "p2 c", "negative_caption": "neg c"}]}
    write_json(tmp_path / "swap_att.json", records["swap_att"])
    with pytest.warns(UserWarning):
        items = sugarcrepe_pp.load(tmp_path, on_invalid="drop", check_images=False).items
    vectors = {  # a: P1~P2 closest -> right; b: P2 nearer N than P1 -> wrong; c: exact tie
        "p1 a": [1.0, 0.0], "p2 a": [2.0, 0.5], "neg a": [0.0, 1.0],
        "p1 b": [1.0, 0.0], "p2 b": [0.0, 1.0], "neg b": [1.0, 1.0],
        "p1 c": [1.0, 0.0], "p2 c": [1.0, 1.0], "neg c": [0.0, 1.0]}
    calls = []

    def embed(texts):
        calls.append(len(texts))
        return np.array([vectors[t] for t in texts])

    triplets = instance_triplets(items)
    assert triplets.set_index("instance_id").loc["swap_att/1", ["p1", "p2", "negative"]] \
        .tolist() == ["p1 b", "p2 b", "neg b"]
    out = tot_from_embedder(triplets, embed).set_index("instance_id")
    assert calls == [9]
    assert out["tot"].to_dict() == {"swap_att/0": 1.0, "swap_att/1": 0.0, "swap_att/2": 0.0}
    assert out["any_tie"].to_dict() == {"swap_att/0": False, "swap_att/1": False,
                                        "swap_att/2": True}
    assert out.loc["swap_att/0", "sim_p1_p2"] == pytest.approx(2 / np.sqrt(4.25))
