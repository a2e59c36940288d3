"""Auto-Comp §5 / Table 8: the fine-tuned arms are scored on every (task, N, condition) cell
the benchmarks hold, not only the trained task's held-out concepts.

    "Table 8 reports the additional Confusion gain (Delta_C) of the Confusion variant over
    the Swap-only baseline. Gains are positive on every cell, largest on Shape-Color and
    persisting cross-axis to Position and Relative Size" (Auto-Comp §5).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

from foilbench.finetune.config import FinetuneConfig
from foilbench.finetune.data import Split, cell_role, evaluation_concepts
from foilbench.finetune.table8 import table8

sys.path.insert(0, str(Path(__file__).parent))


def test_evaluation_concepts_are_heldout_of_the_trained_cell_and_all_of_the_others():
    rows = [("color", 2, c) for c in ("c1", "c2", "c3", "c4", "c5")]
    rows += [("color", 3, c) for c in ("d1", "d2")] + [("position", 2, c) for c in ("p1",)]
    df = pd.DataFrame(rows, columns=["task", "n_objects", "concept_id"])
    split = Split(train=("c1", "c2", "c3"), val=("c4",), test=("c5",))
    got = evaluation_concepts(df, split, FinetuneConfig())
    assert got == ["c5", "d1", "d2", "p1"]


def test_cell_roles():
    cfg = FinetuneConfig()  # color, N = 2, minimal
    assert cell_role("color", 2, "minimal", cfg) == "trained"
    assert cell_role("color", 2, "contextual", cfg) == "other condition"
    assert cell_role("color", 3, "minimal", cfg) == "other N"
    assert cell_role("position", 2, "minimal", cfg) == "cross-axis"


def test_table8_layout_by_hand():
    def row(task, cond, comp, delta, role="cross-axis", nset="confusion"):
        return {"task": task, "n_objects": 2, "negative_set": nset, "condition": cond,
                "comparison": comp, "delta": delta, "ci_low": delta - 0.01,
                "ci_high": delta + 0.02, "role": role}

    dc = "Delta_C = confusion - swap"
    frame = table8([row("position", "minimal", dc, 0.05),
                    row("color", "contextual", dc, -0.1, role="other condition"),
                    row("color", "minimal", dc, 0.125, role="trained"),
                    row("color", "minimal", "swap - pretrained", 0.0, role="trained")])
    assert list(frame.columns) == ["N", "set", "comparison", "Color Min", "Color Ctx",
                                   "Position Min"]
    assert frame["comparison"].tolist() == ["swap - pretrained", dc]
    delta_c = frame.iloc[1]
    assert delta_c["Color Min"] == "+12.5 [+11.5, +14.5]*"
    assert delta_c["Color Ctx"] == "-10.0 [-11.0, -8.0]"
    assert delta_c["Position Min"] == "+5.0 [+4.0, +7.0]"
    assert frame.iloc[0]["Position Min"] == ""  # a cell that was not compared stays empty


@pytest.fixture(scope="module")
def color_and_position(tmp_path_factory):
    from foilbench.construct.autocomp.bench import build_autocomp
    from foilbench.data.format import write_benchmark

    root = tmp_path_factory.mktemp("ac2")
    benches = build_autocomp(root / "src", seed=0, n_concepts=10, size=32, ns=(2,),
                             tasks=("color", "position"), progress=False)
    return {op: write_benchmark(b, root / op) for op, b in benches.items()}


def test_finetune_scores_every_cell_with_delta_c(color_and_position, tmp_path):
    """The planted case: colour and position concepts; training on Color N = 2 Minimal must
    still print Position rows (every position concept, none trained on)."""
    import open_clip
    from click.testing import CliRunner
    from safetensors.torch import save_model

    from _models_tiny import write_openclip_config
    from foilbench.cli.main import cli

    config = write_openclip_config(tmp_path, "tiny-cells")
    open_clip.add_model_config(config)
    torch.manual_seed(0)
    start = tmp_path / "start.safetensors"
    save_model(open_clip.create_model("tiny-cells", pretrained=None), str(start))
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, [
        "finetune", "--model", f"openclip:{config}:{start}",
        "--benchmark", str(color_and_position["swap"]),
        "--benchmark", str(color_and_position["confusion"]), "--steps", "2", "--warmup", "1",
        "--lr", "1e-2", "--batch-size", "4", "--eval-every", "1", "--seeds", "0",
        "--out", str(out)])
    assert res.exit_code == 0, res.output
    record = json.loads((out / "finetune.json").read_text())
    pre = {(r["task"], r["negative_set"], r["condition"]): r for r in record["r1"]
           if r["model"] == "pretrained"}
    assert len(pre) == 8  # 2 tasks x 2 sets x 2 conditions
    for (task, _, cond), r in pre.items():
        assert r["n"] == (2 if task == "color" else 10)  # held out vs every concept
        assert r["role"] == ("cross-axis" if task == "position" else
                             "trained" if cond == "minimal" else "other condition")
    delta_c = [r for r in record["deltas"] if r["comparison"].startswith("Delta_C")]
    assert {(r["task"], r["negative_set"], r["condition"]) for r in delta_c} == set(pre)
    assert "Auto-Comp Table 8 layout" in res.output
    for col in ("Color Min", "Color Ctx", "Position Min", "Position Ctx"):
        assert col in res.output
    assert "cross-axis" in res.output and "]*" in res.output
