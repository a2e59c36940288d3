"""r1 (Auto-Comp §3: "accuracy is reported as the rate at which the positive caption is
selected") beside r1_valid (the positive above the false negatives only), and the caption
log-likelihood normalisation each paper states, recorded in the run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _core_helpers import solid, write_folder
from foilbench.data.format import load_benchmark
from foilbench.errors import BenchmarkError
from foilbench.kinds.valid import valid_choice
from foilbench.models.base import ModelInfo
from foilbench.scoring.engine import evaluate
from foilbench.scoring.norms import benchmark_norm, for_benchmark


def test_valid_choice_hand_computed():
    # item 0: the only competitor above the positive is true -> r1 fails, r1_valid succeeds
    # item 1: a false negative ties the positive -> failure and a counted tie
    # item 2: every negative true -> success with chance 1
    scores = np.array([[0.5, 0.9, 0.1, 0.2], [0.5, 0.5, 0.1, -np.inf], [0.1, 0.9, -np.inf,
                                                                        -np.inf]])
    out, tie, chance = valid_choice(scores, [4, 3, 2], [[1], [], [1]])
    assert out.tolist() == [1.0, 0.0, 1.0]
    assert tie.tolist() == [False, True, False]
    assert chance.tolist() == pytest.approx([1 / 3, 1 / 3, 1.0])
    with pytest.raises(ValueError, match="out of 1..2"):
        valid_choice(scores[:1, :3], [3], [[3]])


class LookupScorer:
    """A pairwise scorer whose score of a caption is fixed by a dict (any image)."""

    family = "pairwise"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table
        self.info = ModelInfo(spec="lookup", fingerprint="lookup-1", family="pairwise",
                              score_kind="loglik")

    def score_pairs(self, images, texts):
        return [np.array([self.table[t] for t in caps]) for caps in texts]


def autocomp_like(root, true_negatives=True):
    solid(root / "red.png", "red")
    caps = ["a red cube and a blue sphere", "a blue sphere and a red cube",  # paraphrase
            "a blue cube and a red sphere", "a red cube and a red sphere"]
    rows = [{"item_id": f"i{k}", "image": "red.png", "captions": caps, "scene_id": f"s{k}"}
            for k in range(2)]
    items = pd.DataFrame(rows)
    if true_negatives:
        items["true_negatives"] = [[1], [1]]
    return load_benchmark(write_folder(root, "choice", items))


def test_engine_adds_r1_valid_only_where_items_list_true_negatives(tmp_path):
    scorer = LookupScorer({"a red cube and a blue sphere": 1.0, "a blue sphere and a red cube":
                           1.0, "a blue cube and a red sphere": 0.2,
                           "a red cube and a red sphere": 0.3})
    result = evaluate(scorer, autocomp_like(tmp_path / "a"), progress=False)
    # a perfect truth judge ties the paraphrase: r1 (the paper's) fails, r1_valid succeeds
    assert result.outcomes["r1"].tolist() == [0.0, 0.0]
    assert result.ties["r1"].tolist() == [True, True]
    assert result.outcomes["r1_valid"].tolist() == [1.0, 1.0]
    assert result.chance["r1"].tolist() == [0.25, 0.25]
    assert result.chance["r1_valid"].tolist() == pytest.approx([1 / 3, 1 / 3])
    plain = evaluate(scorer, autocomp_like(tmp_path / "b", true_negatives=False),
                     progress=False)
    assert set(plain.outcomes) == {"r1"}


def test_bad_true_negative_indices_name_the_benchmark(tmp_path):
    bench = autocomp_like(tmp_path / "a")
    bench.items["true_negatives"] = [[9], [1]]
    scorer = LookupScorer(dict.fromkeys(bench.items["captions"][0], 0.0))
    with pytest.raises(BenchmarkError, match="out of 1..3"):
        evaluate(scorer, bench, progress=False)


class NormScorer(LookupScorer):
    def __init__(self, norm="mean", source="foilbench default", stated=False):
        super().__init__({})
        self.norm, self.source, self.stated = norm, source, stated
        self.info = ModelInfo(spec="n", fingerprint=f"n-{norm}", family="pairwise",
                              score_kind="loglik", extras={"norm": norm, "norm_source": source})

    def with_default_norm(self, norm, source):
        return self if self.stated else NormScorer(norm, source)

    def score_pairs(self, images, texts):
        return [np.arange(len(c), 0, -1, dtype=float) for c in texts]


def test_each_paper_gets_its_norm_recorded_in_the_run(tmp_path):
    bench = autocomp_like(tmp_path / "autocomp-swap")
    assert benchmark_norm(bench)[0] == "sum"  # by name: Auto-Comp §3 sums token log-probs
    bench.manifest.extras["loglik_norm"] = {"norm": "mean", "source": "stated in manifest"}
    assert benchmark_norm(bench) == ("mean", "stated in manifest")
    del bench.manifest.extras["loglik_norm"]
    result = evaluate(NormScorer(), bench, progress=False)
    assert result.model.fingerprint == "n-sum"
    assert result.stats["loglik_norm"] == "sum"
    assert "Auto-Comp §3" in result.stats["loglik_norm_source"]
    stated = evaluate(NormScorer("mean", "stated (?norm=)", stated=True), bench, progress=False)
    assert stated.stats["loglik_norm"] == "mean" and stated.model.fingerprint == "n-mean"
    other = autocomp_like(tmp_path / "my-bench")
    assert benchmark_norm(other) is None and for_benchmark(NormScorer(), other).norm == "mean"
    pairs = autocomp_like(tmp_path / "composet")
    assert benchmark_norm(pairs)[0] == "mean"  # CompoSET App. G.4: mean per-token
