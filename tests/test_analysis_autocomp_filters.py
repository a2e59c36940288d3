"""Auto-Comp Tables 3/4/16 (survival by condition, filter shift) and Table 15 (per-relation
accuracy) on planted logs and runs with hand-computed answers."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from foilbench.analysis.autocomp_filters import filter_shift, read_records, survival_by_condition
from foilbench.analysis.autocomp_relations import per_relation_accuracy

STAGES = ("object presence [{c}]", "background check [{c}]", "attribute check [{c}]")


def _log(concepts: dict[str, tuple[list, list]], drops: dict[str, str]) -> list[dict]:
    """Concepts (objects, values) of task color; each expanded into two tracks; ``drops``
    maps a track to the stage that dropped it (else kept)."""
    recs = []
    for cid, (objs, vals) in concepts.items():
        recs.append({"event": "created", "kind": "concept", "item": cid, "stage": "concepts",
                     "inputs": {"task": "color", "objects": objs, "values": vals}})
    for cid in concepts:
        for c in ("minimal", "contextual"):
            recs.append({"event": "created", "kind": "track", "item": f"{cid}-{c}",
                         "parent": cid, "stage": "split tracks"})
    for c in ("minimal", "contextual"):
        for stage in STAGES:
            if "background" in stage and c == "contextual":
                continue
            name = stage.format(c=c)
            recs.append({"item": "x", "stage": name})  # stage order by first appearance
            for cid in concepts:
                if drops.get(f"{cid}-{c}") == name:
                    recs.append({"event": "outcome", "kind": "track", "item": f"{cid}-{c}",
                                 "outcome": "dropped", "stage": name, "reason": "r"})
    for cid in concepts:
        for c in ("minimal", "contextual"):
            if f"{cid}-{c}" not in drops:
                recs.append({"event": "outcome", "kind": "track", "item": f"{cid}-{c}",
                             "outcome": "kept", "stage": "export"})
    return recs


CONCEPTS = {"a": (["cube", "ball"], ["red", "blue"]), "b": (["cube", "mug"], ["red", "green"]),
            "c": (["ball", "mug"], ["blue", "green"]), "d": (["cube", "ball"], ["red", "red"])}
DROPS = {"a-minimal": "object presence [minimal]", "b-minimal": "background check [minimal]",
         "c-contextual": "attribute check [contextual]"}


def test_survival_by_condition_by_hand():
    out = survival_by_condition(_log(CONCEPTS, DROPS)).set_index("stage")
    # minimal: 4 in, a dropped -> 3/4; background: 3 in, b dropped -> 2/3; attribute 2/2
    assert (out.loc["object presence", "minimal_in"], out.loc["object presence",
                                                               "minimal_out"]) == (4, 3)
    assert out.loc["background check", "minimal_survival"] == pytest.approx(2 / 3)
    assert out.loc["attribute check", "minimal_survival"] == 1.0
    # contextual: object presence 4/4, attribute check 3/4 (c dropped); no background stage
    assert out.loc["attribute check", "contextual_survival"] == 0.75
    assert out.loc["attribute check", "shift"] == pytest.approx(0.75 - 1.0)
    assert pd.isna(out.loc["background check", "shift"])


def test_filter_shift_by_hand():
    out = filter_shift(_log(CONCEPTS, DROPS)).set_index("condition")
    # target labels over the 4 concepts: red 4, blue 2, green 2 (of 8): .5 .25 .25
    # minimal kept: c, d -> blue, green, red, red: .5 .25 .25 -> TV 0
    assert out.loc["minimal", "label_tv"] == pytest.approx(0.0)
    assert out.loc["minimal", "label_within_0.5_1.5"] == 1.0
    # contextual kept: a, b, d -> red, blue, red, green, red, red: 4/6 1/6 1/6
    # TV = (|4/6 - 1/2| + |1/6 - 1/4| * 2) / 2 = (1/6 + 1/6) / 2 = 1/6
    assert out.loc["contextual", "label_tv"] == pytest.approx(1 / 6)
    # ratios: red 4/3, blue 2/3, green 2/3: all within [0.5, 1.5]
    assert out.loc["contextual", "label_within_0.5_1.5"] == 1.0
    # objects, target: cube 3, ball 3, mug 2 (of 8); minimal kept c, d: ball 2, mug 1, cube 1
    # (of 4): TV = (|1/4 - 3/8| + |1/2 - 3/8| + |1/4 - 1/4|) / 2 = 1/8
    assert out.loc["minimal", "object_tv"] == pytest.approx(1 / 8)
    assert out.loc["mean", "label_tv"] == pytest.approx((0 + 1 / 6) / 2)
    # a label never kept has ratio 0 < 0.25
    gone = filter_shift(_log(CONCEPTS, {**DROPS, "d-minimal": "object presence [minimal]"}))
    row = gone.set_index("condition").loc["minimal"]  # kept: c only -> blue, green; red 0
    assert row["label_below_0.25"] == pytest.approx(1 / 3)
    none = {f"{c}-contextual": "attribute check [contextual]" for c in CONCEPTS}
    row = filter_shift(_log(CONCEPTS, {**DROPS, **none})).set_index("condition")
    assert pd.isna(row.loc["contextual", "label_tv"])  # nothing kept: no distribution
    assert row.loc["mean", "label_tv"] == pytest.approx(0.0)  # the minimal track alone
    with pytest.raises(ValueError, match="target"):
        filter_shift(_log(CONCEPTS, DROPS), target="prior")


def test_read_records_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no construction log"):
        read_records(tmp_path)
    (tmp_path / "construction_log.jsonl").write_text('{"a": 1}\nnot json\n')
    with pytest.raises(ValueError, match="construction_log.jsonl:2"):
        read_records(tmp_path)
    (tmp_path / "construction_log.jsonl").write_text(json.dumps({"a": 1}) + "\n")
    with pytest.raises(ValueError, match="no Auto-Comp concepts"):
        survival_by_condition(read_records(tmp_path))


def test_per_relation_accuracy_by_hand():
    df = pd.DataFrame({
        "model": ["m"] * 5, "task": ["position"] * 5, "n_objects": [2] * 5,
        "negative_set": ["swap"] * 4 + ["confusion"],
        "values": [["above"], ["above"], ["under"], ["above"], ["under"]],
        "r1": [1, 0, 1, 1, 0]})
    out = per_relation_accuracy(df).set_index("relation")
    assert out.loc["above", "n"] == 3 and out.loc["above", "accuracy"] == pytest.approx(2 / 3)
    assert out.loc["under", "n"] == 1 and out.loc["under", "accuracy"] == 1.0  # swap only
    with pytest.raises(ValueError, match="no swap item of task 'color'"):
        per_relation_accuracy(df, task="color")
