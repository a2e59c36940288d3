"""``audit``, ``analyze``, ``compass`` and ``construct`` print a benchmark's strings escaped
(issue 42): their tables and titles hold names, edit types, tiers, skills, captions and a
provider's words, and none of the benchmark's ESC, bidi or NUL bytes may reach the output.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from _core_helpers import write_folder
from _faults_cli import foilbench, no_traceback
from _hostile import HOSTILE_EDIT, HOSTILE_NAME, hostile_bytes, hostile_folder

CLEAN = dict.fromkeys(hostile_bytes(""), 0)


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")


def clean(result: tuple[int, str, str], what: str) -> str:
    code, out, err = result
    no_traceback(err)
    assert code == 0, (what, err)
    assert hostile_bytes(out + err) == CLEAN, what
    return out + err


def test_audit_blind_escapes_names_edit_types(tmp_path, capsys):
    rows = []
    for i in range(8):
        pos = f"a dog {i} on a mat"
        rows.append({"item_id": f"add/{i}", "image": f"img{i}.jpg",
                     "edit_type": "add" + HOSTILE_EDIT,
                     "captions": [pos, f"a big dog {i} on a red mat{HOSTILE_EDIT}"]})
        rows.append({"item_id": f"swap/{i}", "image": f"img{i}.jpg",
                     "edit_type": "swap" + HOSTILE_EDIT, "captions": [pos, f"a mat {i} on a dog"]})
    root = write_folder(tmp_path / "choice", "choice", pd.DataFrame(rows))
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**manifest, "name": HOSTILE_NAME}))
    said = clean(foilbench(capsys, "audit", "blind", str(root), "--scorer", "length",
                           "--scorer", "ngram", "--folds", "2"), "audit blind")
    assert "\\x1b]0;PWNED" in said and "add\\x1b[2J" in said  # shown, as visible escapes


def test_analyze_escapes_edit_types_and_tiers(tmp_path, capsys):
    root = hostile_folder(tmp_path / "b")
    out_dir = tmp_path / "out"
    clean(foilbench(capsys, "run", "--model", "tiny-random", "--benchmark", str(root),
                    "--out", str(out_dir), "--no-report", "--no-cache", "--quiet"), "run")
    db = str(out_dir / "foilbench.duckdb")
    run_id = json.loads(foilbench(capsys, "show", "--db", db, "--json")[1])[0]["run_id"]
    said = clean(foilbench(capsys, "analyze", "breakdown", run_id, "--db", db, "--by",
                           "edit_type", "--n-boot", "50"), "analyze breakdown")
    assert "\\x1b[2J" in said
    said = clean(foilbench(capsys, "analyze", "hardness", run_id, "--db", db),
                 "analyze hardness")
    assert "=== tier: \\x1b[2J" in said
    said = clean(foilbench(capsys, "sweep", "--model", "tiny-random", "--benchmark", str(root),
                           "--out", str(out_dir), "--quiet"), "sweep")
    assert "\\x1b]0;PWNED" in said  # the matrix's column, escaped


def test_compass_tables_escape_skill_names(tmp_path, capsys):
    from foilbench.construct.compass.build import build_compass_benchmark
    from foilbench.models.base import ModelInfo
    from foilbench.scoring.protocols import choice_chance, choice_outcomes, choice_ties, pad_ragged
    from foilbench.scoring.result import EvalResult
    from foilbench.store.db import ResultsStore

    bench = build_compass_benchmark(tmp_path / "b", seed=1, n_scenes=8, size=48)
    bench.items["skill"] = bench.items["skill"].map(
        lambda s: s + HOSTILE_EDIT if isinstance(s, str) and s else s)
    rng = np.random.default_rng(0)
    scores = [np.concatenate([[0.6], rng.uniform(0, 0.7, len(c) - 1)])
              for c in bench.items.captions]
    padded = pad_ragged(scores)
    result = EvalResult(
        benchmark=bench, model=ModelInfo(HOSTILE_NAME, "toy-fp", "dual", "cosine"),
        scores=scores, outcomes={"r1": choice_outcomes(padded).astype(float)},
        ties={"r1": choice_ties(padded)},
        chance={"r1": choice_chance(np.array([len(s) for s in scores]))})
    metrics = pd.DataFrame([{"metric": "r1", "group_by": "", "group_value": "", "value": 0.5,
                             "k": 1.0, "n": len(scores), "ci_low": 0.4, "ci_high": 0.6,
                             "ci_method": "wilson", "chance": 0.2, "ties": 0}])
    db = tmp_path / "runs.duckdb"
    with ResultsStore(db) as store:
        run_id = store.write_run(result, metrics, {
            "created": datetime.now(timezone.utc).isoformat(), "seed": 0})
    said = clean(foilbench(capsys, "compass", "tables", run_id, "--db", str(db)),
                 "compass tables")
    assert "\\x1b[2J" in said


def test_compass_build_escapes_scene_graph_names(tmp_path, capsys):
    evil = "\x1b[2J\u202e\x00"
    records = [
        {"image_id": 1, "objects": [
            {"object_id": 1, "names": [f"sofa{evil}"], "attributes": [f"brown{evil}"]},
            {"object_id": 2, "names": ["room"], "attributes": ["bright"]}],
         "relationships": [{"relationship_id": 1, "subject_id": 1, "predicate": f"in{evil}",
                            "object_id": 2}]},
        {"image_id": 2, "objects": [
            {"object_id": 5, "names": ["dog"], "attributes": ["white"]},
            {"object_id": 6, "names": [f"grass{evil}"], "attributes": ["green"]}],
         "relationships": [{"relationship_id": 3, "subject_id": 5, "predicate": "on",
                            "object_id": 6}]},
    ]
    sg = tmp_path / "scene_graphs.json"
    sg.write_text(json.dumps(records))
    (tmp_path / "imgs").mkdir()
    for k in (1, 2):
        Image.new("RGB", (8, 8), (k * 60, 0, 0)).save(tmp_path / "imgs" / f"{k}.jpg")
    clean(foilbench(capsys, "compass", "build", "--scene-graphs", str(sg), "--images",
                    str(tmp_path / "imgs"), "--out", str(tmp_path / "vg")), "compass build")


def test_construct_prints_a_providers_words_escaped(tmp_path, capsys):
    from foilbench.cli.construct_run import echo_drop_causes
    from foilbench.construct.engine.ledger import SpendLedger

    echo_drop_causes([{"stage": "verify" + HOSTILE_EDIT, "reason": HOSTILE_NAME, "n": 2,
                       "examples": [HOSTILE_EDIT + " the model said so"]}])
    got = capsys.readouterr()
    assert hostile_bytes(got.out + got.err) == CLEAN
    assert "\\x1b]0;PWNED" in got.out and "the model said so" in got.out

    SpendLedger(tmp_path / "c", cap=5.0).reserve(0.01, "openai gen " + HOSTILE_NAME)
    said = clean(foilbench(capsys, "construct", "spend", str(tmp_path / "c")),
                 "construct spend")
    assert "\\x1b]0;PWNED" in said
