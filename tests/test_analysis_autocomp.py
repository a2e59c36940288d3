"""Auto-Comp: Confusion taxonomy on hand-made captions; paired concept deltas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foilbench.analysis.autocomp import (
    chosen_negatives,
    classify_confusion,
    confusion_taxonomy,
    minimal_contextual_delta,
    swap_confusion_gap,
)
from foilbench.negatives import Concept, confusion_negatives, true_negatives

RED_CUBE_BLUE_SPHERE = Concept("color", ("cube", "sphere"), ("red", "blue"))


@pytest.mark.parametrize("text,label", [
    ("a blue cube and a red sphere", "swap"),
    ("a red sphere and a blue cube", "swap"),  # same rebinding, other phrase order
    ("a blue sphere and a red cube", "paraphrase"),  # the positive's bindings, reordered
    ("a red cube and a red sphere", "shared_objects"),
    ("a red cube and a blue cube", "shared_attributes"),
    ("a red cube and a red cube", "other"),
    ("a green cube and a blue sphere", "unmatched"),
])
def test_taxonomy_on_hand_made_captions(text, label):
    assert classify_confusion(RED_CUBE_BLUE_SPHERE, text) == label


def test_taxonomy_relations():
    c = Concept("position", ("cube", "sphere", "cone"), ("left of", "above"))
    swap = "a sphere left of a cube, and the cube above a cone"
    assert classify_confusion(c, swap) == "swap"
    assert classify_confusion(c, "a cube left of a sphere, and the sphere left of a cone") \
        == "shared_objects"
    assert classify_confusion(c, "a cube left of a sphere, and the sphere above a cube") \
        == "shared_attributes"
    with pytest.raises(ValueError, match="positive"):
        classify_confusion(c, "a cube left of a sphere, and the sphere above a cone")


def test_every_confusion_negative_gets_a_structural_class():
    labels = {classify_confusion(RED_CUBE_BLUE_SPHERE, t)
              for t in confusion_negatives(RED_CUBE_BLUE_SPHERE)}
    assert "unmatched" not in labels


def test_confusion_taxonomy_counts_wrong_items_only():
    caps = ["a red cube and a blue sphere", "a blue cube and a red sphere",
            "a red cube and a red sphere"]
    df = pd.DataFrame({"model": ["m"] * 3, "captions": [caps] * 3,
                       "scores": [np.array([0.9, 0.1, 0.2]),   # right
                                  np.array([0.5, 0.6, 0.2]),   # picks the swap
                                  np.array([0.5, 0.5, 0.5])],  # tie: first max negative
                       "task": "color", "objects": [("cube", "sphere")] * 3,
                       "values": [("red", "blue")] * 3})
    assert chosen_negatives(df) == [None, caps[1], caps[1]]
    row = confusion_taxonomy(df).iloc[0]
    assert row["n_wrong"] == 2 and row["swap"] == 2 and row["swap_share"] == 1.0


def concept_frame(p_a, p_b, column, a, b, n=80, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n):
        for _ in range(3):
            rows.append({"model": "m", "concept_id": c, column: a, "r1": rng.random() < p_a})
            rows.append({"model": "m", "concept_id": c, column: b, "r1": rng.random() < p_b})
    df = pd.DataFrame(rows)
    df["r1"] = df["r1"].astype(float)
    return df


def test_swap_confusion_gap_and_minimal_contextual_delta():
    df = concept_frame(0.9, 0.4, "negative_set", "confusion", "swap")
    gap = swap_confusion_gap(df, n_boot=2000).iloc[0]
    assert gap["n_concepts"] == 80
    assert gap["delta"] == pytest.approx(gap["swap"] - gap["confusion"])
    assert gap["ci_high"] < -0.3
    df = concept_frame(0.8, 0.8, "condition", "minimal", "contextual")
    delta = minimal_contextual_delta(df, n_boot=2000).iloc[0]
    assert delta["ci_low"] < 0 < delta["ci_high"]


def test_every_semantic_equivalent_is_a_paraphrase():
    """Relational chains that state the concept's facts (converses normalised) are
    paraphrases, not swaps: {pyramid > cube, sphere > cube} said the other way."""
    c = Concept("relative_size", ("pyramid", "cube", "sphere"), ("bigger than", "smaller than"))
    same = "a sphere bigger than a cube, and the cube smaller than a pyramid"
    assert classify_confusion(c, same) == "paraphrase"
    for text in true_negatives(c) + true_negatives(RED_CUBE_BLUE_SPHERE):
        concept = c if "bigger" in text else RED_CUBE_BLUE_SPHERE
        assert classify_confusion(concept, text) == "paraphrase"
    # and nothing else is one
    for k in (c, RED_CUBE_BLUE_SPHERE):
        labels = {t: classify_confusion(k, t) for t in confusion_negatives(k)}
        assert {t for t, lab in labels.items() if lab == "paraphrase"} == set(true_negatives(k))


def test_taxonomy_reads_framed_captions():
    frame = "a room with {body} on the floor"
    caps = [frame.replace("{body}", t) for t in
            ["a red cube and a blue sphere", "a blue sphere and a red cube"]]
    df = pd.DataFrame({"model": ["m"], "captions": [caps], "scores": [np.array([0.5, 0.9])],
                       "task": "color", "objects": [("cube", "sphere")],
                       "values": [("red", "blue")], "caption_frame": [frame]})
    row = confusion_taxonomy(df).iloc[0]
    assert row["paraphrase"] == 1 and row["unmatched"] == 0
