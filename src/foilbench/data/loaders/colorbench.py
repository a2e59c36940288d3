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

Two foilbench forms (``?form=``):

* ``t2i`` (default), CompoSET Table 8's ("T2I for image-foil-only benchmarks (NaturalBench,
  ColorBench)"): kind ``image_choice``, one item per recolouring, the original against that
  recolouring under the same prompt: caption = the original row's ``"<question> <correct
  option>"`` (``?text=question`` keeps the bare question), images = [original, recolouring],
  scored by T2I R@1 (chance 1/2). Table 8 does not print its prompt text; this one is ours.
  ``edit_type`` = the recolouring's file stem.
* ``i2t``: kind ``choice``, one item per robustness row: the image and the captions
  ``"<question> <option>"`` with the correct option first, scored by I2T R@1 (the negatives are
  texts). The paper's robustness (an original and all its recolourings right,
  ``process_robustness``: ``if ori_bool and False not in list_new_bool``) is the AND of the
  items sharing ``instance_id``. ``?tasks=all`` also loads the Perception/Reasoning rows.

An original is the stem without ``_`` and a recolouring ``<id>_<k>``, as
``process_robustness`` splits ``filename``. Metadata: ``category`` = task, ``condition`` =
original / recolored, ``instance_id``.
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
    LoaderOptionError,
    finish,
    loader_options,
    manifest_for,
    takes_options,
)
from foilbench.data.loaders.hf_parquet import embedded_paths, images_root, read_split
from foilbench.errors import BenchmarkError

NAME = "colorbench"
DOWNLOAD_NOTE = ("huggingface-cli download umd-zhou-lab/ColorBench --repo-type dataset "
                 "--local-dir DIR")
COLUMNS = ("type", "task", "filename", "choices", "answer", "image")
OPTION = re.compile(r"\(([A-Z])\)\s*")
FORMS = ("t2i", "i2t")
TEXTS = ("answer", "question")


def parse_choices(choices: object, where: str) -> dict[str, str]:
    """``"(A) red (B) blue"`` or ``["(A) red", ...]`` / ``["red", ...]`` -> {"a": "red", ...}."""
    if isinstance(choices, (list, tuple, np.ndarray)):
        texts = [str(c) for c in choices]
        matches = [OPTION.match(t) for t in texts]
        if all(matches):
            return {m.group(1).lower(): OPTION.sub("", t, count=1).strip()
                    for m, t in zip(matches, texts, strict=True) if m is not None}
        return {chr(ord("a") + k): t.strip() for k, t in enumerate(texts)}
    parts = OPTION.split(str(choices))
    options = {parts[k].lower(): parts[k + 1].strip() for k in range(1, len(parts) - 1, 2)}
    if not options:
        raise BenchmarkError(f"{where}: column 'choices' has no (A)/(B)... options: {choices!r}")
    return options


def read_rows(table: pd.DataFrame, paths: list[str], question_col: str,
              where: str) -> list[dict]:
    """One record per row: the image path, question, captions (correct option first)."""
    rows = []
    for r, rec in enumerate(table.to_dict(orient="records")):
        here = f"{where}, row filename={rec['filename']!r}"
        opts = parse_choices(rec["choices"], here)
        answer = str(rec["answer"]).strip("() ").lower()
        if answer not in opts:
            raise BenchmarkError(f"{here}: answer {rec['answer']!r} is not among the choices")
        question = str(rec[question_col]).strip()
        captions = [f"{question} {opts[answer]}"] + [f"{question} {t}" for k, t in opts.items()
                                                     if k != answer]
        stem = PurePosixPath(str(rec["filename"])).stem
        rows.append({"item_id": f"{r}:{stem}", "image": paths[r], "captions": captions,
                     "question": question, "stem": stem, "category": rec["task"],
                     "condition": "recolored" if "_" in stem else "original",
                     "instance_id": f"{rec['task']}/{stem.split('_')[0]}"})
    return rows


def t2i_items(rows: list[dict], text: str, findings: Findings) -> pd.DataFrame:
    """Per instance: the original against each recolouring, under the original's prompt."""
    by_instance: dict[str, list[dict]] = {}
    for row in rows:
        by_instance.setdefault(row["instance_id"], []).append(row)
    items, lonely = [], 0
    for instance, group in by_instance.items():
        originals = [g for g in group if g["condition"] == "original"]
        recoloured = [g for g in group if g["condition"] == "recolored"]
        if len(originals) != 1 or not recoloured:
            lonely += 1
            continue
        orig = originals[0]
        caption = orig["captions"][0] if text == "answer" else orig["question"]
        for rec in recoloured:
            if rec["question"] != orig["question"]:
                findings.warn(f"{instance}: {rec['stem']} asks {rec['question']!r}, the "
                              f"original {orig['question']!r}; the original's prompt is used")
            items.append({"item_id": f"{instance}/{rec['stem']}", "caption": caption,
                          "images": [orig["image"], rec["image"]], "category": orig["category"],
                          "edit_type": rec["stem"], "condition": "recolored",
                          "instance_id": instance})
    if lonely:
        findings.warn(f"{lonely} instance(s) lack one original or any recolouring; no T2I item")
    return pd.DataFrame(items)


def _form_text(options: dict[str, str]) -> tuple[str, str]:
    form, text = options.get("form", "t2i"), options.get("text", "answer")
    if form not in FORMS or text not in TEXTS:
        raise LoaderOptionError(f"{NAME}: form must be one of {', '.join(FORMS)} and text one "
                                f"of {', '.join(TEXTS)} (got form={form!r}, text={text!r})")
    return form, text


@takes_options("images", "tasks", "form", "text", check=_form_text)
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = loader_options(path, load)
    form, text = _form_text(options)
    files, table = read_split(folder, "test", NAME, COLUMNS)
    question_col = next((c for c in ("question", "prompt") if c in table.columns), None)
    if question_col is None:
        raise BenchmarkError(f"{files[0]}: missing column question (or prompt) (have: "
                             f"{', '.join(map(str, table.columns))})")
    findings = Findings(NAME)
    if form == "t2i" or options.get("tasks", "robustness") == "robustness":
        table = table[table["type"].astype(str).str.lower() == "robustness"]
    table = table.reset_index(drop=True)
    root = images_root(folder, options)
    sources: dict = {}
    paths = embedded_paths(table, ("image",), root, "test", check_images, sources)["image"]
    rows = read_rows(table, paths, question_col, files[0].name)
    if not rows:
        findings.warn("no Robustness rows found")
    if form == "t2i":
        items = t2i_items(rows, text, findings)
        manifest = manifest_for(
            NAME, "t2i", license="Apache-2.0",
            source="https://huggingface.co/datasets/umd-zhou-lab/ColorBench",
            description="ColorBench colour robustness as T2I: each original against each "
                        "recolouring under the same prompt (CompoSET Table 8)",
            extras={"form": form, "text": text, "question_column": question_col})
    else:
        items = pd.DataFrame(rows).drop(columns=["question", "stem"], errors="ignore")
        manifest = manifest_for(
            NAME, "i2t", license="Apache-2.0",
            source="https://huggingface.co/datasets/umd-zhou-lab/ColorBench",
            description="ColorBench colour robustness: original and recoloured images, "
                        "question + answer options as captions",
            extras={"form": form, "question_column": question_col})
        manifest.extras["table8_metric"] = None  # Table 8 scores ColorBench by T2I (form=t2i)
    manifest.extras["counts"] = dict(Counter(items["category"])) if len(items) else {}
    return finish(manifest, items, root, findings, on_invalid=on_invalid,
                  check_images=check_images, sources=sources)
