"""The README's score table is generated, not typed: it equals what
``python -m foilbench.runner.readme`` writes from ``weights/card-scores.json``, and those scores
are what the shipped weights score now (re-scored here on two suite parts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foilbench.runner.readme import readme_block, readme_table, scores_path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_table_is_the_generated_one():
    scores = json.loads(scores_path().read_text())
    assert readme_block(README) == readme_table(scores), (
        "README.md's score table is stale: run `python -m foilbench.runner.readme README.md`")


@pytest.mark.parametrize("part", ["autocomp-n1"])
def test_card_scores_match_the_shipped_weights(part, tmp_path):
    """Rebuild one suite part (a few seconds) and score the shipped models on it: value, k, n
    and interval equal card-scores.json's (same seed, same B, same interval rule)."""
    from foilbench.construct.autocomp.n1 import build
    from foilbench.construct.suite import PARTS
    from foilbench.models.embedded import VARIANTS, load_variant, model_name
    from foilbench.train.card import score_model

    defaults = next(p.defaults for p in PARTS if p.name == part)
    [bench] = build(tmp_path, seed=0, progress=False, **defaults)
    card = json.loads(scores_path().read_text())
    from foilbench.evaluation import evaluate_run

    for variant in VARIANTS:
        adapter = load_variant(variant, device="cpu")
        got = score_model(adapter, [bench])[part]
        want = card[model_name(variant)][part]
        # and what `foilbench run` stores and prints for the same cell (same B, seed, rule)
        run = evaluate_run(adapter, bench, progress=False).metrics
        row = run[(run["metric"] == "r1") & (run["group_by"] == "")].iloc[0]
        assert (row["value"], row["ci_low"], row["ci_high"], row["ci_method"]) == (
            pytest.approx(want["r1"]["value"]), pytest.approx(want["r1"]["ci_low"]),
            pytest.approx(want["r1"]["ci_high"]), want["r1"]["ci_method"])
        for metric, row in want.items():
            for key in ("value", "k", "n", "ci_low", "ci_high", "ci_method"):
                assert got[metric][key] == pytest.approx(row[key]) if key != "ci_method" \
                    else got[metric][key] == row[key], (variant, metric, key)
