"""The Auto-Comp choice benchmarks of the embedded suite: ``autocomp-swap`` and
``autocomp-confusion``.

For each task (color, shape_color, position, relative_size) and N, ``n_concepts`` distinct
concepts are drawn; each is rendered once in the Minimal and once in the Contextual condition
(the same objects and placement, so per-concept deltas are paired on ``concept_id``). An item
is one (concept, condition) image with ``captions = [positive] + negatives``:

- Swap: the N! - 1 permutations (none at N = 1, so N = 1 gives no Swap item);
- Confusion: all N^(2N) - 1 (attributes) or N^N (N-1)^(N-1) - 1 (relations) arrangements,
  kept in full as the method prescribes (728 and 107 at N = 3); none at N = 1.

A negative is removed only when its text equals another's (reported per item and in the
manifest), so chance per item is 1 / (K + 1) with the K that remain (a repeated relation makes
fewer distinct Confusion texts than the closed form; the report states the mean chance).

Captions are worded per condition (:mod:`foilbench.construct.autocomp.captions`): Minimal adds
the paper's suffix "on a white background"; Contextual sets the concept in the scene's context
through a realiser (template frames by default, any text backend when given). The positive and
its negatives share one frame (column ``caption_frame``), so negatives follow the same rewrite.

Some negatives are true of the image (:mod:`foilbench.construct.autocomp.truth`): a paraphrase
("a blue sphere and a red cube" for "a red cube and a blue sphere"), an equivalent relational
chain, or a chain that the drawn layout also happens to satisfy ("a mug left of a box, and the
box right of a cone" when both the mug and the cone are left of the box). They are kept, as the
method prescribes, and flagged: ``equivalent_negatives`` (caption indices of the negatives that
mean what the positive means, true of any image of the concept) and ``true_negatives`` (those
plus the ones true of this drawn scene, from checking every clause, :func:`negative_truths`;
what ``r1_valid`` leaves out, :mod:`foilbench.kinds.valid`), with their counts. The paper's
``r1`` scores every negative; ``r1_valid``, the primary metric, only the false ones.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from foilbench.construct.autocomp.captions import (
    AutoCompRealiser,
    SceneContext,
    TemplateRealiser,
    apply_frame,
)
from foilbench.construct.autocomp.negatives import (
    MAX_OBJECTS,
    TASKS,
    Concept,
    caption,
    expected_counts,
    negatives_with_report,
    render_attribute,
    render_relation,
)
from foilbench.construct.autocomp.truth import equivalent_indices
from foilbench.data.format import Benchmark, Manifest, make_benchmark
from foilbench.hashing import sha256_text
from foilbench.kinds import ChoiceKind
from foilbench.world.autocomp import (
    concept_scene,
    condition_context,
    relation_holds,
    sample_concept_words,
)
from foilbench.world.render import png_bytes, render
from foilbench.world.scene import Scene
from foilbench.world.vocab import CONDITIONS

SEED_STREAM = 0xA5C0  # keeps Auto-Comp scenes apart from other users of the same seed
OPERATIONS = ("swap", "confusion")
NAMES = {op: f"autocomp-{op}" for op in OPERATIONS}
DESCRIPTIONS = {
    "swap": "Auto-Comp Swap: one image, captions = [positive] + the N!-1 permutations of the "
            "concept's attributes (attribute tasks) or objects (relational tasks).",
    "confusion": "Auto-Comp Confusion: one image, captions = [positive] + every arrangement of "
                 "the concept's objects and values with repetition (N^(2N)-1 for attributes, "
                 "N^N (N-1)^(N-1)-1 for relations), duplicates of text removed.",
}
# Auto-Comp §3, Evaluation Protocol: generative MLLMs score "each candidate caption by its
# log-likelihood under the model conditioned on the image, summed over the caption's tokens".
LOGLIK_NORM = {"norm": "sum", "source": "Auto-Comp §3 (log-likelihood summed over tokens)"}
PRIMARY_METRIC = "r1_valid"


def concept_id(concept: Concept) -> str:
    """A stable id from the concept's words."""
    text = "|".join([concept.task, *concept.objects, "/", *concept.values])
    return f"ac-{concept.task}-n{concept.n}-{sha256_text(text)[:10]}"


