"""`foilbench compass` build-synth / build / tables, on tiny inputs."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pandas as pd
from click.testing import CliRunner
from PIL import Image

from foilbench.cli.compass_cmd import compass
from foilbench.data.format import load_benchmark


def test_build_synth_writes_a_valid_choice_benchmark(tmp_path):
    out = tmp_path / "synth"
    res = CliRunner().invoke(compass, ["build-synth", "--out", str(out), "--n-scenes", "3",
                                       "--size", "64", "--seed", "5"])
    assert res.exit_code == 0, res.output
    bench = load_benchmark(out)
    assert bench.kind == "choice" and bench.manifest.extras["realiser"] == "template"
    assert set(bench.items.role) == {"composed", "decomposed", "skill"}
    graphs = json.loads((out / "scene_graphs.json").read_text())
    assert len(graphs) == 3 and all(g["closed_world"] for g in graphs)
    assert "wrote" in res.output


def test_build_from_vg_files(tmp_path):
    records = [
        {"image_id": 1, "objects": [
            {"object_id": 1, "names": ["sofa"], "attributes": ["brown"]},
            {"object_id": 2, "names": ["room"], "attributes": ["bright"]},
            {"object_id": 3, "names": ["lamp"], "attributes": ["tall"]}],
         "relationships": [{"relationship_id": 1, "subject_id": 1, "predicate": "in",
                            "object_id": 2},
                           {"relationship_id": 2, "subject_id": 3, "predicate": "next to",
                            "object_id": 1}]},
        {"image_id": 2, "objects": [
            {"object_id": 5, "names": ["dog"], "attributes": ["white"]},
            {"object_id": 6, "names": ["grass"], "attributes": ["green"]}],
         "relationships": [{"relationship_id": 3, "subject_id": 5, "predicate": "on",
                            "object_id": 6}]},
        {"image_id": 3, "objects": [{"object_id": 9, "names": ["car"]}], "relationships": []},
    ]
    sg = tmp_path / "scene_graphs.json"
    sg.write_text(json.dumps(records))
    images = tmp_path / "imgs"
    images.mkdir()
    for k in (1, 2):  # image 3 is missing on purpose
        Image.new("RGB", (8, 8), (k * 60, 0, 0)).save(images / f"{k}.jpg")
    out = tmp_path / "vg"
    res = CliRunner().invoke(compass, ["build", "--scene-graphs", str(sg), "--images",
                                       str(images), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "used: 2, skipped (no image found): 1" in res.output
    items = load_benchmark(out).items
    assert set(items.scene_id) == {"1", "2"}
    # Replacements come from other images of the file and are absent from this one.
    dec = items[items.role == "decomposed"]
    for row in dec.itertuples():
        old, new = row.perturbation.split(" -> ")
        present = {"1": {"sofa", "room", "lamp", "brown", "bright", "tall", "in", "next to"},
                   "2": {"dog", "grass", "white", "green", "on"}}[row.scene_id]
        assert old in present and new not in present


def test_tables_reads_a_stored_run(tmp_path):
    from foilbench.construct.compass.build import build_compass_benchmark
    from foilbench.models.base import ModelInfo
    from foilbench.scoring.protocols import choice_chance, choice_outcomes, choice_ties, pad_ragged
    from foilbench.scoring.result import EvalResult
    from foilbench.store.db import ResultsStore

    bench = build_compass_benchmark(tmp_path / "b", seed=1, n_scenes=8, size=48)
    rng = np.random.default_rng(0)
    # A toy scorer: the positive wins unless a random negative draws higher.
    scores = [np.concatenate([[0.6], rng.uniform(0, 0.7, len(c) - 1)])
              for c in bench.items.captions]
    padded = pad_ragged(scores)
    result = EvalResult(
        benchmark=bench, model=ModelInfo("toy", "toy-fp", "dual", "cosine"), scores=scores,
        outcomes={"r1": choice_outcomes(padded).astype(float)},
        ties={"r1": choice_ties(padded)},
        chance={"r1": choice_chance(np.array([len(s) for s in scores]))})
    metrics = pd.DataFrame([{"metric": "r1", "group_by": "", "group_value": "", "value": 0.5,
                             "k": 1.0, "n": len(scores), "ci_low": 0.4, "ci_high": 0.6,
                             "ci_method": "wilson", "chance": 0.2, "ties": 0}])
    db = tmp_path / "runs.duckdb"
    with ResultsStore(db) as store:
        run_id = store.write_run(result, metrics, {
            "created": datetime.now(timezone.utc).isoformat(), "seed": 0})
    res = CliRunner().invoke(compass, ["tables", run_id, "--db", str(db), "--out",
                                       str(tmp_path / "t")])
    assert res.exit_code == 0, res.output
    assert "## Integration gap" in res.output and "| run_id | level | skill | b_O" in res.output
    gap = pd.read_csv(tmp_path / "t" / "gap.csv")
    assert set(gap.level) == {"L1", "L2-OA", "L2-OR", "L3-OAR"}
    assert ((gap.gap >= -1) & (gap.gap <= 1)).all()
