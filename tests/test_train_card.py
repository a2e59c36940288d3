"""The model card's score tables: sliced engine outcomes with intervals, written between the
card's markers without touching the prose around them."""

from __future__ import annotations

import numpy as np

from foilbench.construct.composet.pairs import build_pairs
from foilbench.models.tiny import build_tiny_random
from foilbench.train.card import BEGIN, END, card_tables, score_model, write_card


def test_score_model_slices_pairs_by_edit_type_at_the_short_tier(tmp_path):
    bench = build_pairs(tmp_path / "pairs", seed=3, n_scenes=2, foils_per_scene=15, size=48,
                        progress=False)
    scores = score_model(build_tiny_random(device="cpu"), [bench])
    items = bench.items
    short = items[items["tier"] == "short"]
    assert scores["world-pairs"]["group"]["n"] == len(items)
    assert scores["world-pairs/short"]["group"]["n"] == len(short)
    per_type = {k: v for k, v in scores.items() if k.count("/") == 1 and k != "world-pairs/short"}
    assert sum(v["group"]["n"] for v in per_type.values()) == len(short)
    for edit, v in per_type.items():
        g = v["group"]
        assert g["n"] == int((short["edit_type"] == edit.split("/")[1]).sum())
        assert g["ci_low"] <= g["value"] <= g["ci_high"]
        assert np.isclose(g["chance"], 1 / 6)


def _fake(value):
    s = {"value": value, "k": 1, "n": 10, "ci_low": value - 0.1, "ci_high": value + 0.1,
         "ci_method": "wilson", "chance": 1 / 6}
    return {"world-pairs": {"group": s, "i2t": s, "t2i": s},
            "world-pairs/short": {"group": s}, "world-pairs/modify_color": {"group": s},
            "autocomp-swap": {"r1": {**s, "chance": 1 / 3}},
            "autocomp-confusion": {"confusion": {**s, "metric": "r1_valid"}}}


def test_tables_and_markers(tmp_path):
    tables = card_tables({"m-a": _fake(0.5), "m-b": _fake(0.25)}, "0.1+abc")
    assert "| m-a | 50.0 [40.0, 60.0]" in tables and "| chance | 25.0 " not in tables
    assert "| modify_color | 10 | 50.0 [40.0, 60.0] | 25.0 [15.0, 35.0] |" in tables
    assert "scored by `r1_valid`" in tables and "n/a" in tables  # COMPASS absent here
    card = tmp_path / "MODEL_CARD.md"
    card.write_text("# Card\n\nprose before\n")
    write_card(card, "T1")
    write_card(card, "T2")  # replaces, does not append twice
    text = card.read_text()
    assert text.count(BEGIN) == 1 and "T2" in text and "T1" not in text
    assert text.startswith("# Card\n\nprose before") and text.rstrip().endswith(END)


def test_scale_block_reports_the_edit_share_and_the_pilot(tmp_path):
    """The card's object-scale block: App. F.1's fraction affected of the pair set (median and
    mean beside CompoSET's) and one pilot row per unit, as the pilot wrote them."""
    from foilbench.analysis.controls import audit_controls
    from foilbench.train.card import SCALE_BEGIN, SCALE_END, scale_tables

    bench = build_pairs(tmp_path / "pairs", seed=3, n_scenes=2, foils_per_scene=15, size=48,
                        progress=False)
    px = audit_controls(bench, minilm=False)["summary"]["pixels"]
    pilot = {"command": "bench/pilot_scale.py --units 0.1 0.2", "rows": [
        {"unit": 0.1, "scenes": 30, "twin_pairs": 10, "steps": 5, "final_loss": 4.1,
         "pairs_group_short": 3.0, "modify_color_short_group": 12.5, "autocomp-n1_r1": 20.0},
        {"unit": 0.2, "scenes": 30, "twin_pairs": 10, "steps": 5, "final_loss": 3.9,
         "pairs_group_short": 7.5, "modify_color_short_group": 25.0, "autocomp-n1_r1": 40.0}]}
    text = scale_tables(bench, pilot)
    from foilbench.train.card import mask_shares

    shares = mask_shares(bench)
    assert len(shares) == len(bench.items.drop_duplicates(["image_base", "image_foil"]))
    assert 0 < shares.min() and shares.max() < 1
    assert f"covers a median {100 * float(np.median(shares)):.1f}% of the image" in text
    assert f"median {100 * px['fraction_affected_median']:.1f}%" in text
    assert f"mean {100 * px['fraction_affected']:.1f}%" in text and "median 4.8%" in text
    assert "| 0.2 | 3.9 | 7.5 | 25.0 | n/a | n/a | n/a | 40.0 | n/a |" in text
    assert "5 steps on 30 scenes and 10 twin pairs" in text
    card = tmp_path / "MODEL_CARD.md"
    card.write_text("# Card\n")
    write_card(card, text, SCALE_BEGIN, SCALE_END, "Object scale")
    write_card(card, "T2", SCALE_BEGIN, SCALE_END, "Object scale")
    assert card.read_text().count(SCALE_BEGIN) == 1 and "T2" in card.read_text()
    assert "pilot" not in scale_tables(bench, None).lower()
