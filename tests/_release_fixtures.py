"""Releases whose images are embedded or derived, written in their published layout.

Each builder names its evidence: the columns and file names are the release's own (Hugging Face
dataset viewer / the authors' scripts), with a few rows of tiny images.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from PIL import Image

from _loader_fixtures import hf_image, write_json


def bivlc(root: Path) -> Path:
    """imirandam/BiVLC: data/test-*.parquet, columns image, caption, negative_caption,
    negative_image, type, subtype; the authors' code (github.com/IMirandaM/BiVLC) reads
    load_dataset("imirandam/BiVLC", split="test") and images['image'] /
    images['negative_image'], captions['caption'] / captions['negative_caption']."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    pd.DataFrame({
        "image": [hf_image((200, 0, 0), "a.jpg"), hf_image((0, 200, 0), "b.jpg")],
        "caption": ["a red cup", "a dog on a mat"],
        "negative_caption": ["a blue cup", "a mat on a dog"],
        "negative_image": [hf_image((0, 0, 200), "c.jpg"), hf_image((9, 9, 9), "d.jpg")],
        "type": ["Replace", "Swap"], "subtype": ["Attribute", "Object"],
    }).to_parquet(root / "data/test-00000-of-00001.parquet")
    return root


def colorswap_parquet(root: Path) -> Path:
    """stanfordnlp/colorswap on the Hub: data/{train,test}-*.parquet, embedded image_1/2."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    for split, n in (("train", 2), ("test", 1)):
        pd.DataFrame({"id": list(range(n)),
                      "image_1": [hf_image((200, 0, 0), "1.png")] * n,
                      "image_2": [hf_image((0, 0, 200), "2.png")] * n,
                      "caption_1": ["a red ball and a blue cube"] * n,
                      "caption_2": ["a blue ball and a red cube"] * n,
                      "image_source": ["midjourney"] * n, "caption_source": ["human"] * n,
                      }).to_parquet(root / f"data/{split}-00000-of-00001.parquet")
    return root


def colorswap_json(root: Path) -> Path:
    """github.com/Top34051/colorswap README "Usage": data/{train,test}.json + data/images.zip;
    the example entry verbatim (ids 0, 1 here), images/img_<id>_<k>.png."""
    for split, ids in (("train", [5]), ("test", [0, 1])):
        entries = [{"id": i,
                    "caption_1": "someone holding a yellow umbrella wearing a white dress",
                    "caption_2": "someone holding a white umbrella wearing a yellow dress",
                    "image_1": f"images/img_{i}_1.png", "image_2": f"images/img_{i}_2.png",
                    "image_source": "midjourney", "caption_source": "human"} for i in ids]
        write_json(root / "data" / f"{split}.json", entries)
        for i in ids:
            for k, colour in ((1, (230, 220, 0)), (2, (250, 250, 250))):
                path = root / "data" / "images" / f"img_{i}_{k}.png"
                path.parent.mkdir(parents=True, exist_ok=True)
                Image.new("RGB", (4, 4), colour).save(path)
    return root


def naturalbench(root: Path, type_column: str = "Question Type") -> Path:
    """BaiqiL/NaturalBench: data/train-*.parquet; the type column is "Question Type"
    (example.py) or "Question_Type" (naturalbench_vqa.py) depending on the upload."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    pd.DataFrame({
        "Index": [0], "Image_0": [hf_image((200, 0, 0), "a.jpg")],
        "Image_1": [hf_image((0, 0, 200), "b.jpg")],
        "Question_0": ["Is the cup red?"], "Image_0_Question_0": ["Yes"],
        "Image_1_Question_0": ["No"], "Question_1": ["Is the cup blue?"],
        "Image_0_Question_1": ["No"], "Image_1_Question_1": ["Yes"],
        type_column: ["yes_no"], "Source": ["x"],
    }).to_parquet(root / "data/train-00000-of-00001.parquet")
    return root


def colorbench(root: Path) -> Path:
    """umd-zhou-lab/ColorBench: data/test-*.parquet with the fields the authors'
    evaluation/metrics_eval.py reads (type, task, filename, choices, answer) + question, image.
    Robustness originals are "<id>.<ext>", recolourings "<id>_<k>.<ext>"."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    names = ["robust/12.png", "robust/12_1.png", "robust/12_2.png", "robust/13.png",
             "robust/13_1.png", "recog/3.png"]
    colours = [(0, 0, 200), (0, 200, 0), (200, 0, 0), (5, 5, 5), (60, 60, 60), (9, 9, 9)]
    pd.DataFrame({
        "idx": list(range(6)),
        "type": ["Robustness"] * 5 + ["Perception"],
        "task": ["Color Robustness"] * 5 + ["Color Recognition"],
        "filename": names,
        "question": ["What colour is the car?"] * 3 + ["How many cups?"] * 2 + ["Which?"],
        "choices": ["(A) red (B) blue (C) green"] * 3 + ["(A) 1 (B) 2"] * 2 + ["(A) x (B) y"],
        "answer": ["(B)"] * 3 + ["(A)"] * 2 + ["(A)"],
        "image": [hf_image(c, n) for c, n in zip(colours, names, strict=True)],
    }).to_parquet(root / "data/test-00000-of-00001.parquet")
    return root


def winoground_parquet(root: Path) -> Path:
    """facebook/winoground, current Hub layout: data/test-*.parquet with the examples.jsonl
    fields and image_0/image_1 embedded (load_dataset(...)["test"][k]["image_0"] is an image)."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    pd.DataFrame({
        "id": [0, 1],
        "image_0": [hf_image((200, 0, 0), "ex_0_img_0.png"), hf_image((0, 0, 200),
                                                                  "ex_1_img_0.png")],
        "image_1": [hf_image((0, 200, 0), "ex_0_img_1.png"), hf_image((9, 9, 9),
                                                                  "ex_1_img_1.png")],
        "caption_0": ["an old person kisses a young person",
                      "the person with the ponytail packs stuff"],
        "caption_1": ["a young person kisses an old person",
                      "the person packs stuff with the ponytail"],
        "tag": ["Noun", "Relation"], "secondary_tag": ["", ""], "num_main_preds": [1, 1],
        "collapsed_tag": ["Object", "Relation"],
    }).to_parquet(root / "data/test-00000-of-00001.parquet")
    return root


def aro(root: Path) -> Path:
    """mertyg/vision-language-models-are-bows: visual_genome_{relation,attribution}.json with
    image_path, bbox_x/y/w/h, true_caption, false_caption; images/ beside them."""
    (root / "images").mkdir(parents=True, exist_ok=True)
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
