"""Blind text-only audit: planted biases are found, absent ones are not, flags are exact."""

from __future__ import annotations

import math

import numpy as np
import pytest

from foilbench.audit.blind import accuracy_stat, blind_audit_captions, oriented_gaps
from foilbench.audit.crossfit import crossfit, decide, fit_signs, group_folds
from foilbench.audit.ngram import NgramLM
from foilbench.audit.text import pad_captions, same_bag_of_words

WORDS = "cat dog red blue table chair sits near under big small on the a tree car".split()


def random_caption(rng, n_words):
    return " ".join(rng.choice(WORDS, size=n_words))


def test_group_folds_keep_clusters_together_and_balance():
    groups = np.repeat(np.arange(10), 3)
    folds = group_folds(groups, 5, seed=1)
    for g in range(10):
        assert len(set(folds[groups == g])) == 1
    assert np.bincount(folds).tolist() == [6, 6, 6, 6, 6]
    with pytest.raises(ValueError, match="only 3 clusters"):
        group_folds(np.arange(3), 5)


def test_decide_is_strict_and_handles_missing_negatives():
    feats = np.array([[2.0, 1.0, np.nan], [1.0, 1.0, 0.0], [1.0, 2.0, 0.0]])
    correct, tie = decide(feats, 1.0)
    assert correct.tolist() == [True, False, False]
    assert tie.tolist() == [False, True, False]
    correct, _ = decide(feats, -1.0)  # now the smaller value wins
    assert correct.tolist() == [False, False, False]


def test_fit_signs_per_stratum():
    feats = np.array([[3.0, 1.0], [3.0, 1.0], [1.0, 3.0], [1.0, 3.0]])
    signs = fit_signs(feats, np.array(["a", "a", "b", "b"]))
    assert signs["a"] == 1.0 and signs["b"] == -1.0


def test_planted_length_bias_is_found_by_cross_fitting():
    rng = np.random.default_rng(0)
    caps, types = [], []
    for i in range(200):
        n = int(rng.integers(4, 8))
        if i % 2:  # "add": the negative is one word longer 95% of the time
            neg_len = n + 1 if rng.random() < 0.95 else n - 1
            types.append("add")
        else:  # "replace": same length, no usable signal
            neg_len = n
            types.append("replace")
        caps.append([random_caption(rng, n), random_caption(rng, neg_len)])
    res = blind_audit_captions(caps, np.array(types), np.arange(200), ["length"], folds=5)
    add = res["scorers"]["length"]["by_type"]["add"]
    assert add["accuracy"] >= 0.9 and add["ci_low"] > add["chance"] == 0.5
    # equal lengths are ties, which are failures and are counted
    assert res["scorers"]["length"]["by_type"]["replace"]["accuracy"] == 0.0
    assert res["flags"]["ties:length"]["replace"] == 100


def test_cross_fitting_finds_no_bias_where_there_is_none():
    """Positive and negative lengths i.i.d.: an in-sample sign would still pick the luckier
    sign; cross-fitted, the accuracy stays within chance noise."""
    rng = np.random.default_rng(3)
    n = 600
    lengths = rng.integers(3, 30, size=(n, 2))
    caps = [[random_caption(rng, a), random_caption(rng, b)] for a, b in lengths]
    res = blind_audit_captions(caps, np.full(n, "t"), np.arange(n), ["length"], folds=5)
    stat = res["scorers"]["length"]["overall"]
    ties = res["flags"]["ties:length"]["t"]
    untied = n - ties
    # among untied items the held-out accuracy is binomial(untied, 1/2): within 3 sd
    assert abs(stat["accuracy"] * n - untied / 2) < 3 * math.sqrt(untied / 4)


def test_same_bag_of_words_flags_count_per_type():
    caps = [["a red cube on a blue table", "a blue cube on a red table"],
            ["a red cube on a blue table", "a red cube on a green table"],
            ["Dog bites man.", "man bites dog"],
            ["a cat", "a cat a cat"]]  # same words, different multiset
    types = np.array(["swap", "replace", "swap", "add"])
    res = blind_audit_captions(caps * 3, np.tile(types, 3), np.arange(12), ["length"],
                               folds=3)
    assert res["flags"]["same_bag_of_words"] == {"add": 0, "replace": 0, "swap": 6}
    assert same_bag_of_words("Dog bites man.", "man bites dog")
    assert not same_bag_of_words("a cat", "a cat a cat")


