"""From construction to a reviewed benchmark, offline: `foilbench construct composet` -> the
review app's units and overlays on its output -> decisions through the session API (no
browser) -> `foilbench review export` -> `foilbench inspect` and `foilbench run` on the export,
which carries the construction record and names it in the QC report."""

from __future__ import annotations

import json

from click.testing import CliRunner
from starlette.testclient import TestClient

from foilbench.cli.main import cli
from foilbench.data.format import load_benchmark
from foilbench.review.app import create_app, open_session


def invoke(*args: str):
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return res


def test_construct_review_export_inspect_run(tmp_path):
    cs, qc = tmp_path / "cs", tmp_path / "cs-qc"
    built = invoke("construct", "composet", "--n-scenes", "3", "--foils-per-scene", "8",
                   "--size", "64", "--min-foils", "0", "--out", str(cs), "--no-progress")
    assert f"foilbench review {cs}" in built.output
    items = load_benchmark(cs).items
    assert set(items["qc_status"]) == {"pending"}

    session = open_session(cs)
    units = session.units
    assert [s.key for s in units.scenes] == sorted(set(items["scene_id"]))
    for scene in units.scenes:  # phase 1 reviews the spec's base caption
        want = set(items.loc[items["scene_id"] == scene.key, "scene_caption"])
        assert set(scene.captions) == want
    assert len(units.instances) == items["foil_id"].nunique()
    assert all(list(i.captions) == ["short", "medium", "long"] and i.mask
               for i in units.instances)  # the world editor's exact edit masks
    with TestClient(create_app(session), base_url="http://127.0.0.1:8766") as client:
        key = units.instances[0].key
        view = client.get("/api/unit", params={"phase": "instance", "key": key}).json()
        for url in (view["drift_overlay"], view["mask_overlay"]):
            assert client.get(url).headers["content-type"] == "image/png"

    # phase 1: the last scene fails (its instances are invalidated); phase 2: one reject;
    # phase 3: one reject among the kept instances
    *good, bad = units.scenes
    for s in good:
        session.decide("base", s.key, "accept")
    session.decide("base", bad.key, "reject", ["objects_present"])
    live = [i for i in units.instances if i.scene != bad.key]
    session.decide("instance", live[0].key, "reject", ["count_preserved"])
    for inst in live[1:]:
        session.decide("instance", inst.key, "accept")
    session.decide("verbosity", live[1].key, "reject", ["medium_keeps_phrase"])
    for inst in live[2:]:
        session.decide("verbosity", inst.key, "accept")
    session.store.close()

    invoke("review", "export", str(cs), "--out", str(qc))
    exported = load_benchmark(qc)
    kept = {i.key for i in live[2:]}
    assert set(exported.items["foil_id"]) == kept and len(exported) == 3 * len(kept)
    assert set(exported.items["qc_status"]) == {"accepted"}
    for name in ("construction_log.jsonl", "construction.json", "survival.json", "survival.md"):
        assert (qc / name).read_bytes() == (cs / name).read_bytes()
    extras = exported.manifest.extras
    assert extras["construction"]["pipeline"] == "composet"
    assert extras["qc"]["instances_kept"] == len(kept)
    report = json.loads((qc / "qc_report.json").read_text())
    assert report["phases"]["instance"]["discard"]["k"] == 1
    assert report["phases"]["instance"]["discard"]["n"] == len(live)
    assert report["construction"]["backends"]["edit"] == "world"
    md = (qc / "qc_report.md").read_text()
    assert "## Construction" in md and "foilbench construct composet" in md
    assert "self-check (step 5)" in md and "`construction_log.jsonl`" in md

    res = invoke("inspect", str(qc))
    assert "valid: no problems found" in res.output
    invoke("run", "--model", "tiny-random", "--benchmark", str(qc), "--out",
           str(tmp_path / "runs"), "--n-boot", "100", "--quiet", "--no-report")


def test_construct_help_teaches_backends_spend_resume_and_examples():
    top = invoke("construct", "--help").output
    for needle in ("--text", "--image", "--edit", "--detector", "--vqa", "hf-lm:DIR",
                   "diffusers:DIR", "hf-det:DIR", "hf-vlm:DIR", "api:anthropic", "--max-spend",
                   "--dry-run", "Resume:", "OUT/.construct", "foilbench review OUT"):
        assert needle in top, needle
    roles = {"composet": ("--text", "--image", "--edit", "--detector"),
             "autocomp": ("--text", "--image", "--detector", "--vqa"),
             "sugarcrepe": ("--text",), "compass": ("--text",)}
    for name, wanted in roles.items():
        text = invoke("construct", name, "--help").output
        assert "Roles" in text and f"foilbench construct {name}" in text, name
        assert "resume" in text.lower() and "--dry-run" in text and "--max-spend" in text
        assert all(role in text for role in wanted), name
        assert " \\\n" in text  # multi-line examples keep their continuation backslashes
