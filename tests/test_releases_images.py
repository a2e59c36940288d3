"""Image-side releases in their published layouts and Table 8's protocols (issue 12).

Winoground's Parquet layout, ColorSwap's GitHub JSON form, NaturalBench's two type-column
spellings, ColorBench as T2I, VSR's random/zero-shot splits, MMVP's pair accuracy as T2I.
"""

from __future__ import annotations

import pytest
from PIL import Image

import _release_fixtures as rel
from _core_helpers import ColourEncoder
from _loader_fixtures import png, write_jsonl
from foilbench.data.loaders import colorbench, colorswap, mmvp, naturalbench, vsr, winoground
from foilbench.errors import BenchmarkError
from foilbench.scoring.engine import evaluate

pytestmark = pytest.mark.filterwarnings("ignore::foilbench.data.loaders.common.LoaderWarning")


def test_winoground_current_parquet_layout(tmp_path):
    root = rel.winoground_parquet(tmp_path)
    text_only = winoground.load(root, check_images=False)
    assert not (root / "_foilbench_images").exists()
    bench = winoground.load(root)
    assert bench.manifest.extras["layout"] == "data/test-*.parquet"
    assert bench.items["image_base"].tolist() == text_only.items["image_base"].tolist()
    row = bench.items.set_index("item_id").loc["1"]
    assert (row["caption_base"], row["caption_foil"]) == (
        "the person with the ponytail packs stuff", "the person packs stuff with the ponytail")
    with Image.open(bench.root / row["image_base"]) as im:  # image_0 goes with caption_0
        assert im.getpixel((0, 0)) == (0, 0, 200)
    assert row["category"] == "Relation" and bench.manifest.primary_metric == "group"
    (tmp_path / "empty").mkdir()
    with pytest.raises(BenchmarkError, match="no examples.jsonl .* no Parquet shards"):
        winoground.load(tmp_path / "empty", check_images=False)


def test_colorswap_github_json_form(tmp_path):
    root = rel.colorswap_json(tmp_path)
    bench = colorswap.load(root)
    assert bench.manifest.extras["layout"] == "data/<split>.json + images/"
    assert bench.root == root / "data"
    assert bench.items["item_id"].tolist() == ["test/0", "test/1"]
    first = bench.items.iloc[0]
    assert (first["image_base"], first["image_foil"]) == ("images/img_0_1.png",
                                                          "images/img_0_2.png")
    assert first["caption_base"].startswith("someone holding a yellow umbrella")
    every = colorswap.load(f"{root}?split=all", check_images=False)
    assert every.items["split"].tolist() == ["train", "test", "test"]
    (root / "data/images/img_1_2.png").unlink()
    with pytest.raises(BenchmarkError, match="img_1_2.png"):
        colorswap.load(root)


@pytest.mark.parametrize("column", ["Question Type", "Question_Type"])
def test_naturalbench_reads_both_type_column_spellings(tmp_path, column):
    bench = naturalbench.load(rel.naturalbench(tmp_path, column), check_images=False)
    assert bench.items["category"].tolist() == ["yes_no", "yes_no"]
    assert bench.manifest.extras["question_type_column"] == column


def test_naturalbench_without_a_type_column_names_both(tmp_path):
    root = rel.naturalbench(tmp_path, "Kind")
    with pytest.raises(BenchmarkError, match="Question Type or Question_Type"):
        naturalbench.load(root, check_images=False)


def test_colorbench_t2i_original_against_each_recolouring(tmp_path):
    bench = colorbench.load(rel.colorbench(tmp_path))
    assert bench.kind == "image_choice" and bench.manifest.extras["table8_metric"] == "t2i"
    items = bench.items.set_index("item_id")
    assert items.index.tolist() == ["Color Robustness/12/12_1", "Color Robustness/12/12_2",
                                    "Color Robustness/13/13_1"]
    first = items.loc["Color Robustness/12/12_1"]
    assert first["caption"] == "What colour is the car? blue"  # the original's prompt
    with Image.open(bench.root / first["images"][0]) as im:  # the original comes first
        assert im.getpixel((0, 0)) == (0, 0, 200)
    bare = colorbench.load(f"{tmp_path}?text=question", check_images=False)
    assert bare.items["caption"].tolist()[:2] == ["What colour is the car?"] * 2
    caption_choice = colorbench.load(f"{tmp_path}?form=i2t", check_images=False)
    assert caption_choice.kind == "choice" and len(caption_choice) == 5
    assert caption_choice.manifest.extras["table8_metric"] is None


