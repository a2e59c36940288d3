"""Choice-kind loaders (I2T R@1): What's Up (and its pair view), SugarCrepe++, ARO, VL-CheckList.

Each fixture is a few items in the release's exact native format, with tiny PNGs.
"""

from __future__ import annotations

import pytest
from PIL import Image

from _loader_fixtures import png, write_json
from foilbench.data.loaders import aro, sugarcrepe_pp, vl_checklist, whatsup
from foilbench.data.loaders.common import LoaderWarning
from foilbench.data.registry import resolve_benchmark
from foilbench.errors import BenchmarkError

pytestmark = pytest.mark.filterwarnings("ignore::foilbench.data.loaders.common.LoaderWarning")


# --- What's Up -----------------------------------------------------------------------------
def _whatsup(root, with_b=True):
    entries_a = []
    for prep in ("left_of", "right_of", "on", "under"):
        name = f"mug_{prep}_plate.jpeg"
        words = prep.replace("_", " ")
        entries_a.append({"image_path": f"data/controlled_images/{name}",
                          "caption_options": [f"A mug {words} a plate", "A mug x a plate",
                                              "A mug y a plate", "A mug z a plate"]})
        png(root / "controlled_images" / name)
    write_json(root / "controlled_images_dataset.json", entries_a)
    if with_b:
        name = "cube_behind_sphere.jpeg"
        write_json(root / "controlled_clevr_dataset.json", [
            {"image_path": f"data/controlled_clevr/{name}",
             "caption_options": ["A cube behind a sphere", "A cube left of a sphere",
                                 "A cube right of a sphere", "A cube in front of a sphere"]}])
        png(root / "controlled_clevr" / name)
    return root


def test_whatsup_choice_view(tmp_path):
    with pytest.warns(LoaderWarning, match="Controlled A 'images': 4 items, the published "
                                           "release has 412"):
        bench = resolve_benchmark(f"whatsup:{_whatsup(tmp_path)}")
    assert bench.kind == "choice" and bench.manifest.extras["table8_metric"] is None
    assert bench.manifest.extras["table8_form"].startswith("whatsup_pairs:")
    row = bench.items.set_index("item_id").loc["A/mug_under_plate"]
    assert row["image"] == "controlled_images/mug_under_plate.jpeg"
    assert row["captions"][0] == "A mug under a plate" and len(row["captions"]) == 4
    assert row["edit_type"] == "under" and row["split"] == "A"
    assert set(bench.items["split"]) == {"A", "B"}


def test_whatsup_pairs_per_axis_and_unpaired_warning(tmp_path):
    with pytest.warns(LoaderWarning, match="only behind on axis front_behind"):
        bench = resolve_benchmark(f"whatsup_pairs:{_whatsup(tmp_path)}?pairs=axis")
    assert bench.kind == "pair" and bench.manifest.primary_metric == "group"
    items = bench.items.set_index("item_id")
    assert items.index.tolist() == ["A/mug_plate/left_right", "A/mug_plate/on_under"]
    lr = items.loc["A/mug_plate/left_right"]
    assert lr["image_base"] == "controlled_images/mug_left_of_plate.jpeg"
    assert lr["image_foil"] == "controlled_images/mug_right_of_plate.jpeg"
    assert (lr["caption_base"], lr["caption_foil"]) == ("A mug left of a plate",
                                                        "A mug right of a plate")


def test_whatsup_missing_subset_is_partial_only_when_allowed(tmp_path):
    root = _whatsup(tmp_path, with_b=False)
    with pytest.raises(BenchmarkError, match="lacks controlled_clevr_dataset.json"):
        whatsup.load(root)
    assert whatsup.load(root, on_invalid="drop").manifest.partial
    assert not whatsup.load(f"{root}?subset=A").manifest.partial


# --- SugarCrepe++ --------------------------------------------------------------------------
def test_sugarcrepe_pp_two_items_per_instance(tmp_path):
    for t in sugarcrepe_pp.EXPECTED_COUNTS:
        write_json(tmp_path / f"{t}.json", [
            {"id": 0, "filename": "000000000001.jpg", "caption": f"{t} p1",
             "caption2": f"{t} p2", "negative_caption": f"{t} neg"}])
    png(tmp_path / "coco" / "000000000001.jpg")
    with pytest.warns(LoaderWarning, match="4757"):
        bench = sugarcrepe_pp.load(f"{tmp_path}?images={tmp_path / 'coco'}")
    assert len(bench) == 10
    items = bench.items.set_index("item_id")
    assert list(items.loc["swap_obj/0/p2", "captions"]) == ["swap_obj p2", "swap_obj neg"]
    assert items.loc["swap_obj/0/p1", "instance_id"] == "swap_obj/0"
    assert items.loc["replace_rel/0/p1", "category"] == "relation"


