"""Notes instead of noise: near ties the engine settled without changing an outcome are a
note (show, report), not a console warning; a COMPASS skill-load fit that cannot say anything
(R@1 without variance, too few rows) says why instead of printing zeros, and an intercept
outside 0-100 is called an extrapolation."""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.analysis.compass_skill_load import ols_skill_load, table3
from foilbench.report.compass_view import table3_html
from foilbench.runner.notes import note_lines, warning_lines

NEAR = {"near_ties": {"group": 3, "i2t": 0}, "near_ties_settled": 3}


def test_settled_near_ties_that_changed_nothing_are_a_note_not_a_warning():
    quiet = {**NEAR, "near_ties_changed": {"group": 0}}
    [line] = note_lines(quiet)
    assert line.startswith("near ties: 3 group") and "outcomes changed: none" in line
    assert warning_lines(quiet) == []
    changed = {**NEAR, "near_ties_changed": {"group": 1}}
    assert warning_lines(changed) == note_lines(changed) != []
    unsettled = {"near_ties": {"group": 3}}  # not rescored: may go either way, still warned
    assert warning_lines(unsettled) == note_lines(unsettled) != []
    other = {**quiet, "interval_note": "scene_id is null for 2 of 9 items"}
    assert warning_lines(other) == ["scene_id is null for 2 of 9 items"]


def _counts(n_o):
    return pd.DataFrame({"n_o": n_o, "n_a": [0] * len(n_o), "n_r": [0] * len(n_o)})


def _long(fit, level="L1", skill="O"):
    return fit.assign(level=level, skill=skill)


def test_constant_outcome_is_not_fitted_and_says_why():
    fit = ols_skill_load(np.zeros(6), _counts([1, 1, 2, 2, 3, 3])).set_index("term")
    assert fit["estimate"].isna().all() and fit["r2"].isna().all()
    note = fit["note"].iloc[0]
    assert note.startswith("not fitted: no variance in R@1") and "6 item(s) wrong" in note
    row = table3(_long(fit.reset_index())).iloc[0]
    assert [row[t] for t in ("b_O", "b_A", "b_R", "a")] == ["-"] * 4  # no zeros printed
    assert row["note"] == note
    right = ols_skill_load(np.ones(4), _counts([1, 2, 3, 4]))
    assert "every one of the 4 item(s) right" in right["note"].iloc[0]


def test_too_few_rows_is_not_fitted_and_says_why():
    fit = ols_skill_load(np.array([1.0, 0.0]), _counts([1, 2]))
    assert fit["estimate"].isna().all()
    assert fit["note"].iloc[0] == ("not fitted: too few rows (2 item(s) for 2 term(s); a fit "
                                   "needs more rows than terms)")


def test_intercept_outside_0_100_is_called_an_extrapolation():
    """n_O 3, 3, 4, 4, 5, 5 with R@1 1, 1, 1, 0, 0, 0: OLS slope -0.5 per object, intercept
    2.5 (250 points at n_O = 0, which never occurs)."""
    fit = ols_skill_load(np.array([1, 1, 1, 0, 0, 0.0]), _counts([3, 3, 4, 4, 5, 5]))
    est = fit.set_index("term")["estimate"]
    assert est["b_O"] == np.float64(-0.5) or abs(est["b_O"] + 0.5) < 1e-12
    assert abs(est["a"] - 2.5) < 1e-12
    note = fit["note"].iloc[0]
    assert "no variance in n_a (always 0), n_r (always 0): not estimable (-)" in note
    assert "intercept 250.0 pts lies outside 0-100" in note and "(n_o >= 3)" in note
    counts = pd.DataFrame({"n_o": [1, 2, 3, 1, 2, 3, 2], "n_a": [0, 1, 0, 1, 0, 1, 1],
                           "n_r": [1, 0, 1, 1, 0, 0, 1]})
    y = 0.9 - 0.1 * counts["n_o"] - 0.05 * counts["n_a"] + [0.01, -0.01, 0, 0, 0.01, -0.01, 0]
    inside = ols_skill_load(y.to_numpy(), counts)
    assert 0 <= inside.set_index("term").loc["a", "estimate"] <= 1
    assert inside["note"].iloc[0] == ""


def test_report_table3_lists_the_notes():
    fit = ols_skill_load(np.zeros(6), _counts([1, 1, 2, 2, 3, 3]))
    rows = table3(_long(fit)).to_dict(orient="records")
    html = table3_html({"model-x": {"skill_load": rows}})
    assert "L1 · model-x · Object negatives: not fitted: no variance in R@1" in html
