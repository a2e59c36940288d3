"""CompoSET §3's scene floor re-applied at export: "each scene contributes at least 15 foils".

The construction drops short scenes before human review; Phase 2 then discards foils (22.4%
in App. B.4), which can leave a scene below the floor. Planted on the review fixture: after
review s0 keeps 2 foils and s1 keeps 3; at a floor of 3, s0 is left out whole and counted.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from _review_fixtures import write_review_bench
from foilbench.data.format import load_benchmark
from foilbench.review.app import open_session
from foilbench.review.export import export_review
from foilbench.review.units import ReviewError


@pytest.fixture()
def reviewed(tmp_path):
    path = write_review_bench(tmp_path / "bench")
    s = open_session(path)
    for scene in ("s0", "s1"):
        s.decide("base", scene, "accept")
    s.decide("base", "s2", "reject", ["image_clean"])
    for key in ("s0-f00", "s0-f01", "s0-f02", "s1-f00", "s1-f01", "s1-f02", "s1-f03"):
        failed = ["count_preserved"] if key in ("s0-f01", "s1-f03") else []
        s.decide("instance", key, "reject" if failed else "accept", failed)
    for key in ("s0-f00", "s0-f02", "s1-f00", "s1-f01", "s1-f02"):
        s.decide("verbosity", key, "accept")
    s.store.close()
    return path  # kept: s0 f00, f02 (2); s1 f00, f01, f02 (3)


def test_floor_leaves_out_scenes_below_it_and_counts_them(reviewed, tmp_path):
    s = open_session(reviewed)
    report = export_review(s, tmp_path / "out", min_foils=3)
    s.store.close()
    out = load_benchmark(tmp_path / "out")
    assert sorted(out.items["foil_id"].unique()) == ["s1-f00", "s1-f01", "s1-f02"]
    assert report["scene_floor"] == {"min_foils": 3, "scenes_kept": 1,
                                     "scenes_below_floor": 1, "instances_dropped": 2,
                                     "below_floor": {"s0": 2}, "source": "option"}
    assert out.manifest.extras["qc"]["scene_floor"]["instances_dropped"] == 2
    assert out.manifest.extras["qc"]["instances_kept"] == 3


def test_default_floor_is_the_constructions(reviewed, tmp_path):
    """A benchmark recording no construction floor gets none (both scenes kept); one whose
    manifest records ``scene_floor.min_foils`` = 15 (``construct composet``) gets 15."""
    s = open_session(reviewed)
    report = export_review(s, tmp_path / "none")
    assert report["scene_floor"]["source"] == "none recorded"
    assert report["scene_floor"]["scenes_kept"] == 2
    s.units.bench.manifest.extras["scene_floor"] = {"min_foils": 15}
    with pytest.raises(ReviewError, match="5 kept instance\\(s\\) were in scenes below the "
                                          "15-foil floor"):
        export_review(s, tmp_path / "fifteen")
    with pytest.raises(ReviewError, match="--min-foils must be 0 or more, got -1"):
        export_review(s, tmp_path / "neg", min_foils=-1)
    s.store.close()


def test_cli_states_the_floor(reviewed, tmp_path):
    from foilbench.cli.main import cli

    res = CliRunner().invoke(cli, ["review", "export", str(reviewed), "--out",
                                   str(tmp_path / "o"), "--min-foils", "3"])
    assert res.exit_code == 0, res.output
    assert ("scene floor (option): 3 foils; 1 scene(s) below it left out (2 kept "
            "instance(s)), 1 kept") in res.output
    saved = json.loads((tmp_path / "o" / "qc_report.json").read_text())
    assert saved["scene_floor"]["below_floor"] == {"s0": 2}
    res = CliRunner().invoke(cli, ["review", "export", str(reviewed), "--out",
                                   str(tmp_path / "neg"), "--min-foils", "-1"])
    assert res.exit_code == 2 and "--min-foils" in res.output
