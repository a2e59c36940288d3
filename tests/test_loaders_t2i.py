"""Image-choice loaders (T2I R@1): NaturalBench and VSR, from native-format fixtures."""

from __future__ import annotations

import pandas as pd
import pytest

from _loader_fixtures import hf_image, png, write_jsonl
from foilbench.data.loaders import naturalbench, vsr
from foilbench.data.loaders.common import LoaderWarning

pytestmark = pytest.mark.filterwarnings("ignore::foilbench.data.loaders.common.LoaderWarning")


def test_naturalbench_yes_no_questions_become_image_choices(tmp_path):
    (tmp_path / "data").mkdir()
    pd.DataFrame({
        "Index": [0, 1],
        "Image_0": [hf_image((200, 0, 0), "a.jpg"), hf_image((0, 200, 0), "c.jpg")],
        "Image_1": [hf_image((0, 0, 200), "b.jpg"), hf_image((9, 9, 9), "d.jpg")],
        "Question_0": ["Is the cup red?", "Which is it? A. x B. y"],
        "Image_0_Question_0": ["Yes", "A"], "Image_1_Question_0": ["No", "B"],
        "Question_1": ["Is the cup blue?", "Is there a dog?"],
        "Image_0_Question_1": ["No", "Yes"], "Image_1_Question_1": ["Yes", "Yes"],
        "Question Type": ["yes_no", "multiple_choice"], "Source": ["x", "y"],
    }).to_parquet(tmp_path / "data/train-00000-of-00001.parquet")
    with pytest.warns(LoaderWarning, match="1900"):
        bench = naturalbench.load(tmp_path)
    assert bench.kind == "image_choice" and bench.manifest.extras["table8_metric"] == "t2i"
    items = bench.items.set_index("item_id")
    assert items.index.tolist() == ["0/q0", "0/q1"]  # sample 1: MCQ and an all-"Yes" question
    assert bench.manifest.extras["skipped_questions"] == 2
    red, blue = items.loc["0/q0", "images"], items.loc["0/q1", "images"]
    assert red == ["Image_0/train_00000.png", "Image_1/train_00000.png"]
    assert blue == red[::-1]  # the "Yes" image comes first
    assert (tmp_path / "_foilbench_images" / red[0]).exists()


def test_vsr_true_image_against_false_images(tmp_path):
    write_jsonl(tmp_path / "splits/random/test.jsonl", [
        {"image": "1.jpg", "caption": "The cat is on the bed.", "label": 1, "relation": "on",
         "subj": "cat", "obj": "bed"},
        {"image": "2.jpg", "caption": "The cat is on the bed.", "label": 0, "relation": "on",
         "subj": "cat", "obj": "bed"},
        {"image": "3.jpg", "caption": "The dog is under the car.", "label": 1,
         "relation": "under", "subj": "dog", "obj": "car"},
    ])
    write_jsonl(tmp_path / "splits/random/train.jsonl", [
        {"image": "9.jpg", "caption": "x", "label": 1, "relation": "near"}])
    for k in (1, 2, 3):
        png(tmp_path / "coco" / f"{k}.jpg")
    with pytest.warns(LoaderWarning, match="1 caption\\(s\\) occur with one label only"):
        bench = vsr.load(f"{tmp_path}?images={tmp_path / 'coco'}")
    assert bench.items["item_id"].tolist() == ["random/test/1"]
    assert bench.items.loc[0, "images"] == ["1.jpg", "2.jpg"]
    assert bench.items.loc[0, "edit_type"] == "on"
    assert bench.manifest.extras["unpaired_captions"] == 1
    every = vsr.load(f"{tmp_path}?split=all", check_images=False)
    assert sorted(every.manifest.extras["files"]) == ["splits/random/test.jsonl",
                                                      "splits/random/train.jsonl"]