def test_stat_shape_and_wilson_interval():
    stat = accuracy_stat(np.array([1, 1, 0, 1], bool), np.full(4, 0.5))
    assert set(stat) == {"accuracy", "n", "ci_low", "ci_high", "chance"}
    assert stat["accuracy"] == 0.75 and stat["n"] == 4 and stat["chance"] == 0.5
    assert stat["ci_low"] < 0.75 < stat["ci_high"]


def test_ragged_captions_pad_and_chance():
    texts, index = pad_captions([["a", "b"], ["c", "d", "a"]])
    assert texts == ["a", "b", "c", "d"]
    assert index.tolist() == [[0, 1, -1], [2, 3, 0]]
    res = blind_audit_captions([["a b", "a"], ["c d e", "d", "e"]] * 2, np.full(4, "t"),
                               np.arange(4), ["length"], folds=2)
    assert res["scorers"]["length"]["overall"]["chance"] == pytest.approx((0.5 + 1 / 3) / 2)


def test_ngram_lm_is_a_distribution_and_prefers_seen_text():
    lm = NgramLM(order=2).fit([["a", "red", "cube"], ["a", "blue", "cube"]])
    vocab = ["a", "red", "blue", "cube", "</s>", "<unk>"]
    for history in [("<s>",), ("a",), ("zzz",)]:
        total = sum(lm.prob(w, history) for w in vocab)
        assert total == pytest.approx(1.0)
    assert lm.mean_logprob(["a", "red", "cube"]) > lm.mean_logprob(["cube", "red", "a"])


def test_ngram_scorer_learns_only_from_training_folds():
    """A positive-vs-negative word-order signal the n-gram LM can learn from positives."""
    rng = np.random.default_rng(1)
    caps = []
    for _ in range(120):
        obj, col = rng.choice(["cube", "ball", "cone"]), rng.choice(["red", "blue", "green"])
        caps.append([f"a {col} {obj} on the table", f"a {obj} {col} on the table"])
    res = blind_audit_captions(caps, np.full(120, "t"), np.arange(120), ["ngram"], folds=4)
    assert res["scorers"]["ngram"]["overall"]["accuracy"] > 0.95


def test_crossfit_calls_feature_fn_with_the_training_mask():
    seen = []

    def feature_fn(train):
        seen.append(train.copy())
        return np.array([[1.0, 0.0]] * 6)

    folds = np.array([0, 0, 1, 1, 2, 2])
    correct, _ = crossfit(feature_fn, np.full(6, "t"), folds)
    assert correct.all()
    assert [m.tolist() for m in seen][0] == [False, False, True, True, True, True]


def test_oriented_gaps_lie_in_unit_interval():
    caps = [["a b c", "a b"], ["a b c d", "a"], ["a", "a b"]]
    gaps = oriented_gaps(caps * 2, np.full(6, "t"), np.arange(6), "length", folds=2)
    assert np.abs(gaps).max() == 1.0
    assert gaps.tolist() == pytest.approx([1 / 3, 1.0, -1 / 3] * 2)


def test_reference_rows_pick_the_better_cheap_scorer(tmp_path):
    import pandas as pd

    from foilbench.audit.blind import reference_rows
    from foilbench.data.format import Manifest, make_benchmark
    from foilbench.data.tiny import tiny_benchmark

    rows = [{"item_id": str(i), "image": f"{i}.jpg", "edit_type": "add",
             "captions": [f"a dog {i}", f"a big dog {i} here"]} for i in range(20)]
    bench = make_benchmark(Manifest(name="t", kind="choice"), pd.DataFrame(rows), tmp_path,
                           check_images=False)
    ref = reference_rows(bench)
    assert set(ref) == {"r1"} and ref["r1"]["scorer"] in ("length", "ngram")
    assert ref["r1"]["accuracy"] == 1.0 and ref["r1"]["chance"] == 0.5
    assert reference_rows(tiny_benchmark(root=tmp_path / "tiny")) == {}


