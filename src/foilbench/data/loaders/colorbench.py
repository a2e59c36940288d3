"""ColorBench (Liang et al., 2025), the Color Robustness task, read as caption choice.

Source: huggingface.co/datasets/umd-zhou-lab/ColorBench (Apache-2.0), Parquet shards
``data/test-*.parquet`` with images embedded as bytes; code at github.com/tianyi-lab/ColorBench.

Native format (fields used by the authors' ``evaluation/metrics_eval.py``): ``type``
(Perception / Reasoning / Robustness), ``task``, ``filename``, ``choices`` and ``answer``
(``"(B)"``), plus the question (``question``, or ``prompt`` in some versions) and ``image``.
Robustness rows share one question per source image: the original (``<id>.<ext>``) and its
recolourings (``<id>_<k>.<ext>``). Choices are a list or a string ``"(A) red (B) blue ..."``.

Expected counts: not fixed here (the card gives 1,448 instances over all tasks; the robustness
share was not verified); counts per task are recorded in ``manifest.extras["counts"]``.

foilbench form: kind ``choice``, one item per robustness row: the image and the captions
``"<question> <option>"`` with the correct option first, scored by I2T R@1 (the negatives are
texts). The paper's robustness (an original and all its recolourings right) is the AND of the
items sharing ``instance_id``. ``?tasks=all`` also loads the Perception/Reasoning rows.
Metadata: ``category`` = task, ``condition`` = original / recolored, ``instance_id``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    finish,
    manifest_for,
    require_columns,
    split_spec,
)
from foilbench.data.loaders.hf_parquet import (
    embedded_paths,
    images_root,
    read_shards,
    shard_files,
)
from foilbench.errors import BenchmarkError

NAME = "colorbench"
DOWNLOAD_NOTE = ("huggingface-cli download umd-zhou-lab/ColorBench --repo-type dataset "
                 "--local-dir DIR")
COLUMNS = ("type", "task", "filename", "choices", "answer", "image")
OPTION = re.compile(r"\(([A-Z])\)\s*")


def parse_choices(choices: object, where: str) -> dict[str, str]:
    """``"(A) red (B) blue"`` or ``["(A) red", ...]`` / ``["red", ...]`` -> {"a": "red", ...}."""
    if isinstance(choices, (list, tuple, np.ndarray)):
        texts = [str(c) for c in choices]
        if all(OPTION.match(t) for t in texts):
            return {OPTION.match(t).group(1).lower(): OPTION.sub("", t, count=1).strip()
                    for t in texts}
        return {chr(ord("a") + k): t.strip() for k, t in enumerate(texts)}
    parts = OPTION.split(str(choices))
    options = {parts[k].lower(): parts[k + 1].strip() for k in range(1, len(parts) - 1, 2)}
    if not options:
        raise BenchmarkError(f"{where}: column 'choices' has no (A)/(B)... options: {choices!r}")
    return options


def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = split_spec(path, allowed=("images", "tasks"))
    files = shard_files(folder, "test", NAME)
    table = read_shards(files)
    require_columns(table, COLUMNS, files[0])
    question_col = next((c for c in ("question", "prompt") if c in table.columns), None)
    if question_col is None:
        raise BenchmarkError(f"{files[0]}: missing column question (or prompt) (have: "
                             f"{', '.join(map(str, table.columns))})")
    findings = Findings(NAME)
    if options.get("tasks", "robustness") == "robustness":
        table = table[table["type"].astype(str).str.lower() == "robustness"]
    table = table.reset_index(drop=True)
    root = images_root(folder, options)
    paths = embedded_paths(table, ("image",), root, "test", check_images)["image"]
    rows = []
    for r, rec in enumerate(table.to_dict(orient="records")):
        where = f"{files[0].name}, row filename={rec['filename']!r}"
        opts = parse_choices(rec["choices"], where)
        answer = str(rec["answer"]).strip("() ").lower()
        if answer not in opts:
            raise BenchmarkError(f"{where}: answer {rec['answer']!r} is not among the choices")
        question = str(rec[question_col]).strip()
        captions = [f"{question} {opts[answer]}"] + [f"{question} {t}" for k, t in opts.items()
                                                     if k != answer]
        stem = PurePosixPath(str(rec["filename"])).stem
        rows.append({"item_id": f"{r}:{stem}", "image": paths[r], "captions": captions,
                     "category": rec["task"],
                     "condition": "recolored" if "_" in stem else "original",
                     "instance_id": f"{rec['task']}/{stem.split('_')[0]}"})
    items = pd.DataFrame(rows)
    if items.empty:
        findings.warn("no Robustness rows found")
    manifest = manifest_for(
        NAME, "i2t", license="Apache-2.0",
        source="https://huggingface.co/datasets/umd-zhou-lab/ColorBench",
        description="ColorBench colour robustness: original and recoloured images, "
                    "question + answer options as captions",
        extras={"counts": dict(Counter(items["category"])) if len(items) else {},
                "question_column": question_col})
    return finish(manifest, items, root, findings, on_invalid=on_invalid,
                  check_images=check_images)
