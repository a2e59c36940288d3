"""COMPASS analyses: integration gap by hand, skill-load OLS recovers planted coefficients."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from foilbench.analysis.compass import compass_tables, flatten_item_results, markdown_table
from foilbench.analysis.compass_gap import caption_outcomes, gap_table
from foilbench.analysis.compass_skill_load import ols_skill_load, skill_load, stars, table3
from foilbench.errors import FoilbenchError


def caption_items(cid, level, n_o, n_a, n_r, composed, decomposed, run="r"):
    base = {"run_id": run, "caption_id": cid, "level": level, "n_o": n_o, "n_a": n_a,
            "n_r": n_r, "n_primitives": n_o + n_a + n_r}
    rows = [{**base, "role": "composed", "r1": composed}]
    rows += [{**base, "role": "decomposed", "r1": d} for d in decomposed]
    return rows


def hand_items():
    return pd.DataFrame(
        caption_items("A", "L1", 2, 0, 0, 0.0, [1.0, 1.0])
        + caption_items("B", "L1", 2, 0, 0, 1.0, [1.0, 0.0])
        + caption_items("C", "L2-OA", 1, 2, 0, 1.0, [1.0, 1.0, 1.0])
        + caption_items("D", "L2-OA", 2, 2, 0, 0.0, [1.0, 0.5, 1.0, 1.0])
    )


def test_caption_outcomes_by_hand():
    per = caption_outcomes(hand_items()).set_index("caption_id")
    assert per.loc["A", ["composed", "decomposed", "gap"]].tolist() == [0.0, 1.0, 1.0]
    assert per.loc["B", ["composed", "decomposed", "gap"]].tolist() == [1.0, 0.0, -1.0]
    assert per.loc["C", "gap"] == 0.0
    assert per.loc["D", "decomposed"] == 0.5  # product of fractional outcomes


def test_gap_table_by_hand():
    t = gap_table(caption_outcomes(hand_items()))
    row = t[(t.level == "L1") & (t.N == "2")].iloc[0]
    assert (row.n_captions, row.composed, row.decomposed, row.gap) == (2, 0.5, 0.5, 0.0)
    assert row.gap_std == pytest.approx(np.sqrt(2.0))  # gaps +1 and -1, ddof = 1
    oa = t[t.level == "L2-OA"]
    assert oa.N.tolist() == ["3", "4", "all", "pooled"]
    assert np.isnan(oa.iloc[0].gap_std)  # one caption: no spread
    assert oa.iloc[2].gap == pytest.approx((0.0 + 0.5) / 2)  # mean over N = 3, 4
    assert oa.iloc[2].gap_std == pytest.approx(np.std([0.0, 0.5], ddof=1))  # across N


def test_ties_are_counted():
    items = hand_items()
    items["tie_r1"] = False
    items.loc[(items.caption_id == "A") & (items.role == "composed"), "tie_r1"] = True
    items.loc[(items.caption_id == "B") & (items.role == "decomposed"), "tie_r1"] = True
    t = gap_table(caption_outcomes(items))
    row = t[(t.level == "L1") & (t.N == "2")].iloc[0]
    assert (row.composed_ties, row.decomposed_ties) == (1, 2)
    assert t[t.level == "L2-OA"].composed_ties.sum() == 0


def test_incomplete_decomposed_items_are_refused():
    items = hand_items()
    items = items.drop(index=items.index[(items.caption_id == "C") & (items.role == "decomposed")][0])
    with pytest.raises(FoilbenchError, match="caption 'C': 2 decomposed items, expected 3"):
        caption_outcomes(items)
    kept = caption_outcomes(items, incomplete="drop")
    assert sorted(kept.caption_id) == ["A", "B", "D"]
    assert kept.attrs["dropped_incomplete"] == 1


def planted(rng, n, b, a, noise=0.05, binary=False):
    counts = pd.DataFrame({"n_o": rng.integers(1, 7, n), "n_a": rng.integers(0, 7, n),
                           "n_r": rng.integers(0, 6, n)})
    mean = a + b[0] * counts.n_o + b[1] * counts.n_a + b[2] * counts.n_r
    y = (rng.random(n) < mean).astype(float) if binary else mean + rng.normal(0, noise, n)
    return counts, np.asarray(y)


def test_ols_matches_normal_equations():
    rng = np.random.default_rng(0)
    counts, y = planted(rng, 200, (-0.05, -0.02, -0.03), 0.9)
    fit = ols_skill_load(y, counts).set_index("term")
    X = np.column_stack([counts.n_o, counts.n_a, counts.n_r, np.ones(len(y))]).astype(float)
    beta = np.linalg.solve(X.T @ X, X.T @ y)
    resid = y - X @ beta
    se = np.sqrt(np.diag(resid @ resid / (len(y) - 4) * np.linalg.inv(X.T @ X)))
    np.testing.assert_allclose(fit.loc[["b_O", "b_A", "b_R", "a"], "estimate"], beta, rtol=1e-9)
    np.testing.assert_allclose(fit.loc[["b_O", "b_A", "b_R", "a"], "se_classical"], se,
                               rtol=1e-9)
    # HC3: (X'X)^-1 X' diag(e_i^2 / (1 - h_i)^2) X (X'X)^-1
    inv = np.linalg.inv(X.T @ X)
    h = np.einsum("ij,jk,ik->i", X, inv, X)
    meat = X.T @ (X * (resid ** 2 / (1 - h) ** 2)[:, None])
    np.testing.assert_allclose(fit.loc[["b_O", "b_A", "b_R", "a"], "se_hc3"],
                               np.sqrt(np.diag(inv @ meat @ inv)), rtol=1e-9)


@pytest.mark.parametrize("binary", [False, True])
def test_planted_coefficients_recovered(binary):
    rng = np.random.default_rng(1)
    truth = {"b_O": -0.06, "b_A": 0.0, "b_R": -0.04, "a": 0.95}
    counts, y = planted(rng, 6000, (truth["b_O"], truth["b_A"], truth["b_R"]), truth["a"],
                        binary=binary)
    fit = ols_skill_load(y, counts).set_index("term")
    for term, value in truth.items():
        est, se = fit.loc[term, "estimate"], fit.loc[term, "se"]
        assert abs(est - value) < 4 * se, (term, est, se)
        assert se < (0.03 if binary else 0.01)
    assert fit.loc["b_O", "p"] < 1e-6 and fit.loc["b_R", "p"] < 1e-6
    assert fit.loc["b_A", "p"] > 1e-3  # planted zero is not "significant"


def test_skill_load_per_skill_and_level_with_constant_counts():
    rng = np.random.default_rng(2)
    frames = []
    for skill, b in {"O": (-0.05, -0.01, 0.0), "A": (-0.01, -0.06, 0.0)}.items():
        counts, y = planted(rng, 3000, b, 0.9)
        counts["n_r"] = 0  # an OA level: no relations, so b_R cannot be estimated
        frames.append(counts.assign(r1=y, skill=skill, level="L2-OA", role="skill"))
    long = skill_load(pd.concat(frames, ignore_index=True)).set_index(["skill", "term"])
    assert long.loc[("O", "b_O"), "estimate"] == pytest.approx(-0.05, abs=0.004)
    assert long.loc[("A", "b_A"), "estimate"] == pytest.approx(-0.06, abs=0.004)
    assert np.isnan(long.loc[("A", "b_R"), "estimate"])
    t3 = table3(long.reset_index().assign(level="L2-OA"))
    assert t3.columns.tolist() == ["level", "skill", "b_O", "b_A", "b_R", "a", "n", "R2",
                                   "se_type", "note"]
    assert t3.loc[t3.skill == "A", "note"].item() == \
        "no variance in n_r (always 0): not estimable (-)"
    assert t3.loc[t3.skill == "A", "b_R"].item() == "-"
    assert t3.loc[t3.skill == "A", "b_A"].item().startswith("-6.0")  # percentage points
    assert "**" in t3.loc[t3.skill == "A", "b_A"].item()


def test_stars():
    assert [stars(p) for p in (0.0005, 0.004, 0.005, 0.02, float("nan"))] == [
        "**", "*", "", "", ""]


def test_compass_tables_end_to_end_and_store_shapes():
    rng = np.random.default_rng(4)
    rows = []
    for k in range(40):
        n_o, n_a = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        rows += caption_items(f"c{k}", "L2-OA", n_o, n_a, 0, float(rng.random() < 0.5),
                              [float(rng.random() < 0.9) for _ in range(n_o + n_a)])
        for skill in ("O", "A"):
            rows.append({"run_id": "r", "caption_id": f"c{k}", "level": "L2-OA", "n_o": n_o,
                         "n_a": n_a, "n_r": 0, "n_primitives": n_o + n_a, "role": "skill",
                         "skill": skill, "r1": float(rng.random() < 0.7)})
    df = pd.DataFrame(rows)
    out = compass_tables(df)
    assert set(out) == {"per_caption", "gap", "table2", "skill_load", "table3", "table3_note",
                        "gap_markdown", "table2_markdown", "table3_markdown",
                        "dropped_incomplete", "dropped_k"}
    assert out["dropped_incomplete"] == 0
    assert len(out["per_caption"]) == 40
    assert out["table3"].skill.tolist() == ["O", "A"] or sorted(out["table3"].skill) == ["A", "O"]
    assert out["table3_markdown"].splitlines()[0].startswith("| run_id | level | skill | b_O")
    # The store's shape: item JSON + long metric/outcome columns gives the same tables.
    meta = df.drop(columns=["run_id", "r1"])
    store = pd.DataFrame({"run_id": df.run_id, "item": [json.dumps(r) for r in
                                                        meta.to_dict(orient="records")],
                          "metric": "r1", "outcome": df.r1})
    again = compass_tables(store)
    pd.testing.assert_frame_equal(again["gap"], out["gap"])
    with pytest.raises(FoilbenchError, match="no 'role' column"):
        compass_tables(pd.DataFrame({"r1": [1.0]}))
    with pytest.raises(FoilbenchError, match="need an 'r1' outcome"):
        flatten_item_results(pd.DataFrame({"x": [1]}))


def test_markdown_table():
    md = markdown_table(pd.DataFrame({"a": ["x|y"], "b": [0.12345], "c": [float("nan")]}))
    assert md == "| a | b | c |\n| --- | --- | --- |\n| x\\|y | 0.123 | - |\n"


@pytest.mark.parametrize("binary", [False, True])
def test_ols_equals_statsmodels(binary):
    """The numpy OLS (no statsmodels at run time) gives statsmodels' estimates, both standard
    errors, both p-values and R^2 (statsmodels is a test-only oracle)."""
    sm = pytest.importorskip("statsmodels.api", reason="statsmodels is the test oracle "
                             "(installed by the dev extra)")
    rng = np.random.default_rng(5)
    counts, y = planted(rng, 300, (-0.05, -0.02, -0.03), 0.9, binary=binary)
    fit = ols_skill_load(y, counts).set_index("term").loc[["b_O", "b_A", "b_R", "a"]]
    X = np.column_stack([counts.n_o, counts.n_a, counts.n_r, np.ones(len(y))]).astype(float)
    classical = sm.OLS(y, X).fit()
    robust = sm.OLS(y, X).fit(cov_type="HC3", use_t=True)
    np.testing.assert_allclose(fit["estimate"], classical.params, rtol=1e-9)
    np.testing.assert_allclose(fit["se_classical"], classical.bse, rtol=1e-9)
    np.testing.assert_allclose(fit["p_classical"], classical.pvalues, rtol=1e-7, atol=1e-300)
    np.testing.assert_allclose(fit["se_hc3"], robust.bse, rtol=1e-9)
    np.testing.assert_allclose(fit["p_hc3"], robust.pvalues, rtol=1e-7, atol=1e-300)
    assert fit["r2"].iloc[0] == pytest.approx(classical.rsquared, rel=1e-12)
