"""Validation errors name the item and the field; drop mode reports how many and why."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from _core_helpers import ColourEncoder, colour_pair_folder, write_folder
from foilbench.data.format import load_benchmark, write_benchmark
from foilbench.data.validate import validate
from foilbench.errors import BenchmarkError
from foilbench.scoring.engine import evaluate


def _edit(root, changes):
    """Apply {(item_id, column): value} to the folder's table."""
    items = pd.read_parquet(root / "items.parquet")
    for (item_id, col), value in changes.items():
        items.loc[items["item_id"] == item_id, col] = value
    items.to_parquet(root / "items.parquet", index=False)


def test_valid_folder_loads_and_round_trips(tmp_path):
    bench = load_benchmark(colour_pair_folder(tmp_path / "b"))
    assert len(bench) == 4 and bench.kind == "pair" and bench.dropped is None
    out = write_benchmark(bench, tmp_path / "copy")
    again = load_benchmark(out)
    assert again.items["item_id"].tolist() == ["a", "b", "c", "d"]
    assert json.loads((out / "manifest.json").read_text())["checksum"].startswith("sha256:")


def test_missing_image_names_item_and_field(tmp_path):
    root = colour_pair_folder(tmp_path / "b")
    _edit(root, {("c", "image_foil"): "nowhere.png"})
    with pytest.raises(BenchmarkError) as err:
        load_benchmark(root)
    msg = str(err.value)
    assert "item 'c'" in msg and "'image_foil'" in msg and "missing" in msg and "nowhere.png" in msg


def test_unreadable_image_is_reported_and_named(tmp_path):
    root = colour_pair_folder(tmp_path / "b")
    (root / "broken.png").write_bytes(b"not a png at all")
    _edit(root, {("b", "image_base"): "broken.png"})
    bench = load_benchmark(root, check_images=False)
    problems = validate(bench, check_readable=True)
    assert [(p.item_id, p.field, p.reason) for p in problems] == \
        [("b", "image_base", "unreadable_image")]
    # the engine refuses the same file with a message naming it
    with pytest.raises(BenchmarkError, match="broken.png"):
        evaluate(ColourEncoder(), bench, progress=False)


def test_duplicate_id(tmp_path):
    root = colour_pair_folder(tmp_path / "b")
    _edit(root, {("b", "item_id"): "a"})
    with pytest.raises(BenchmarkError, match=r"item 'a', field 'item_id': duplicate item id"):
        load_benchmark(root)


def test_empty_caption(tmp_path):
    root = colour_pair_folder(tmp_path / "b")
    _edit(root, {("d", "caption_foil"): "   "})
    with pytest.raises(BenchmarkError, match=r"item 'd', field 'caption_foil': empty caption"):
        load_benchmark(root)


def test_wrong_kind_in_manifest(tmp_path):
    root = colour_pair_folder(tmp_path / "b")
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**manifest, "kind": "triplet"}))
    with pytest.raises(BenchmarkError, match="unknown kind 'triplet'.*pair, choice, image_choice"):
        load_benchmark(root)


def test_table_of_another_kind_names_missing_columns(tmp_path):
    root = colour_pair_folder(tmp_path / "b")
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**manifest, "kind": "choice"}))
    with pytest.raises(BenchmarkError, match=r"field 'captions': column required by kind 'choice'"):
        load_benchmark(root, on_invalid="drop")  # table-level problems refuse even in drop mode


@pytest.mark.parametrize("bad", ["../outside.png", "/etc/passwd", "sub/../../x.png"])
def test_path_escaping_root(tmp_path, bad):
    root = colour_pair_folder(tmp_path / "b")
    _edit(root, {("a", "image_base"): bad})
    with pytest.raises(BenchmarkError, match=r"item 'a', field 'image_base'.*escapes"):
        load_benchmark(root)


def test_choice_list_needs_a_negative(tmp_path):
    items = pd.DataFrame({"item_id": ["x"], "image": ["red.png"],
                          "captions": [np.array(["only the positive"])]})
    root = write_folder(tmp_path / "c", "choice", items)
    with pytest.raises(BenchmarkError, match=r"item 'x', field 'captions'.*at least one negative"):
        load_benchmark(root, check_images=False)


def test_drop_mode_reports_counts_and_reasons(tmp_path):
    root = colour_pair_folder(tmp_path / "b")
    _edit(root, {("a", "caption_base"): "", ("b", "image_foil"): "gone.png",
                   ("c", "image_base"): "../up.png"})
    bench = load_benchmark(root, on_invalid="drop")
    assert bench.items["item_id"].tolist() == ["d"]
    assert bench.manifest.partial is True
    assert bench.dropped.n == 3
    assert bench.dropped.by_reason == {"empty_caption": 1, "missing_image": 1,
                                       "path_escapes_root": 1}
    assert {p.item_id for p in bench.dropped.problems} == {"a", "b", "c"}


def test_raise_mode_suggests_allow_partial(tmp_path):
    root = colour_pair_folder(tmp_path / "b")
    _edit(root, {("a", "caption_base"): ""})
    with pytest.raises(BenchmarkError, match="--allow-partial"):
        load_benchmark(root)
