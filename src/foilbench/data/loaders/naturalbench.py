"""NaturalBench (Li et al., NeurIPS 2024 D&B): natural adversarial VQA pairs, read as T2I.

Source: huggingface.co/datasets/BaiqiL/NaturalBench (Apache-2.0), Parquet shards
``data/train-*.parquet`` with images embedded as bytes (``huggingface-cli download
BaiqiL/NaturalBench --repo-type dataset``). The ``NaturalBench-Retrieval.zip`` there holds
pickles and is not read (unsafe format).

Native format: columns ``Index``, ``Image_0``, ``Image_1``, ``Question_0``,
``Image_0_Question_0``, ``Image_1_Question_0``, ``Question_1``, ``Image_0_Question_1``,
``Image_1_Question_1``, the question type (yes_no / multiple_choice), ``Source``. Each question
has one answer per image; by construction the answers differ between the two images. The type
column is ``Question_Type`` in the earlier upload and in the authors' ``naturalbench_vqa.py``
(``SUFFIX_FOR_VQA[item["Question_Type"]]``) and ``Question Type`` in the current one and in
their ``example.py`` (``item["Question Type"]``); both are read.

Expected counts: 1,900 samples (3,800 questions).

foilbench form: kind ``image_choice``: every yes/no question whose two answers are one "Yes"
and one "No" becomes an item (caption = the question, images = [the "Yes" image, the other]),
scored by T2I R@1, as CompoSET Table 8 reads NaturalBench. Other questions are counted in
``manifest.extras["skipped_questions"]``. Metadata: ``category`` = Question Type, ``source``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    check_counts,
    finish,
    loader_options,
    manifest_for,
    takes_options,
)
from foilbench.data.loaders.hf_parquet import embedded_paths, images_root, read_split
from foilbench.errors import BenchmarkError

NAME = "naturalbench"
EXPECTED_SAMPLES = 1900
DOWNLOAD_NOTE = ("huggingface-cli download BaiqiL/NaturalBench --repo-type dataset "
                 "--include 'data/*' --local-dir DIR")
COLUMNS = ("Index", "Image_0", "Image_1", "Question_0", "Image_0_Question_0",
           "Image_1_Question_0", "Question_1", "Image_0_Question_1", "Image_1_Question_1")
TYPE_COLUMNS = ("Question Type", "Question_Type")  # current upload, earlier upload


def _yes(answer: object) -> bool | None:
    text = str(answer).strip().lower()
    return True if text == "yes" else False if text == "no" else None


@takes_options("images")
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = loader_options(path, load)
    files, table = read_split(folder, "train", NAME, COLUMNS)
    type_col = next((c for c in TYPE_COLUMNS if c in table.columns), None)
    if type_col is None:
        raise BenchmarkError(f"{files[0]}: missing column {' or '.join(TYPE_COLUMNS)} (have: "
                             f"{', '.join(map(str, table.columns))})")
    findings = Findings(NAME)
    check_counts(findings, "release", {"samples": len(table)}, {"samples": EXPECTED_SAMPLES})
    root = images_root(folder, options)
    sources: dict = {}
    paths = embedded_paths(table, ("Image_0", "Image_1"), root, "train", check_images, sources)
    rows, skipped = [], 0
    for r, rec in enumerate(table.to_dict(orient="records")):
        for q in (0, 1):
            a0, a1 = _yes(rec[f"Image_0_Question_{q}"]), _yes(rec[f"Image_1_Question_{q}"])
            if a0 is None or a1 is None or a0 == a1:
                skipped += 1
                continue
            pos, neg = (0, 1) if a0 else (1, 0)
            rows.append({"item_id": f"{rec['Index']}/q{q}", "caption": rec[f"Question_{q}"],
                         "images": [paths[f"Image_{pos}"][r], paths[f"Image_{neg}"][r]],
                         "category": rec[type_col], "source": rec.get("Source")})
    manifest = manifest_for(
        NAME, "t2i", license="Apache-2.0",
        source="https://huggingface.co/datasets/BaiqiL/NaturalBench",
        description="NaturalBench yes/no questions as 1-of-2 image choice (T2I)",
        extras={"expected_samples": EXPECTED_SAMPLES, "skipped_questions": skipped,
                "question_type_column": type_col})
    return finish(manifest, pd.DataFrame(rows), root, findings, on_invalid=on_invalid,
                  check_images=check_images, sources=sources)
