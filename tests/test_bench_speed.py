"""The speed scripts' own arithmetic (bench/fixed_cost.py, bench/peer_data.py): the fixed-cost
share, the floor ratio, the stratified subset and the distinct-input counts, by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import fixed_cost  # noqa: E402
import peer_data  # noqa: E402

ENGINE = ("engine", "early decode")
IMPORTS = ("import torch", "import open_clip")


def test_fixed_cost_leaves_out_start_imports_and_engine():
    rows = [("interpreter start-up and exit", 1.0, 0.5), ("import torch", 2.0, 2.0),
            ("import open_clip", 1.0, 1.0), ("benchmark load", 0.5, 0.5),
            ("early decode", 1.5, 1.5), ("engine", 12.0, 12.0), ("report", 1.0, 1.0),
            ("  forward passes", 10.0, 10.0)]
    lines = fixed_cost.fixed_cost_lines(rows, 20.0, ENGINE, IMPORTS, fresh_imports=2.5)
    # outside the engine: 20 - 12 - 1.5 = 6.5; less start 1.0 and imports 3.0 -> 2.5 s = 12.5%
    assert "outside the engine 6.50 s" in lines[0]
    assert "= 2.50 s = 12.5% of the run's wall 20.00 s" in lines[0]
    assert "import share 15.0%" in lines[0]  # 3.0 / 20
    assert "fresh process on the same cores: 2.50 s = 12.5%" in lines[1]
    assert len(fixed_cost.fixed_cost_lines(rows, 20.0, ENGINE, IMPORTS, None)) == 1


def test_floor_line_by_hand(tmp_path):
    rates = {"arch": "tiny", "by_threads": {"1": {
        "arch": "tiny", "threads": 1, "images_per_s": 50.0, "image_batch": 32,
        "texts_per_s": 200.0, "text_batch": 64}}}
    path = tmp_path / "floor.json"
    path.write_text(json.dumps(rates))
    # 100 / 50 + 400 / 200 = 4 s; a 5 s run is 1.25x
    line = fixed_cost.floor_line("composet", 5.0, path, 1, 100, 400)
    assert "= 4.00 s" in line and "1.25x the floor" in line
    assert "no rates for 2 thread(s)" in fixed_cost.floor_line("c", 5.0, path, 2, 1, 1)


def test_stratified_keeps_each_type_share_seeded_and_in_order():
    data = {str(i): i for i in range(40)}
    got = peer_data._stratified(data, 0.25, seed=3)
    assert len(got) == 10 and list(got) == sorted(got, key=int)  # file order kept
    assert got == peer_data._stratified(data, 0.25, seed=3)
    assert got != peer_data._stratified(data, 0.25, seed=4)
    assert len(peer_data._stratified(data, 0.001, seed=0)) == 1  # never an empty type
    assert len(peer_data._stratified(data, 5.0, seed=0)) == 40


@pytest.mark.parametrize(("subset", "scenes"), [(1, 1), (66, 1), (67, 2), (1320, 20),
                                                  (10**6, 80)])
def test_composet_subset_takes_whole_scenes(subset, scenes):
    assert peer_data.composet_scenes(1.0, subset) == scenes
    assert peer_data.composet_scenes(0.25) == 20


def test_unique_inputs_of_a_sugarcrepe_folder(tmp_path):
    items = {"0": {"filename": "a.jpg", "caption": "x", "negative_caption": "y"},
             "1": {"filename": "a.jpg", "caption": "x", "negative_caption": "z"},
             "2": {"filename": "b.jpg", "caption": "y", "negative_caption": "w"}}
    (tmp_path / "add_obj.json").write_text(json.dumps(items))
    assert peer_data.unique_inputs("sugarcrepe", (tmp_path, tmp_path)) == (2, 4)


def test_unknown_arch_is_refused_by_name():
    with pytest.raises(SystemExit, match="unknown --arch 'ViT-X'"):
        peer_data.model_files(Path("/nonexistent"), "ViT-X")


def test_composet_subset_release_counts_one_scene(tmp_path):
    root = peer_data.composet_release(tmp_path, 1.0, subset=66)
    n_images, n_texts = peer_data.unique_inputs("composet", root)
    assert n_images == 23  # the base image and 22 foils
    # 3 tiers x (the edited objects' base captions, at most 3, + 22 foil captions)
    assert 22 < n_texts <= 3 * (3 + 22)


def test_every_runner_step_fb_phases_times_still_exists():
    """fb_phases wraps runner functions by name: a renamed step (as configure_threads became
    run_threads) must fail here, not in a measuring session's instrumented run."""
    import fb_phases

    named = [(p, a) for p, a, _ in (*fb_phases.TIMED, *fb_phases.TIMED_ENTER)]
    for path, attr in (*named, *fb_phases.WRAPPED):
        owner, name = fb_phases._owner(path, attr)
        assert callable(getattr(owner, name, None)), f"{path}.{attr} is gone"


def test_fb_phases_owner_refuses_a_missing_name():
    import fb_phases

    owner, name = fb_phases._owner("foilbench.runner.runs", "no_such_step")
    assert not hasattr(owner, name)
