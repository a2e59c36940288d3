"""The Table-8 matrix: formatting of hand-made cells into CSV, Markdown and LaTeX."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from foilbench.analysis import matrix


def _cells() -> pd.DataFrame:
    return pd.DataFrame([
        {"model": "m_a", "benchmark": "wino", "metric": "group", "value": 0.125,
         "ci_low": 0.0921, "ci_high": 0.16, "n": 400, "partial": False, "run_id": "r1"},
        {"model": "m_a", "benchmark": "sugar_crepe", "metric": "r1", "value": 0.8,
         "ci_low": 0.79, "ci_high": 0.81, "n": 7511, "partial": True, "run_id": "r2"},
        {"model": "m|b", "benchmark": "wino", "metric": "group", "value": 0.0,
         "ci_low": 0.0, "ci_high": 0.0095, "n": 400, "partial": False, "run_id": "r3"},
    ])


def test_format_cell_percent_one_decimal_and_missing():
    assert matrix.format_cell(0.125, 0.0921, 0.16) == "12.5 [9.2, 16.0]"
    assert matrix.format_cell(1.0, 0.99, 1.0, digits=0) == "100 [99, 100]"
    assert matrix.format_cell(float("nan"), 0, 0) == matrix.MISSING


def test_wide_text_orders_rows_and_columns_and_fills_missing():
    wide = matrix.wide_text(_cells(), models=["m|b", "m_a"], interval="stored")
    assert wide.index.tolist() == ["m|b", "m_a"]
    assert wide.columns.tolist() == ["wino (group)", "sugar_crepe\u2020 (r1)"]
    assert wide.loc["m_a", "sugar_crepe\u2020 (r1)"] == "80.0 [79.0, 81.0]"
    assert wide.loc["m|b", "sugar_crepe\u2020 (r1)"] == matrix.MISSING


def test_markdown_escapes_pipes_and_notes_partial():
    md = matrix.to_markdown(_cells(), interval="stored")
    lines = md.splitlines()
    assert lines[0] == "| model | wino (group) | sugar_crepe\u2020 (r1) |"
    assert lines[1] == "| --- | ---: | ---: |"
    assert lines[2] == "| m_a | 12.5 [9.2, 16.0] | 80.0 [79.0, 81.0] |"
    assert lines[3] == "| m\\|b | 0.0 [0.0, 0.9] | \u2014 |"
    assert any(line.startswith("\u2020 partial benchmark") for line in lines)


def test_markdown_without_partial_has_no_footnote():
    cells = _cells()
    cells["partial"] = False
    assert "partial benchmark" not in matrix.to_markdown(cells)


def test_latex_escapes_and_marks_partial():
    tex = matrix.to_latex(_cells(), interval="stored")
    assert r"\begin{tabular}{lcc}" in tex
    assert r"Model & wino (group) & sugar\_crepe$^\dagger$ (r1) \\" in tex
    assert r"m\_a & 12.5 {\scriptsize[9.2, 16.0]} & 80.0 {\scriptsize[79.0, 81.0]} \\" in tex
    assert r"m|b & 0.0 {\scriptsize[0.0, 0.9]} & --- \\" in tex
    assert r"$^\dagger$ partial benchmark" in tex


def test_csv_round_trips_full_precision():
    back = pd.read_csv(io.StringIO(matrix.to_csv(_cells())))
    assert back.columns.tolist() == [*matrix.CELL_COLUMNS, "wald_low", "wald_high"]
    assert np.isclose(back.loc[0, "ci_low"], 0.0921)
    assert back["partial"].tolist() == [False, True, False]


def test_bad_cells_are_refused():
    with pytest.raises(ValueError, match="need column"):
        matrix.to_csv(_cells().drop(columns=["ci_low"]))
    dup = pd.concat([_cells(), _cells().iloc[[0]]])
    with pytest.raises(ValueError, match="more than one row for model 'm_a' on benchmark 'wino'"):
        matrix.to_markdown(dup)


def test_cell_from_metrics_takes_the_overall_row():
    metrics = pd.DataFrame([
        {"metric": "group", "group_by": "tier", "group_value": "short", "value": 0.9,
         "ci_low": 0.8, "ci_high": 1.0, "n": 10},
        {"metric": "group", "group_by": "", "group_value": "", "value": 0.5,
         "ci_low": 0.4, "ci_high": 0.6, "n": 30},
        {"metric": "i2t", "group_by": "", "group_value": "", "value": 0.7,
         "ci_low": 0.6, "ci_high": 0.8, "n": 30},
    ])
    assert matrix.cell_from_metrics(metrics, "group") == {
        "metric": "group", "value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 30,
        "unit": None}  # a table stored before units were recorded
    with pytest.raises(ValueError, match="no overall 'r1' row"):
        matrix.cell_from_metrics(metrics, "r1")


def test_matrix_prints_wald_as_table8_and_keeps_the_stored_interval():
    """CompoSET Table 8: "Each cell reports point estimate (%) with 95% Wald confidence
    interval [lo, hi] (§C)"; §C: "p +- 1.96 sqrt(p(1 - p)/n), clamped to [0, 1]".
    wino m_a: p = 0.125, n = 400: 1.96 sqrt(0.125 x 0.875 / 400) = 0.0324 -> [9.3, 15.7];
    m|b: p = 0 -> [0.0, 0.0]; sugar_crepe: p = 0.8, n = 7511: 0.0090 -> [79.1, 80.9]."""
    md = matrix.to_markdown(_cells()).splitlines()
    assert md[2] == "| m_a | 12.5 [9.3, 15.7] | 80.0 [79.1, 80.9] |"
    assert md[3] == "| m\\|b | 0.0 [0.0, 0.0] | \u2014 |"
    assert "95% Wald interval (CompoSET Table 8)" in md[-2] or any(
        "Wald interval (CompoSET Table 8)" in line for line in md)
    assert r"12.5 {\scriptsize[9.3, 15.7]}" in matrix.to_latex(_cells())
    back = pd.read_csv(io.StringIO(matrix.to_csv(_cells())))
    assert back.loc[0, "wald_low"] == pytest.approx(0.125 - 1.96 * np.sqrt(0.125 * 0.875 / 400))
    assert back.loc[0, "ci_low"] == pytest.approx(0.0921)  # the stored interval, beside it
    assert matrix.wald_bounds(0.5, 100) == (0.402, 0.598)


def _composet(unit: str, n: int) -> pd.DataFrame:
    return pd.DataFrame([{"model": "siglip2", "benchmark": "composet", "metric": "group",
                          "value": 0.1393, "ci_low": 0.124, "ci_high": 0.155, "n": n,
                          "partial": False, "run_id": "r", "unit": unit}])


def test_wald_label_follows_the_unit():
    """CompoSET §5: "13.9% (SigLIP-2 SO400M/14, 95% CI [12.3,15.5]; ... n=1,776)" is Wald per
    instance; Table 8's cell for the same model is Wald at the pooled n = 5,328,
    [13.0, 14.9] (p = 0.1393 here, as the printed 13.9 rounds it). A per-instance matrix
    must not be labelled as Table 8's."""
    per_instance = matrix.to_markdown(_composet("instance", 1776))
    assert "13.9 [12.3, 15.5]" in per_instance
    assert "(CompoSET Table 8)" not in per_instance
    assert "95% Wald interval at each cell's n" in per_instance
    assert "--unit pooled" in per_instance
    pooled = matrix.to_markdown(_composet("pooled", 5328))
    assert "13.9 [13.0, 14.9]" in pooled and "95% Wald interval (CompoSET Table 8)" in pooled
    assert "not Table 8's pooled n" in matrix.to_latex(_composet("instance", 1776))
    assert "not Table 8" not in matrix.to_latex(_composet("pooled", 5328))