# --- ARO -----------------------------------------------------------------------------------
def _aro(root):
    Image.new("RGB", (20, 10), (0, 0, 255)).save(root / "blank.png")
    (root / "images").mkdir()
    Image.new("RGB", (20, 10), (0, 0, 255)).save(root / "images" / "2.jpg", format="PNG")
    box = {"bbox_x": 2, "bbox_y": 1, "bbox_w": 8, "bbox_h": 5}
    write_json(root / "visual_genome_relation.json", [
        {"image_id": "2", "relation_name": "on", "image_path": "2.jpg", **box,
         "true_caption": "the cup is on the table", "false_caption": "the table is on the cup"}])
    write_json(root / "visual_genome_attribution.json", [
        {"image_id": "2", "attributes": ["red", "small"], "image_path": "2.jpg", **box,
         "true_caption": "the red cup and the small table",
         "false_caption": "the small cup and the red table"}])
    return root


def test_aro_crops_written_when_checking_images(tmp_path):
    root = _aro(tmp_path)
    text_only = aro.load(root, check_images=False)
    assert not (root / "_foilbench_crops").exists()
    with pytest.warns(LoaderWarning, match="23937"):
        bench = aro.load(root)
    assert bench.items["image"].tolist() == text_only.items["image"].tolist() == \
        ["2_2_1_8_5.png", "2_2_1_8_5.png"]
    with Image.open(root / "_foilbench_crops" / "2_2_1_8_5.png") as im:
        assert im.size == (8, 5)  # crop (x, y, x + w, y + h)
    assert bench.items["edit_type"].tolist() == ["on", "red_small"]
    assert list(bench.items.loc[0, "captions"]) == ["the cup is on the table",
                                                    "the table is on the cup"]
    one = aro.load(f"{root}?subset=vg_attribution", check_images=False)
    assert one.name == "aro_vg_attribution" and len(one) == 1
    with pytest.raises(ValueError, match="aro_coco_order:PATH"):
        aro.load(f"{root}?subset=coco_order")


# --- VL-CheckList (the release layout and protocol: test_releases_choice.py) ---------------
def test_vl_checklist_bad_entry_names_file(tmp_path):
    write_json(tmp_path / "Object/Size/vg_size/x.json", [["a.jpg", {"POS": ["p"]}]])
    with pytest.raises(BenchmarkError, match=r"x\.json, entry 0"):
        vl_checklist.load(tmp_path, check_images=False)


# --- ColorBench (robustness) ---------------------------------------------------------------
def test_colorbench_robustness_rows_as_caption_choice(tmp_path):
    import pandas as pd

    from _loader_fixtures import hf_image
    from foilbench.data.loaders import colorbench

    (tmp_path / "data").mkdir()
    pd.DataFrame({
        "idx": [0, 1, 2],
        "type": ["Robustness", "Robustness", "Perception"],
        "task": ["Color Robustness", "Color Robustness", "Color Recognition"],
        "filename": ["robust/12.png", "robust/12_1.png", "recog/3.png"],
        "question": ["What colour is the car?"] * 2 + ["Which colour?"],
        "choices": ["(A) red (B) blue (C) green", "(A) red (B) blue (C) green",
                    "(A) pink (B) gray"],
        "answer": ["(B)", "(B)", "(A)"],
        "image": [hf_image((0, 0, 200), "a.png"), hf_image((0, 200, 0), "b.png"),
                  hf_image((9, 9, 9), "c.png")],
    }).to_parquet(tmp_path / "data/test-00000-of-00001.parquet")
    bench = colorbench.load(f"{tmp_path}?form=i2t")
    assert len(bench) == 2 and bench.kind == "choice"
    assert list(bench.items.loc[0, "captions"]) == [
        "What colour is the car? blue", "What colour is the car? red",
        "What colour is the car? green"]
    assert bench.items["condition"].tolist() == ["original", "recolored"]
    assert bench.items["instance_id"].nunique() == 1
    assert len(colorbench.load(f"{tmp_path}?tasks=all&form=i2t", check_images=False)) == 3
    assert colorbench.parse_choices(["(A) x", "(B) y"], "w") == {"a": "x", "b": "y"}
