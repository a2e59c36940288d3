"""Pair-kind loaders (Group): CompoSET, Winoground, BiVLC, ColorSwap, MMVP-VLM.

Each fixture is a few items in the release's exact native format, with tiny PNGs.
"""

from __future__ import annotations

import pandas as pd
import pytest

from _loader_fixtures import hf_image, png, write_jsonl
from foilbench.data.loaders import bivlc, colorswap, composet, mmvp, winoground
from foilbench.data.loaders.common import LoaderWarning
from foilbench.data.registry import resolve_benchmark
from foilbench.errors import BenchmarkError

pytestmark = pytest.mark.filterwarnings("ignore::foilbench.data.loaders.common.LoaderWarning")


# --- CompoSET ------------------------------------------------------------------------------
def _composet(root, edit_types=("modify_color", "modify_cardinality", "swap_position")):
    rows = []
    for k, edit in enumerate(edit_types):
        rows.append({"id": f"v{k}", "scene_id": f"s{k % 2}", "edit_type": edit,
                     "image_base": f"img/v{k}_base.png", "image_var": f"img/v{k}_var.png",
                     "captions": {t: {"base": f"{t} base {k}", "var": f"{t} var {k}"}
                                  for t in composet.TIERS}})
        png(root / f"img/v{k}_base.png")
        png(root / f"img/v{k}_var.png", (0, 0, 200))
    pd.DataFrame(rows).to_parquet(root / "variations.parquet")
    pd.DataFrame({"scene_id": ["s0", "s1"]}).to_parquet(root / "scenes.parquet")
    return root


def test_composet_one_item_per_variation_and_tier(tmp_path):
    with pytest.warns(LoaderWarning, match="published release has 1776"):
        bench = resolve_benchmark(f"composet:{_composet(tmp_path)}")
    assert bench.kind == "pair" and bench.manifest.primary_metric == "group"
    assert bench.manifest.extras["table8_metric"] == "group"
    assert len(bench) == 9
    row = bench.items.set_index("item_id").loc["v1/medium"]
    assert (row["caption_base"], row["caption_foil"]) == ("medium base 1", "medium var 1")
    assert (row["image_base"], row["image_foil"]) == ("img/v1_base.png", "img/v1_var.png")
    assert row["edit_type"] == "modify_count"  # modify_cardinality is the same edit
    assert row["category"] == "count" and row["tier"] == "medium"
    assert set(bench.items["category"]) == {"attribute", "count", "spatial"}
    assert bench.manifest.checksum.startswith("sha256:")


def test_composet_tier_option_and_schema_errors(tmp_path):
    root = _composet(tmp_path)
    bench = composet.load(f"{root}?tiers=short", check_images=False)
    assert bench.items["tier"].unique().tolist() == ["short"] and len(bench) == 3
    with pytest.raises(ValueError, match="unknown tier"):
        composet.load(f"{root}?tiers=tiny")
    pd.DataFrame({"id": ["a"], "scene_id": ["s"]}).to_parquet(root / "variations.parquet")
    with pytest.raises(BenchmarkError, match=r"variations\.parquet: missing column\(s\) "
                                             r"edit_type, image_base, image_var, captions"):
        composet.load(root, check_images=False)


def test_composet_missing_images_listed_with_count(tmp_path):
    root = _composet(tmp_path)
    (root / "img/v0_var.png").unlink()
    with pytest.raises(BenchmarkError, match=r"1 of 6 distinct image files are missing"):
        composet.load(root)
    bench = composet.load(root, on_invalid="drop")  # --allow-partial
    assert bench.manifest.partial and len(bench) == 6 and bench.dropped.n == 3


# --- Winoground ----------------------------------------------------------------------------
def _winoground(root):
    # examples.jsonl fields and images/ex_<k>_img_<j>.png names as in facebook/winoground's
    # data/examples.jsonl + images.zip; the Parquet layout: test_releases_images.py
    write_jsonl(root / "data/examples.jsonl", [
        {"id": k, "caption_0": f"a {k} b", "caption_1": f"b {k} a", "image_0": f"ex_{k}_img_0",
         "image_1": f"ex_{k}_img_1", "tag": "Object", "secondary_tag": "", "num_main_preds": 1,
         "collapsed_tag": tag} for k, tag in enumerate(["Object", "Relation", "Both"])])
    for k in range(3):
        png(root / f"data/images/ex_{k}_img_0.png")
        png(root / f"data/images/ex_{k}_img_1.png", (0, 90, 0))
    return root


def test_winoground_native_jsonl_and_images(tmp_path):
    with pytest.warns(LoaderWarning, match="'Relation': 1 items, the published release has 233"):
        bench = winoground.load(_winoground(tmp_path))
    assert bench.root == tmp_path / "data"
    row = bench.items.set_index("item_id").loc["1"]
    assert row["image_base"] == "images/ex_1_img_0.png"
    assert (row["caption_base"], row["caption_foil"]) == ("a 1 b", "b 1 a")
    assert row["category"] == "Relation" and bench.manifest.primary_metric == "group"


