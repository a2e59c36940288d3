"""MMVP-VLM (Tong et al., CVPR 2024 "Eyes Wide Shut?"): CLIP-blind image pairs.

Source: huggingface.co/datasets/MMVP/MMVP_VLM (MIT): ``Questions.csv`` and the folder
``MLLM_VLM Images/<pattern>/<question id>.jpg``; ``huggingface-cli download MMVP/MMVP_VLM
--repo-type dataset``.

Native format: ``Questions.csv`` with three columns (question id, visual pattern type,
statement). Consecutive rows (ids 2k-1, 2k) form a pair: statement 2k-1 describes image 2k-1
and statement 2k describes image 2k (the authors' ``scripts/evaluate_vlm.py``). The authors
prompt CLIP with ``"a photo of " + statement``; ``?prompt=`` changes that prefix (empty keeps
the bare statement).

Expected counts: 9 visual patterns x 15 pairs = 135 pairs (270 images).

foilbench form: kind ``pair`` (base = odd id, foil = the next id), scored by Group (a pair is
right when both images pick their own statement and both statements their own image), the
metric of CompoSET Table 8. The authors' pair accuracy is the *T2I* half, not the I2T half:
``scripts/evaluate_vlm.py`` encodes both images with one statement at a time and takes
``logits_per_text1.softmax(dim=-1)``, a softmax over the two images for each text; a pair
counts when ``pred1 == gt1 and pred2 == gt2``, i.e. each statement picks its own image (a
tie, ``img1_score == 0.5``, goes to image 2 there; here a tie is a failure). The manifest
labels the metrics so (``extras["metric_labels"]``): ``t2i`` = "MMVP pair accuracy", ``group``
= Table 8's. ``category`` = the visual pattern.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    check_counts,
    finish,
    loader_options,
    manifest_for,
    read_table,
    require_dir,
    takes_options,
)
from foilbench.errors import BenchmarkError

NAME = "mmvp"
IMAGE_DIR = "MLLM_VLM Images"
EXPECTED_PAIRS = 135
PAIRS_PER_PATTERN = 15
DOWNLOAD_NOTE = "huggingface-cli download MMVP/MMVP_VLM --repo-type dataset --local-dir DIR"
DEFAULT_PROMPT = "a photo of "
METRIC_LABELS = {
    "t2i": "MMVP pair accuracy (the authors' evaluate_vlm.py: each statement picks its image)",
    "i2t": "I2T (each image picks its statement; not an MMVP-paper number)",
    "group": "Group (CompoSET Table 8)",
}


@takes_options("prompt")
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = loader_options(path, load)
    require_dir(folder, NAME, "the MMVP_VLM folder with Questions.csv")
    prompt = options.get("prompt", DEFAULT_PROMPT)
    file = folder / "Questions.csv"
    table = read_table(file)
    if table.shape[1] < 3:
        raise BenchmarkError(f"{file}: expected 3 columns (question id, type, statement), got "
                             f"{', '.join(map(str, table.columns))}")
    qid, qtype, statement = (table.iloc[:, k] for k in range(3))
    findings = Findings(NAME)
    if len(table) % 2:
        findings.warn(f"{file.name}: odd number of rows ({len(table)}); the last is unpaired")
    rows = []
    for k in range(0, len(table) - 1, 2):
        a, b = int(qid.iloc[k]), int(qid.iloc[k + 1])
        pattern = str(qtype.iloc[k])
        if str(qtype.iloc[k + 1]) != pattern:
            raise BenchmarkError(f"{file}: rows with ids {a} and {b} pair different types")
        rows.append({
            "item_id": f"{a}-{b}",
            "image_base": f"{IMAGE_DIR}/{pattern}/{a}.jpg",
            "image_foil": f"{IMAGE_DIR}/{pattern}/{b}.jpg",
            "caption_base": prompt + str(statement.iloc[k]),
            "caption_foil": prompt + str(statement.iloc[k + 1]),
            "category": pattern,
        })
    items = pd.DataFrame(rows)
    per_pattern = Counter(items["category"]) if len(items) else Counter()
    check_counts(findings, "pattern", dict(per_pattern),
                 {p: PAIRS_PER_PATTERN for p in per_pattern} or {"?": EXPECTED_PAIRS})
    if len(items) != EXPECTED_PAIRS:
        findings.warn(f"{len(items)} pairs; the published release has {EXPECTED_PAIRS}")
    manifest = manifest_for(
        NAME, "group", license="MIT", source="https://huggingface.co/datasets/MMVP/MMVP_VLM",
        description="MMVP-VLM: CLIP-blind pairs over 9 visual patterns",
        extras={"prompt": prompt, "expected_pairs": EXPECTED_PAIRS,
                "metric_labels": METRIC_LABELS, "authors_metric": "t2i"})
    return finish(manifest, items, folder, findings, on_invalid=on_invalid,
                  check_images=check_images)
