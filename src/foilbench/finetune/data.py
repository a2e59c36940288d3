"""Fine-tuning data from Auto-Comp benchmarks: concepts, their concept-disjoint split, and each
training positive's negatives grouped by error family.

Input: the ``autocomp-swap`` and ``autocomp-confusion`` items (any benchmark with the Auto-Comp
builder's columns ``concept_id``, ``task``, ``n_objects``, ``condition``, ``negative_set``,
``objects``, ``values``, ``captions``; ``true_negatives`` and ``caption_frame`` when present).

Split (Auto-Comp App. A.9): the concepts of the training task and N are split by concept, 80%
for training (10% of those for validation, early stopping) and 20% held out; a seeded
permutation of the sorted concept ids, so the split does not depend on item order.

Negatives never include one that is true of the image (``true_negatives``: paraphrases and
chains the drawn scene also satisfies): training a model to rank a true caption below the
positive would teach it the wrong thing. The paper does not discuss such negatives; this is
our choice. Error families (Auto-Comp §6, :func:`foilbench.analysis.autocomp.classify_confusion`):
``swap``, ``shared_objects`` (object-shared / attribute-different), ``shared_attributes``
(attribute-shared / object-different) and ``other`` (objects and values both differ). "the
fourth family is degenerate at N=2" (App. A.9): there ``other`` can only repeat one object and
one value ("a red cube and a red cube"), so at N = 2 it is left out of the draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from foilbench.finetune.config import FinetuneConfig, FinetuneError

FAMILIES = ("swap", "shared_objects", "shared_attributes", "other")
REQUIRED = ("concept_id", "task", "n_objects", "condition", "negative_set", "objects", "values",
            "captions", "image")


@dataclass(frozen=True)
class Example:
    """One training (or validation) positive: a concept's image in the training condition."""

    concept_id: str
    image: Path
    positive: str
    swap: tuple[str, ...]
    families: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class EvalItem:
    """One scored item: an image, ``captions[0]`` the positive, ``false_mask`` over the
    negatives (True: a false negative, which ``r1_valid`` keeps)."""

    item_id: str
    concept_id: str
    image: Path
    captions: tuple[str, ...]
    false_mask: tuple[bool, ...]
    negative_set: str
    condition: str
    task: str
    n_objects: int


@dataclass(frozen=True)
class Split:
    train: tuple[str, ...]
    val: tuple[str, ...]
    test: tuple[str, ...]


def items_frame(benchmarks: Sequence) -> pd.DataFrame:
    """The Auto-Comp items of ``benchmarks`` with an absolute ``image_path`` column; a
    benchmark without the columns is refused by name."""
    frames = []
    for bench in benchmarks:
        missing = [c for c in REQUIRED if c not in bench.items.columns]
        if missing:
            raise FinetuneError(f"benchmark {bench.name!r} lacks the Auto-Comp column(s) "
                                f"{', '.join(missing)}; give the autocomp-swap and "
                                "autocomp-confusion benchmarks (or a folder built like them)")
        df = bench.items.copy()
        df["image_path"] = [bench.image_path(rel) for rel in df["image"]]
        frames.append(df)
    if not frames:
        raise FinetuneError("no benchmark given; name the Auto-Comp benchmarks with --benchmark")
    return pd.concat(frames, ignore_index=True)


def split_concepts(concepts: Sequence[str], train_share: float = 0.8, val_share: float = 0.1,
                   seed: int = 0) -> Split:
    """Concept-disjoint split: a seeded permutation of the sorted ids, the first
    ``round(n * (1 - train_share))`` held out, then ``round(n_train * val_share)`` (at least
    one) for validation, the rest for training."""
    ids = sorted(set(concepts))
    n = len(ids)
    n_test = round(n * (1 - train_share))
    n_val = max(1, round((n - n_test) * val_share))
    if n_test < 1 or n - n_test - n_val < 1:
        raise FinetuneError(f"{n} concept(s) cannot be split {train_share:.0%}/"
                            f"{1 - train_share:.0%} with a validation share; build more "
                            "concepts (at least 3, better hundreds)")
    order = np.random.default_rng([seed, 0xF17E]).permutation(n)
    shuffled = [ids[i] for i in order]
    test = tuple(sorted(shuffled[:n_test]))
    val = tuple(sorted(shuffled[n_test:n_test + n_val]))
    train = tuple(sorted(shuffled[n_test + n_val:]))
    return Split(train, val, test)


def _false_negatives(row) -> list[str]:
    true = set(int(i) for i in (row.get("true_negatives") if "true_negatives" in row
                                and row.get("true_negatives") is not None else []))
    caps = list(row["captions"])
    return [caps[i] for i in range(1, len(caps)) if i not in true]


