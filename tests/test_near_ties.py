"""Near ties (decisions within float32 rounding of a tie): the rule by hand, per kind, and
counted and reported by a run."""

from __future__ import annotations

import numpy as np
from PIL import Image

from _core_helpers import ColourEncoder, colour_pair_folder
from foilbench.data.format import load_benchmark
from foilbench.kinds import kind_of
from foilbench.models.base import CallableDualEncoder
from foilbench.runner.notes import note_lines
from foilbench.scoring.engine import evaluate
from foilbench.scoring.near_ties import (
    decision_margins,
    item_scale,
    near_tie_counts,
    near_tie_mask,
    near_tie_note,
)


def test_the_bound_is_one_millionth_of_the_scores_scale():
    m = np.array([0.0, 5e-8, -9.9e-7, 1e-6, 3e-6, 5e-5, 5e-5])
    scale = np.array([1.0, 0.2, 1.0, 1.0, 1.0, 30.0, 100.0])
    # 0 is an exact tie (a failure, counted as a tie); 1e-6 is not below the bound;
    # 5e-5 on a scale of 30 is not below 3e-5, on a scale of 100 it is below 1e-4
    assert near_tie_mask(m, scale).tolist() == [False, True, True, False, False, False, True]
    assert item_scale(np.array([[0.5, -2.0, -np.inf], [-np.inf, -np.inf, -np.inf]])).tolist() \
        == [2.0, 0.0]


def test_pair_decisions_use_the_decision_margins_and_leave_group_out():
    # sims [caption, image] flattened: s(c0,i0), s(c0,i1), s(c1,i0), s(c1,i1)
    matrix = np.array([
        [0.9, 0.2, 0.9 - 4e-7, 0.8],  # i2t: min(s00 - s10, s11 - s01) = 4e-7, near
        [0.9, 0.9 - 2e-7, 0.1, 0.8],  # t2i: min(s00 - s01, s11 - s10) = 2e-7, near
        [0.9, 0.9, 0.9, 0.9],  # exact ties: not near ties
        [0.9, 0.1, 0.1, 0.9],  # clear
    ])
    kind = kind_of("pair")
    assert sorted(decision_margins(kind, matrix)) == ["i2t", "t2i"]
    # the paper's anchored i2t margin of row 1 is 0.8 (not near); the decision margin decides
    assert near_tie_counts(kind, matrix) == {"i2t": 1, "t2i": 1}


def test_ragged_choice_items():
    matrix = np.array([[0.5, 0.5 - 3e-7, -np.inf], [0.2, 0.1, 0.2 + 1e-8], [0.3, 0.1, 0.0]])
    # row 1 is wrong by 1e-8: a near tie whatever its sign
    assert near_tie_counts(kind_of("choice"), matrix) == {"r1": 2}


def test_the_note_names_each_metric_with_near_ties():
    assert near_tie_note({"near_ties": {"i2t": 0, "t2i": 0}}) is None
    assert near_tie_note({}) is None
    line = near_tie_note({"near_ties": {"i2t": 2, "t2i": 0, "group": 0}})
    assert line.startswith("near ties: 2 i2t decision(s) within float32 rounding")
    assert "t2i" not in line


def _near_tie_model() -> CallableDualEncoder:
    """Colour one-hots scored by dot product, except that a red image and a blue caption
    score 1 - 4e-7: every item with red and blue (b and d) has both decisions 4e-7 from a
    tie, and is still right."""
    colour = ColourEncoder()

    def scores(images: np.ndarray, texts: np.ndarray) -> np.ndarray:
        a, b = np.asarray(images, np.float64), np.asarray(texts, np.float64)
        out = (a * b).sum(axis=1)
        return np.where((a[:, 0] == 1) & (b[:, 2] == 1), 1 - 4e-7, out)

    return CallableDualEncoder(colour.embed_images, colour.embed_texts, name="near",
                               pair_scores=scores, score_kind="dot")


def test_a_run_counts_its_near_ties_and_says_so(tmp_path):
    bench = load_benchmark(colour_pair_folder(tmp_path / "b"))
    assert Image.open(bench.image_path("red.png")).getpixel((0, 0)) == (255, 0, 0)
    result = evaluate(_near_tie_model(), bench, progress=False)
    assert result.outcomes["group"].tolist() == [1.0, 1.0, 1.0, 1.0]  # all right, no ties
    assert result.stats["near_ties"] == {"i2t": 2, "t2i": 2}
    assert any(line.startswith("near ties: 2 i2t, 2 t2i") for line in note_lines(result.stats))
    plain = evaluate(ColourEncoder(), bench, progress=False)
    assert plain.stats["near_ties"] == {"i2t": 0, "t2i": 0}
    assert not any("near ties" in line for line in note_lines(plain.stats))


def test_the_report_provenance_carries_the_note():
    from types import SimpleNamespace

    from foilbench.report.sections import provenance

    run = SimpleNamespace(label="m on b", run={"run_id": "r1", "eval_stats": {
        "near_ties": {"r1": 3}}})
    html = provenance([run])
    assert "<b>m on b</b>: near ties: 3 r1 decision(s) within float32 rounding" in html
    quiet = SimpleNamespace(label="q", run={"run_id": "r2", "eval_stats": {"near_ties": {"r1": 0}}})
    assert "near ties" not in provenance([quiet])