def test_winoground_schema_mismatch_names_line_and_field(tmp_path):
    write_jsonl(tmp_path / "examples.jsonl", [{"id": 0, "caption_0": "x", "image_0": "a",
                                               "image_1": "b"}])
    with pytest.raises(BenchmarkError, match=r"examples\.jsonl, line 1: missing field\(s\) "
                                             r"caption_1"):
        winoground.load(tmp_path, check_images=False)


# --- BiVLC ---------------------------------------------------------------------------------
def _bivlc(root):
    # evidence: tests/_release_fixtures.py:bivlc (the authors' BiVLC evaluation code)
    (root / "data").mkdir(parents=True)
    pd.DataFrame({
        "image": [hf_image((200, 0, 0), "a.jpg"), hf_image((0, 200, 0), "b.jpg")],
        "caption": ["a red cup", "a dog on a mat"],
        "negative_caption": ["a blue cup", "a mat on a dog"],
        "negative_image": [hf_image((0, 0, 200), "c.jpg"), hf_image((9, 9, 9), "d.jpg")],
        "type": ["Replace", "Swap"], "subtype": ["Attribute", "Object"],
    }).to_parquet(root / "data/test-00000-of-00001.parquet")
    return root


def test_bivlc_extracts_embedded_images_only_when_checking(tmp_path):
    root = _bivlc(tmp_path)
    text_only = bivlc.load(root, check_images=False)
    assert not (root / "_foilbench_images").exists()  # inspection writes nothing
    with pytest.warns(LoaderWarning, match="2933"):
        bench = bivlc.load(f"{root}?images={tmp_path / 'imgs'}")
    assert bench.items["image_base"].tolist() == text_only.items["image_base"].tolist()
    assert (tmp_path / "imgs" / bench.items.loc[0, "image_foil"]).read_bytes()[:4] == \
        b"\x89PNG"
    assert bench.items["edit_type"].tolist() == ["replace_att", "swap_obj"]
    assert bench.items["caption_foil"].tolist() == ["a blue cup", "a mat on a dog"]


# --- ColorSwap -----------------------------------------------------------------------------
def test_colorswap_test_split_by_default(tmp_path):
    (tmp_path / "data").mkdir()
    for split, n in (("train", 2), ("test", 1)):
        pd.DataFrame({"id": list(range(n)),
                      "image_1": [hf_image((200, 0, 0), "1.png")] * n,
                      "image_2": [hf_image((0, 0, 200), "2.png")] * n,
                      "caption_1": ["a red ball and a blue cube"] * n,
                      "caption_2": ["a blue ball and a red cube"] * n,
                      }).to_parquet(tmp_path / f"data/{split}-00000-of-00001.parquet")
    bench = colorswap.load(tmp_path)
    assert bench.items["item_id"].tolist() == ["test/0"]
    assert colorswap.load(f"{tmp_path}?split=all", check_images=False).items["split"].tolist() \
        == ["train", "train", "test"]


# --- MMVP-VLM ------------------------------------------------------------------------------
def test_mmvp_pairs_consecutive_rows_with_prompt(tmp_path):
    # tsb0601/MMVP scripts/evaluate_vlm.py: 'MLLM_VLM Images'/<qtype1>/<qid>.jpg, Questions.csv
    # rows (qid, qtype, statement) read two at a time, text = 'a photo of ' + statement
    (tmp_path / "Questions.csv").write_text(
        "Question ID,Type,Statement\n1,Color,the ball is red\n2,Color,the ball is blue\n"
        "3,Quantity,two cats\n4,Quantity,three cats\n")
    for k, t in ((1, "Color"), (2, "Color"), (3, "Quantity"), (4, "Quantity")):
        png(tmp_path / f"MLLM_VLM Images/{t}/{k}.jpg")
    with pytest.warns(LoaderWarning, match="2 pairs; the published release has 135"):
        bench = mmvp.load(tmp_path)
    row = bench.items.set_index("item_id").loc["3-4"]
    assert row["image_foil"] == "MLLM_VLM Images/Quantity/4.jpg"
    assert (row["caption_base"], row["caption_foil"]) == ("a photo of two cats",
                                                          "a photo of three cats")
    bare = mmvp.load(f"{tmp_path}?prompt=", check_images=False)
    assert bare.items.loc[0, "caption_base"] == "the ball is red"


@pytest.mark.parametrize("layout", ["by_category", "by_edit", "records"])
def test_composet_taxonomy_file_gives_categories(tmp_path, layout):
    import json

    root = _composet(tmp_path)
    taxonomy = {
        "by_category": {"Attribute": ["modify_color"], "Counting": ["modify_cardinality"],
                        "Spatial": ["swap_position"]},
        "by_edit": {"modify_color": "Attribute", "modify_cardinality": "Counting",
                    "swap_position": "Spatial"},
        "records": [{"edit_type": "modify_color", "category": "Attribute"},
                    {"edit_type": "modify_cardinality", "category": "Counting"},
                    {"edit_type": "swap_position", "category": "Spatial"}],
    }[layout]
    (root / "taxonomy.json").write_text(json.dumps(taxonomy))
    bench = composet.load(root, check_images=False)
    cats = bench.items.drop_duplicates("instance_id").set_index("edit_type")["category"]
    assert cats.to_dict() == {"modify_color": "Attribute", "modify_count": "Counting",
                              "swap_position": "Spatial"}
    assert bench.manifest.extras["category_source"] == "taxonomy.json"