def test_ngram_finds_nothing_when_positives_and_negatives_share_a_distribution():
    rng = np.random.default_rng(7)
    n = 400
    caps = [[random_caption(rng, 6), random_caption(rng, 6)] for _ in range(n)]
    res = blind_audit_captions(caps, np.full(n, "t"), np.arange(n), ["ngram"], folds=5)
    acc = res["scorers"]["ngram"]["overall"]["accuracy"]
    assert abs(acc - 0.5) < 3 * math.sqrt(0.25 / n)


# --- cross-fitting: data on which a leaked (in-fold) fit and the held-out fit disagree ------

def _sign_flip_features(folds: np.ndarray) -> np.ndarray:
    """Items of fold 0 favour sign +1 (positive larger), items of fold 1 favour -1; fold 0
    holds more items, so a sign fitted on all rows would be +1."""
    return np.array([[2.0, 1.0] if f == 0 else [1.0, 2.0] for f in folds])


def test_crossfit_applies_to_each_fold_the_sign_fitted_on_the_other():
    """Held out, fold 0 gets fold 1's sign (-1) and fold 1 gets fold 0's (+1): every item is
    wrong. Fitting on all rows (held-out fold included) would give +1 everywhere and 6/10;
    fitting on the held-out fold itself would give 10/10."""
    folds = np.array([0] * 6 + [1] * 4)
    feats = _sign_flip_features(folds)
    correct, tie = crossfit(lambda train: feats, np.full(10, "t"), folds)
    assert correct.tolist() == [False] * 10 and not tie.any()
    assert fit_signs(feats, np.full(10, "t"))["t"] == 1.0  # the leaked fit really differs


def test_blind_audit_reports_the_held_out_accuracy_not_the_in_fold_one():
    """The same sign flip through the whole audit, with the folds the audit itself draws."""
    clusters = np.array([f"scene{k}" for k in range(10)])
    folds = group_folds(clusters, 2, seed=0)
    big = int(np.argmax(np.bincount(folds)))  # keep the planted imbalance whatever the deal
    rows = np.repeat(np.arange(10), np.where(folds == big, 3, 1))
    item_folds = folds[rows]
    feats = _sign_flip_features((item_folds != big).astype(int))
    res = blind_audit_captions([["p", "n"]] * len(rows), np.full(len(rows), "t"),
                               clusters[rows], ["fixed"], folds=2, seed=0,
                               factories={"fixed": lambda texts, index: lambda train: feats})
    stat = res["scorers"]["fixed"]["overall"]
    assert stat["n"] == 20 and stat["accuracy"] == 0.0
    assert res["flags"]["ties:fixed"] == {"t": 0}


def test_ngram_lm_never_sees_the_held_out_positives():
    """Every item has words of its own: the positive is the negative reversed. An LM trained
    on the other folds knows none of these words, so both captions score the same (a tie, a
    failure); an LM that saw the held-out positives would pick every one of them."""
    caps = [[f"w{i}a w{i}b w{i}c", f"w{i}c w{i}b w{i}a"] for i in range(12)]
    res = blind_audit_captions(caps, np.full(12, "t"), np.arange(12), ["ngram"], folds=3)
    assert res["scorers"]["ngram"]["overall"]["accuracy"] == 0.0
    assert res["flags"]["ties:ngram"] == {"t": 12}


def test_a_bounded_scorer_is_not_sign_fitted():
    """SugarCrepe App. D.3: for a grammar or plausibility model, "If M(p_i) > M(n_i), then the
    model could identify the correct caption ... without referring to it": a classifier
    probability that prefers the negative on 7 of 10 items scores 3/10 (a fitted sign would
    flip it to 7/10)."""
    feats = np.array([[0.2, 0.9]] * 7 + [[0.8, 0.1]] * 3)

    def bounded(train):
        return feats

    bounded.bounded = True
    folds = np.array([0, 1] * 5)
    correct, tie = crossfit(bounded, np.full(10, "t"), folds)
    assert correct.sum() == 3 and not tie.any()
    correct_fitted, _ = crossfit(lambda train: feats, np.full(10, "t"), folds)
    assert correct_fitted.sum() == 7  # the same numbers, sign-fitted