def sample_concepts(seed: int, task: str, n: int, n_concepts: int,
                    max_draws: int = 2000) -> list[tuple[Concept, np.random.Generator]]:
    """Up to ``n_concepts`` distinct concepts of (task, n), each with its own generator for
    realising the scene (deterministic in ``seed``)."""
    task_index = list(TASKS).index(task)
    out, seen = [], set()
    for draw in range(max_draws):
        rng = np.random.default_rng([seed, SEED_STREAM, task_index, n, draw])
        objects, values = sample_concept_words(rng, task, n)
        concept = Concept(task, objects, values)
        cid = concept_id(concept)
        if cid in seen:
            continue
        seen.add(cid)
        out.append((concept, rng))
        if len(out) == n_concepts:
            break
    return out


def _arrangement_true(concept: Concept, placed, objects, values) -> bool:
    """Whether every clause of one arrangement holds in the drawn scene. An object named twice
    is read as two objects, which the scene (one of each) never has."""
    if len(set(objects)) < len(objects):
        return False
    by_category = {o.category: o for o in placed}
    if concept.spec.binds == "attribute":
        return all(by_category[o].color == v for o, v in zip(objects, values, strict=True))
    return all(relation_holds(by_category[objects[i]], by_category[objects[i + 1]], rel)
               for i, rel in enumerate(values))


def negative_truths(concept: Concept, placed) -> dict[str, bool]:
    """Text -> true-of-the-scene for every arrangement the negatives are drawn from (all
    object and value arrangements with repetition; a text is true if any of its arrangements
    is)."""
    n, k = concept.n, len(concept.values)
    render = render_attribute if concept.spec.binds == "attribute" else render_relation
    truths: dict[str, bool] = {}
    for obj_idx in itertools.product(range(n), repeat=n):
        objects = [concept.objects[i] for i in obj_idx]
        for val_idx in itertools.product(range(k), repeat=k):
            values = [concept.values[j] for j in val_idx]
            text = render(objects, values)
            truths[text] = truths.get(text, False) or _arrangement_true(concept, placed,
                                                                       objects, values)
    return truths


def render_concept(root: Path, concept: Concept, cid: str, rng: np.random.Generator,
                   size: int) -> tuple[Scene, dict[str, str]]:
    """Draw the concept's scene (Minimal placement) and write one PNG per condition under
    ``root/images``. Returns the scene and {condition: image path relative to root}."""
    scene = concept_scene(rng, concept.task, concept.objects, concept.values,
                          scene_id_prefix=f"{cid}-")
    images = {}
    for condition in CONDITIONS:
        rel = f"images/{cid}-{condition}.png"
        (root / rel).write_bytes(png_bytes(render(replace(scene, condition=condition), size)))
        images[condition] = rel
    return scene, images


def caption_frames(realiser: AutoCompRealiser, concept: Concept, scene: Scene) -> dict[str, str]:
    """{condition: frame} of one concept's captions (one realiser call per condition)."""
    positive = caption(concept)
    frames = {}
    for condition in CONDITIONS:
        description, variant = condition_context(scene, condition)
        frames[condition] = realiser.frame(concept, positive,
                                           SceneContext(condition, description, variant))
        apply_frame(frames[condition], positive)  # raises on a malformed frame
    return frames


def concept_row(concept: Concept, cid: str, scene_id: str, image: str, condition: str,
                captions: list[str], operation: str, negative_set: str) -> dict:
    """The columns every Auto-Comp item carries (one concept in one condition), in the order
    the benchmarks store them; callers append their set-specific columns."""
    return {
        "item_id": f"{cid}-{condition}-{negative_set}",
        "image": image,
        "captions": captions,
        "scene_id": scene_id,
        "edit_type": concept.task,
        "category": TASKS[concept.task].binds,
        "operation": operation,
        "negative_set": negative_set,
        "n_objects": concept.n,
        "condition": condition,
        "concept_id": cid,
        "task": concept.task,
        "objects": list(concept.objects),
        "values": list(concept.values),
    }


def _item_rows(concept: Concept, cid: str, scene: Scene, images: dict[str, str],
               frames: dict[str, str]) -> dict:
    """Rows of both benchmarks for one concept: {operation: [row per condition]}."""
    report = negatives_with_report(concept)
    positive = caption(concept)
    truths = negative_truths(concept, scene.objects)
    if not truths.get(positive, False):
        raise RuntimeError(f"{cid}: the drawn scene does not realise {positive!r}")
    rows: dict[str, list[dict]] = {op: [] for op in OPERATIONS}
    for op, negatives in (("swap", report.swap), ("confusion", report.confusion)):
        if not negatives:
            continue
        true_idx = [i + 1 for i, text in enumerate(negatives) if truths[text]]
        same_idx = equivalent_indices(concept, op)
        if not set(same_idx) <= set(true_idx):
            raise RuntimeError(f"{cid} ({op}): negatives {sorted(set(same_idx) - set(true_idx))} "
                               "mean the positive but the drawn scene does not make them true")
        for condition in CONDITIONS:
            frame = frames[condition]
            rows[op].append({
                **concept_row(concept, cid, scene.scene_id, images[condition], condition,
                              captions=[apply_frame(frame, t) for t in (positive, *negatives)],
                              operation=op, negative_set=op),
                "n_negatives": len(negatives),
                "n_duplicates_removed": report.removed[op],
                "caption_frame": frame,
                "equivalent_negatives": same_idx,
                "n_equivalent_negatives": len(same_idx),
                "true_negatives": true_idx,
                "n_true_negatives": len(true_idx),
            })
    return rows