def _family(row, text: str) -> str:
    from foilbench.analysis.autocomp import classify_confusion
    from foilbench.negatives import Concept, unframe

    concept = Concept(row["task"], tuple(row["objects"]), tuple(row["values"]))
    frame = row.get("caption_frame") if "caption_frame" in row else None
    return classify_confusion(concept, unframe(text, frame) if frame else text)


def training_scope(df: pd.DataFrame, cfg: FinetuneConfig) -> pd.DataFrame:
    """The items of the training task, N and condition (A.9: Color N = 2 Minimal)."""
    scope = df[(df["task"] == cfg.task) & (df["n_objects"] == cfg.n_objects)
               & (df["condition"] == cfg.condition)]
    if scope.empty:
        have = sorted({(t, int(n), c) for t, n, c in zip(df["task"], df["n_objects"],
                                                         df["condition"], strict=True)})
        raise FinetuneError(f"no item of task {cfg.task!r}, N = {cfg.n_objects}, condition "
                            f"{cfg.condition!r}; the benchmarks hold: {have[:12]}")
    return scope


def examples(df: pd.DataFrame, concept_ids: Sequence[str], cfg: FinetuneConfig) -> list[Example]:
    """One :class:`Example` per concept in ``concept_ids`` (training condition), with its
    false Swap negatives and its false Confusion negatives by family."""
    scope = training_scope(df, cfg)
    wanted = set(concept_ids)
    out = []
    for cid, sub in scope[scope["concept_id"].isin(wanted)].groupby("concept_id", sort=True):
        rows = {r["negative_set"]: r for _, r in sub.iterrows()}
        if not {"swap", "confusion"} <= set(rows):
            raise FinetuneError(f"concept {cid}: needs both a swap and a confusion item (the "
                                "matched comparison draws from both); give both benchmarks")
        swap_row, conf_row = rows["swap"], rows["confusion"]
        positive = list(swap_row["captions"])[0]
        if list(conf_row["captions"])[0] != positive:
            raise FinetuneError(f"concept {cid}: the swap and confusion items' positives differ")
        families: dict[str, list[str]] = {f: [] for f in FAMILIES}
        for text in _false_negatives(conf_row):
            label = _family(conf_row, text)
            if label in families and not (label == "other" and cfg.n_objects == 2):
                families[label].append(text)
        out.append(Example(cid, Path(swap_row["image_path"]), positive,
                           tuple(_false_negatives(swap_row)),
                           {f: tuple(t) for f, t in families.items() if t}))
    return out


def eval_items(df: pd.DataFrame, concept_ids: Sequence[str], *, condition: str | None = None,
               negative_set: str | None = None) -> list[EvalItem]:
    """The items of ``concept_ids`` (optionally one condition / negative set)."""
    sub = df[df["concept_id"].isin(set(concept_ids))]
    if condition is not None:
        sub = sub[sub["condition"] == condition]
    if negative_set is not None:
        sub = sub[sub["negative_set"] == negative_set]
    out = []
    for _, row in sub.iterrows():
        caps = tuple(row["captions"])
        true = set(int(i) for i in (row["true_negatives"] if "true_negatives" in row
                                    and row["true_negatives"] is not None else []))
        out.append(EvalItem(str(row.get("item_id", f"{row['concept_id']}-{len(out)}")),
                            row["concept_id"], Path(row["image_path"]), caps,
                            tuple(i not in true for i in range(1, len(caps))),
                            row["negative_set"], row["condition"], row["task"],
                            int(row["n_objects"])))
    return out


def evaluation_concepts(df: pd.DataFrame, split: Split, cfg: FinetuneConfig) -> list[str]:
    """The concepts every saved arm is scored on: the trained (task, N)'s held-out 20%, and
    every concept of each other (task, N) cell the benchmarks hold (the split covers only the
    trained cell, so none of those was trained on).

    Auto-Comp §5 reports Table 8 on every cell: "Gains are positive on every cell, largest
    on Shape-Color and persisting cross-axis to Position and Relative Size"; App. A.9:
    "Evaluation follows Section 3: Swap against the full N!-1 set, Confusion against the
    full negative set." Training and validation concepts are left out wherever they occur.
    """
    seen = set(split.train) | set(split.val)
    trained = (df["task"] == cfg.task) & (df["n_objects"] == cfg.n_objects)
    keep = (~trained | df["concept_id"].isin(set(split.test))) & ~df["concept_id"].isin(seen)
    return sorted(df.loc[keep, "concept_id"].unique())


def cell_role(task: str, n_objects: int, condition: str, cfg: FinetuneConfig) -> str:
    """How a (task, N, condition) cell relates to training: ``trained`` (the training cell,
    held-out concepts), ``other condition`` (the trained task and N, held-out concepts in the
    other condition), ``other N`` (the trained task at another N) or ``cross-axis``."""
    if task != cfg.task:
        return "cross-axis"
    if int(n_objects) != cfg.n_objects:
        return "other N"
    return "trained" if condition == cfg.condition else "other condition"
