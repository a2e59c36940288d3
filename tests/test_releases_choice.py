"""Text-foil releases in their real layout, scored as their authors and CompoSET Table 8 do.

VL-CheckList, What's Up (as Table 8's image pairs), SugarCrepe type subsets and SugarCrepe++
counted per instance. Each fixture copies file names, field names and entries from the release
(the evidence is cited beside it); the CompoSET passages are quoted in the loaders' docstrings.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from _core_helpers import ColourEncoder, solid
from _loader_fixtures import png, write_json
from foilbench.data.loaders import sugarcrepe, sugarcrepe_pp, vl_checklist, whatsup
from foilbench.data.loaders.common import LoaderWarning
from foilbench.errors import BenchmarkError
from foilbench.scoring.aggregate import long_outcomes
from foilbench.scoring.engine import evaluate

pytestmark = pytest.mark.filterwarnings("ignore::foilbench.data.loaders.common.LoaderWarning")
REAL_SUGARCREPE = Path(__file__).resolve().parents[2] / "shared" / "data" / "sugarcrepe"


# --- VL-CheckList -----------------------------------------------------------------------------
# Evidence (github.com/om-ai-lab/VL-CheckList, HEAD 6f8d6a3):
#   corpus/v1/Attribute/action/vaw.yaml: ANNO_PATH: "data/Attribute/vaw/action.json"
#                                        IMG_ROOT: "vg"   TYPE: "TUPLE_JSON"
#   corpus/v1/Object/Location/margin/swig_agent.yaml: ANNO_PATH: "data/Object/Location/
#        swig_location/swig_agent/swig_agent_margin.json"  IMG_ROOT: "swig/"
#   vl_checklist/data_loader.py: path = os.path.join(config["IMG_ROOT"], path)
#   vl_checklist/evaluate.py (itc): texts_pos = [z["texts_pos"][0] for z in batch]
#                                   texts_neg = [z["texts_neg"][0] for z in batch]
#   DATASETS.md: "$DATASET/ |-- hake/ |-- swig/ |-- vg/"; VAW images are VG images.
# The entries below are the first entries of those files in the release.
VLC_FILES = {
    "data/Attribute/vaw/action.json": [
        ["VG_100K/2372476.jpg", {"POS": ["skiing slope"], "NEG": ["snowboarding slope"]}],
        ["VG_100K/1592712.jpg", {"POS": ["skiing slope"], "NEG": ["surfing slope"]}]],
    "data/Object/Location/hake_location/hake_obj_margin.json": [
        ["openimages/0030feaa83a02c0d.jpg", {"POS": ["person hold motorcycle"],
                                             "NEG": ["person hold backpack"]}]],
    "data/Object/Location/swig_location/swig_agent/swig_agent_margin.json": [
        ["calling_164.jpg", {"POS": ["an young woman calls using a cell at a place",
                                     "an woman calls using a phone at a inside",
                                     "an adult female calls using a telephone at a place"],
                             "NEG": ["an turbo-propeller plane calls using a mobile phone at a "
                                     "place",
                                     "an drum major calls using a telephone set at a inside",
                                     "an adamant calls using a telephone at a place"]}]],
    "data/Relation/vg/spatial.json": [
        ["VG_100K/2361911.jpg", {"POS": ["control switch ON oven"],
                                 "NEG": ["control switch under oven"]}],
        ["VG_100K/2361911.jpg", {"POS": ["display ON microwave"],
                                 "NEG": ["display ON microwave"]}]],
}
VLC_YAMLS = {
    "corpus/v1/Attribute/action/vaw.yaml": ("data/Attribute/vaw/action.json", "vg"),
    "corpus/v1/Object/Location/margin/hake.yaml":
        ("data/Object/Location/hake_location/hake_obj_margin.json", "hake/"),
    "corpus/v1/Object/Location/margin/swig_agent.yaml":
        ("data/Object/Location/swig_location/swig_agent/swig_agent_margin.json", "swig/"),
    "corpus/v1/Relation/spatial/vg.yaml": ("data/Relation/vg/spatial.json", "vg/"),
}
VLC_IMAGES = ("vg/VG_100K/2372476.jpg", "vg/VG_100K/1592712.jpg",
              "hake/openimages/0030feaa83a02c0d.jpg", "swig/calling_164.jpg",
              "vg/VG_100K/2361911.jpg")


def _vl_checklist(root: Path, with_yamls: bool = True) -> tuple[Path, Path]:
    repo, dataset = root / "VL-CheckList", root / "DATASET"
    for rel, entries in VLC_FILES.items():
        write_json(repo / rel, entries)
    if with_yamls:
        for rel, (anno, img_root) in VLC_YAMLS.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(f'ANNO_PATH: "{anno}"\nIMG_ROOT: "{img_root}"\n'
                                    f'TYPE: "TUPLE_JSON"\n')
    for rel in VLC_IMAGES:
        png(dataset / rel)
    return repo, dataset


def test_vl_checklist_one_test_per_entry_under_per_corpus_roots(tmp_path):
    repo, dataset = _vl_checklist(tmp_path)
    with pytest.warns(LoaderWarning, match="1 item\\(s\\) have a negative identical"):
        bench = vl_checklist.load(f"{repo}?images={dataset}")
    items = bench.items.set_index("item_id")
    assert len(bench) == 6  # one per JSON entry; POS[k]/NEG[k] pairing would give 8
    swig = items.loc["Object/Location/swig_location/swig_agent/swig_agent_margin/0"]
    assert list(swig["captions"]) == ["an young woman calls using a cell at a place",
                                      "an turbo-propeller plane calls using a mobile phone at "
                                      "a place"]
    assert swig["image"] == "swig/calling_164.jpg" and swig["corpus"] == "swig"
    assert swig["checklist_type"] == "Object/Location/margin" and swig["split"] == "swig_agent"
    vaw = items.loc["Attribute/vaw/action/0"]
    assert vaw["image"] == "vg/VG_100K/2372476.jpg"  # VAW images live under vg/
    assert (vaw["checklist_type"], vaw["split"]) == ("Attribute/action", "vaw")
    hake = items.loc["Object/Location/hake_location/hake_obj_margin/0"]
    assert hake["image"] == "hake/openimages/0030feaa83a02c0d.jpg"
    assert bench.manifest.extras["unscored_captions"] == 4
    assert bench.manifest.extras["roots_from"] == "corpus yaml"
    assert bench.manifest.extras["counts"] == {"Attribute": 2, "Object": 2, "Relation": 2}


def test_vl_checklist_data_folder_alone_infers_the_same_roots(tmp_path):
    repo, dataset = _vl_checklist(tmp_path, with_yamls=False)
    with_yamls, _ = _vl_checklist(tmp_path / "y")
    bare = vl_checklist.load(f"{repo / 'data'}?images={dataset}")
    full = vl_checklist.load(with_yamls, check_images=False)
    assert bare.items["image"].tolist() == full.items["image"].tolist()
    assert bare.manifest.extras["roots_from"] == "file paths"
    shutil.rmtree(repo / "data" / "Object")
    write_json(repo / "data/Object/odd/x.json", [["a.jpg", {"POS": ["p"], "NEG": ["n"]}]])
    with pytest.raises(BenchmarkError, match="no corpus yaml names this file"):
        vl_checklist.load(repo, check_images=False)


def test_vl_checklist_missing_corpus_image_names_the_root(tmp_path):
    repo, dataset = _vl_checklist(tmp_path)
    (dataset / "swig/calling_164.jpg").unlink()
    with pytest.raises(BenchmarkError, match="swig/calling_164.jpg"):
        vl_checklist.load(f"{repo}?images={dataset}")
    bench = vl_checklist.load(f"{repo}?images={dataset}", on_invalid="drop")
    assert bench.manifest.partial and len(bench) == 5


# --- What's Up: Table 8's six image pairs per set ----------------------------------------------
# Evidence (github.com/amitakamath/whatsup_vlms, dataset_zoo/aro_datasets.py,
# Controlled_Images): sets are keyed (name.split('_')[0], name.split('_')[-1][:-5]) and the
# preposition is name.split('_')[1] ('left', 'right', 'on', 'under' / 'in-front', 'behind');
# image paths "data/controlled_images/<name>.jpeg", caption_options[0] is the true caption.
def _whatsup_set(root: Path, subset: str, first: str, second: str, preps: tuple[str, ...]):
    ann, folder = whatsup.SUBSETS[subset]
    entries = []
    for prep in preps:
        name = f"{first}_{prep}_{second}.jpeg"
        words = prep.replace("_", " ").replace("-", " ")
        others = [f"A {first} {p.replace('_', ' ')} a {second}" for p in preps if p != prep]
        entries.append({"image_path": f"data/{folder}/{name}",
                        "caption_options": [f"A {first} {words} a {second}", *others]})
        png(root / folder / name)
    path = root / ann
    old = __import__("json").loads(path.read_text()) if path.exists() else []
    write_json(path, old + entries)


def test_whatsup_pairs_all_six_image_pairs_per_set(tmp_path):
    _whatsup_set(tmp_path, "A", "mug", "plate", ("left_of", "right_of", "on", "under"))
    _whatsup_set(tmp_path, "B", "cube", "sphere",
                 ("left_of", "right_of", "in-front_of", "behind"))
    with pytest.warns(LoaderWarning, match="Controlled A: 1 sets .* the published release has "
                                           "103"):
        bench = whatsup.load_pairs(tmp_path)
    assert bench.kind == "pair" and bench.manifest.primary_metric == "group"
    assert bench.manifest.extras["table8_metric"] == "group"
    assert len(bench) == 12  # 6 pairs x 2 sets; Table 8's n is 6 x (103 + 102) = 1,230
    items = bench.items.set_index("item_id")
    cross = items.loc["A/mug_plate/right_of_vs_on"]
    assert (cross["image_base"], cross["image_foil"]) == ("controlled_images/mug_right_of_plate"
                                                          ".jpeg",
                                                          "controlled_images/mug_on_plate.jpeg")
    assert (cross["caption_base"], cross["caption_foil"]) == ("A mug right of a plate",
                                                              "A mug on a plate")
    assert cross["axis"] == "cross" and cross["scene_id"] == "A/mug_plate"
    assert items.loc["B/cube_sphere/in-front_of_vs_behind", "axis"] == "front_behind"
    assert sorted(items["axis"].value_counts().items()) == [
        ("cross", 8), ("front_behind", 1), ("left_right", 2), ("on_under", 1)]
    axis = whatsup.load_pairs(f"{tmp_path}?pairs=axis", check_images=False)
    assert len(axis) == 4 and set(axis.items["edit_type"]) == {"left_right", "on_under",
                                                               "front_behind"}
    with pytest.raises(ValueError, match="pairs"):
        whatsup.load_pairs(f"{tmp_path}?pairs=some")


def test_whatsup_published_counts_are_412_and_408(tmp_path):
    _whatsup_set(tmp_path, "A", "mug", "plate", ("left_of", "right_of", "on"))
    _whatsup_set(tmp_path, "B", "cube", "sphere", ("left_of", "right_of"))
    with pytest.warns(LoaderWarning) as caught:
        whatsup.load(tmp_path)
    text = " | ".join(str(w.message) for w in caught)
    assert "the published release has 412" in text and "the published release has 408" in text
    with pytest.warns(LoaderWarning, match="mug/plate: 3 images in the set, not 4"):
        assert len(whatsup.load_pairs(tmp_path, check_images=False)) == 3 + 1


# --- SugarCrepe: the five types of Table 8 without --allow-partial -----------------------------
@pytest.mark.skipif(not (REAL_SUGARCREPE / "swap_obj.json").exists(),
                    reason="the real SugarCrepe release is expected at ../shared/data/sugarcrepe "
                           "beside the checkout (the project's shared data folder)")
def test_sugarcrepe_table8_subset_of_the_real_release():
    assert (REAL_SUGARCREPE / "swap_obj.json").exists(), "../shared/data/sugarcrepe expected"
    with warnings.catch_warnings():
        warnings.simplefilter("error", LoaderWarning)
        bench = sugarcrepe.load(f"{REAL_SUGARCREPE}?subset=table8", check_images=False)
    assert len(bench) == 4757 and bench.name == "sugarcrepe_table8"
    assert set(bench.items["edit_type"]) == set(sugarcrepe.TABLE8_TYPES)
    assert not bench.manifest.partial


def test_sugarcrepe_types_option_needs_only_the_named_files(tmp_path):
    for t in ("replace_obj", "swap_att"):
        write_json(tmp_path / f"{t}.json", {"0": {"filename": "a.jpg", "caption": "c",
                                                  "negative_caption": "n"}})
    with pytest.raises(BenchmarkError, match="--allow-partial"):
        sugarcrepe.load(tmp_path, check_images=False)
    bench = sugarcrepe.load(f"{tmp_path}?types=replace_obj,swap_att", check_images=False)
    assert len(bench) == 2 and not bench.manifest.partial
    assert bench.manifest.extras["expected_counts"] == {"replace_obj": 1652, "swap_att": 666}
    with pytest.raises(BenchmarkError, match="has no replace_att.json"):
        sugarcrepe.load(f"{tmp_path}?subset=table8", check_images=False)
    with pytest.raises(ValueError, match="unknown subset"):
        sugarcrepe.load(f"{tmp_path}?subset=table9", check_images=False)


# --- SugarCrepe++: one result per instance -----------------------------------------------------
# Evidence: github.com/Sri-Harsha/scpp data/<type>.json entries {"id", "filename", "caption",
# "caption2", "negative_caption"}; ITT = both positives above the negative.
def _scpp(root: Path) -> Path:
    instances = [  # on a red image: ColourEncoder scores a caption by its colour word
        {"id": 0, "filename": "000000000139.jpg", "caption": "a red cup",
         "caption2": "the red cup", "negative_caption": "a blue cup"},      # both beat N
        {"id": 1, "filename": "000000000139.jpg", "caption": "a red mug",
         "caption2": "a mug", "negative_caption": "a green mug"},          # P2 ties N: fails
    ]
    for t in sugarcrepe_pp.EXPECTED_COUNTS:
        write_json(root / "data" / f"{t}.json", instances if t == "replace_att" else [])
    solid(root / "coco" / "000000000139.jpg", "red")
    return root


def test_sugarcrepe_pp_counts_one_result_per_instance(tmp_path):
    root = _scpp(tmp_path)
    spec = f"{root / 'data'}?images={root / 'coco'}"
    per_instance = sugarcrepe_pp.load(spec)
    per_item = sugarcrepe_pp.load(f"{spec}&unit=item")
    assert per_instance.manifest.checksum != per_item.manifest.checksum  # runs never mix
    long = long_outcomes(evaluate(ColourEncoder(), per_instance, progress=False))
    assert long["item_id"].tolist() == ["replace_att/0", "replace_att/1"]
    assert long["outcome"].tolist() == [1.0, 0.0] and long["tie"].tolist() == [False, True]
    assert long["chance"].tolist() == pytest.approx([1 / 3, 1 / 3])
    assert long["unit_items"].tolist() == [2, 2]
    items = long_outcomes(evaluate(ColourEncoder(), per_item, progress=False))
    assert len(items) == 4 and items["outcome"].mean() == 0.75
    with pytest.raises(ValueError, match="unit"):
        sugarcrepe_pp.load(f"{spec}&unit=pair")