def _vsr_line(image, caption, label, relation="on"):
    # the format of data/README.md in github.com/cambridgeltl/visual-spatial-reasoning
    return {"image": image, "image_link": f"http://images.cocodataset.org/train2017/{image}",
            "caption": caption, "label": label, "relation": relation, "annotator_id": 31,
            "vote_true_validator_id": [2, 6], "vote_false_validator_id": []}


def test_vsr_random_and_zeroshot_are_never_merged(tmp_path):
    lines = [_vsr_line("000000000001.jpg", "The cat is on the bed.", 1),
             _vsr_line("000000000002.jpg", "The cat is on the bed.", 0)]
    for variant in ("random", "zeroshot"):  # the same file names in both (data/README.md)
        write_jsonl(tmp_path / f"data/splits/{variant}/test.jsonl", lines)
        write_jsonl(tmp_path / f"data/splits/{variant}/train.jsonl", lines)
    write_jsonl(tmp_path / "data/data_files/all_vsr_validated_data.jsonl", lines * 3)
    for k in (1, 2):
        png(tmp_path / "coco" / f"00000000000{k}.jpg")
    bench = vsr.load(f"{tmp_path}?images={tmp_path / 'coco'}")
    assert bench.name == "vsr_random" and bench.items["item_id"].tolist() == ["random/test/1"]
    assert bench.manifest.extras["files"] == ["data/splits/random/test.jsonl"]
    assert "random/test" in bench.manifest.description
    zero = vsr.load(f"{tmp_path}?variant=zeroshot", check_images=False)
    assert zero.name == "vsr_zeroshot" and zero.items["item_id"].tolist() == ["zeroshot/test/1"]
    every = vsr.load(f"{tmp_path}?split=all", check_images=False)
    assert sorted(every.items["item_id"]) == ["random/test/1", "random/train/1"]
    one = vsr.load(tmp_path / "data/splits/zeroshot", check_images=False)
    assert one.name == "vsr_zeroshot"
    with pytest.raises(ValueError, match="variant"):
        vsr.load(f"{tmp_path}?variant=fewshot", check_images=False)


def test_mmvp_pair_accuracy_is_the_t2i_half(tmp_path):
    """scripts/evaluate_vlm.py (tsb0601/MMVP): probs1 = logits_per_text1.softmax(dim=-1), a
    softmax over the two images for statement 1; a pair counts when pred1 == gt1 and
    pred2 == gt2. Here both statements pick their image (T2I right) while image 2 prefers
    statement 1 (I2T wrong): the authors count the pair, so it is T2I."""
    (tmp_path / "Questions.csv").write_text(
        "Question ID,Type,Statement\n1,Color,the ball is red\n2,Color,the ball is blue\n")
    for k, colour in ((1, (255, 0, 0)), (2, (204, 0, 153))):  # image 2: 0.8 red, 0.6 blue
        path = tmp_path / f"MLLM_VLM Images/Color/{k}.jpg"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (4, 4), colour).save(path, format="PNG")
    bench = mmvp.load(tmp_path)
    result = evaluate(ColourEncoder(), bench, progress=False)
    assert list(result.outcomes["t2i"]) == [1.0] and list(result.outcomes["i2t"]) == [0.0]
    assert list(result.outcomes["group"]) == [0.0]
    labels = bench.manifest.extras["metric_labels"]
    assert labels["t2i"].startswith("MMVP pair accuracy") and "Table 8" in labels["group"]
    assert bench.manifest.extras["authors_metric"] == "t2i"
