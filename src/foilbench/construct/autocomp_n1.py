"""``autocomp-n1``: foilbench's N = 1 attribute-recognition baseline for Auto-Comp.

Auto-Comp's negative sets are empty at N = 1 (Swap has N! - 1 = 0 negatives, attribute
Confusion N^(2N) - 1 = 0), so the paper's formulas give no N = 1 item. Yet "is the model above
chance on one object?" is the floor every binding score should be read against, so foilbench
adds its own N = 1 set (this choice is foilbench's, not the paper's):

- ``color``: one everyday object; the negatives are the positive caption with every other
  colour the Auto-Comp colour task draws from (vocabulary order), e.g. "a red mug" against
  "a crimson mug", "an orange mug", ...;
- ``shape_color``: one geometric solid; the negatives replace one word at a time: first the
  colour (every other colour, vocabulary order), then the shape (every other solid, the
  task's order), never both.

Relational tasks have no relation at N = 1 and are not part of this set. Concepts are drawn
and rendered by the same code as ``autocomp-swap``/``autocomp-confusion``
(:func:`foilbench.construct.autocomp_bench.sample_concepts` and
:func:`~foilbench.construct.autocomp_bench.render_concept`), once in the Minimal and once in
the Contextual condition (same ``concept_id``, exactly one target object). Every negative is
false of the image by construction (the scene holds one object of one colour), so chance is
1 / (1 + number of negatives) per item.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from foilbench.construct.autocomp_bench import (
    SEED_STREAM,
    concept_id,
    concept_row,
    render_concept,
    sample_concepts,
)
from foilbench.construct.autocomp_negatives import Concept, caption
from foilbench.data.format import Benchmark, Manifest, make_benchmark
from foilbench.kinds import ChoiceKind
from foilbench.world.autocomp import TASK_OBJECTS, TASK_VALUES
from foilbench.world.vocab import CONDITIONS

NAME = "autocomp-n1"
NEGATIVE_SET = "n1"
OPERATION = "recognition"
N1_TASKS = ("color", "shape_color")
# which words of a one-object concept a negative may replace, per task (one at a time)
REPLACED: dict[str, tuple[str, ...]] = {"color": ("color",), "shape_color": ("color", "shape")}


def recognition_negatives(concept: Concept) -> list[tuple[str, str]]:
    """``(replaced word kind, caption)`` for every negative of a one-object attribute concept,
    in deterministic order: other colours (``TASK_VALUES`` order), then, for ``shape_color``,
    other solids (``TASK_OBJECTS`` order)."""
    if concept.task not in N1_TASKS:
        raise ValueError(f"autocomp-n1: task {concept.task!r} has no N = 1 recognition set; "
                         f"possible: {', '.join(N1_TASKS)}")
    if concept.n != 1:
        raise ValueError(f"autocomp-n1: a concept of exactly 1 object is needed, got "
                         f"{concept.n}: {list(concept.objects)}")
    (obj,), (colour,) = concept.objects, concept.values
    out = []
    for kind in REPLACED[concept.task]:
        if kind == "color":
            out += [("color", caption(Concept(concept.task, (obj,), (other,))))
                    for other in TASK_VALUES[concept.task] if other != colour]
        else:
            out += [("shape", caption(Concept(concept.task, (other,), (colour,))))
                    for other in TASK_OBJECTS[concept.task] if other != obj]
    return out


def build_autocomp_n1(root: str | Path, seed: int = 0, n_concepts: int = 16, size: int = 160,
                      tasks: tuple[str, ...] = N1_TASKS, progress: bool = True) -> Benchmark:
    """Render ``n_concepts`` one-object concepts per task in both conditions under
    ``root/images`` and return the ``autocomp-n1`` choice benchmark rooted at ``root``."""
    from tqdm.auto import tqdm

    for task in tasks:
        if task not in N1_TASKS:
            raise ValueError(f"autocomp-n1: unknown task {task!r}; possible: "
                             f"{', '.join(N1_TASKS)}")
    if n_concepts < 1:
        raise ValueError(f"n_concepts must be at least 1, got {n_concepts}")
    root = Path(root)
    (root / "images").mkdir(parents=True, exist_ok=True)
    rows, cells = [], []
    for task in tqdm(tasks, desc="auto-comp N=1 concepts", unit="task", disable=not progress):
        concepts = sample_concepts(seed, task, 1, n_concepts)
        for concept, rng in concepts:
            cid = concept_id(concept)
            scene, images = render_concept(root, concept, cid, rng, size)
            if len(scene.objects) != 1:
                raise RuntimeError(f"{cid}: expected one target object, drew "
                                   f"{len(scene.objects)}")
            negatives = recognition_negatives(concept)
            captions = [caption(concept), *(text for _, text in negatives)]
            if len(set(captions)) != len(captions):
                raise RuntimeError(f"{cid}: duplicate captions in {captions}")
            for condition in CONDITIONS:
                rows.append({
                    **concept_row(concept, cid, scene.scene_id, images[condition], condition,
                                  captions=captions, operation=OPERATION,
                                  negative_set=NEGATIVE_SET),
                    "n_negatives": len(negatives),
                    "negative_kinds": [kind for kind, _ in negatives],
                })
        cells.append({"task": task, "concepts": len(concepts),
                      "negatives_per_item": len(recognition_negatives(concepts[0][0]))})
    manifest = Manifest(
        name=NAME, kind=ChoiceKind.name, license="MIT",
        source=f"foilbench.world procedural renderer (seed {seed}, stream {SEED_STREAM:#x}, "
               f"{size}px)",
        description="Auto-Comp N = 1 recognition (foilbench's baseline; the paper's formulas "
                    "give no N = 1 negatives): one object, captions = [positive] + the same "
                    "caption with one word replaced (colour; for shape_color also shape).",
        extras={"seed": seed, "size": size, "n_concepts": n_concepts, "tasks": list(tasks),
                "cells": cells},
    )
    return make_benchmark(manifest, pd.DataFrame(rows), root)


def build(out_dir, *, seed: int = 0, size: int = 160, progress: bool = True,
          **cfg) -> list[Benchmark]:
    """The suite-part contract (:mod:`foilbench.construct.suite`): render under
    ``out_dir/autocomp-n1``; ``cfg`` takes ``n_concepts`` and ``tasks``."""
    return [build_autocomp_n1(Path(out_dir) / NAME, seed=seed, size=size, progress=progress,
                              **cfg)]