def build_autocomp(root: str | Path, seed: int = 0, n_concepts: int = 16, size: int = 160,
                   ns: tuple[int, ...] = (1, 2, 3), tasks: tuple[str, ...] = tuple(TASKS),
                   progress: Any = True, realiser: AutoCompRealiser | None = None
                   ) -> dict[str, Benchmark]:
    """Render the concepts' images under ``root/images`` and return both benchmarks (rooted
    at ``root``; write each with :func:`foilbench.data.format.write_benchmark`). ``realiser``
    words the captions (default: :class:`~foilbench.construct.autocomp.captions.
    TemplateRealiser`)."""
    from foilbench.scoring.progress import steps

    for n in ns:
        if not 1 <= n <= MAX_OBJECTS:
            raise ValueError(f"Auto-Comp N={n} out of range; possible: 1 to {MAX_OBJECTS}")
    if n_concepts < 1:
        raise ValueError(f"n_concepts must be at least 1, got {n_concepts}")
    realiser = realiser or TemplateRealiser()
    root = Path(root)
    (root / "images").mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[dict]] = {op: [] for op in OPERATIONS}
    cells = [(task, n) for task in tasks for n in ns]
    counts = []
    for task, n in steps(progress, cells, "suite: auto-comp concepts", "cell"):
        concepts = sample_concepts(seed, task, n, n_concepts)
        before = {op: len(rows[op]) for op in OPERATIONS}
        for concept, rng in concepts:
            if not any(expected_counts(task, n).values()):
                break  # N = 1: no Swap and no Confusion negative exists, so no item
            cid = concept_id(concept)
            scene, images = render_concept(root, concept, cid, rng, size)
            frames = caption_frames(realiser, concept, scene)
            item_rows = _item_rows(concept, cid, scene, images, frames)
            for op, op_rows in item_rows.items():
                rows[op].extend(op_rows)
        counts.append({"task": task, "n": n, "concepts": len(concepts),
                       **{f"{op}_items": len(rows[op]) - before[op] for op in OPERATIONS},
                       **{f"{op}_negatives_closed_form": v
                          for op, v in expected_counts(task, n).items()}})
    benches = {}
    for op in OPERATIONS:
        items = pd.DataFrame(rows[op])
        manifest = Manifest(
            name=NAMES[op], kind=ChoiceKind.name, license="MIT", primary_metric=PRIMARY_METRIC,
            source=f"foilbench.world procedural renderer (seed {seed}, stream {SEED_STREAM:#x}, "
                   f"{size}px)",
            description=DESCRIPTIONS[op],
            extras={"seed": seed, "size": size, "n_concepts": n_concepts, "ns": list(ns),
                    "tasks": list(tasks), "cells": counts,
                    "duplicates_removed": int(items["n_duplicates_removed"].sum()),
                    "true_negatives": int(items["n_true_negatives"].sum()),
                    "items_with_true_negative": int((items["n_true_negatives"] > 0).sum()),
                    "equivalent_negatives": int(items["n_equivalent_negatives"].sum()),
                    "caption_realiser": realiser.name, "loglik_norm": LOGLIK_NORM},
        )
        benches[op] = make_benchmark(manifest, items, root)
    return benches


def build(out_dir, *, seed: int = 0, size: int = 160, progress: Any = True,
          **cfg) -> list[Benchmark]:
    """The suite-part contract (:mod:`foilbench.construct.suite`): render under
    ``out_dir/autocomp-swap`` and return the Swap then the Confusion benchmark, both rooted
    there (the suite copies the images into Confusion's own folder when it writes it)."""
    benches = build_autocomp(Path(out_dir) / NAMES["swap"], seed=seed, size=size,
                             progress=progress, **cfg)
    return [benches[op] for op in OPERATIONS]
