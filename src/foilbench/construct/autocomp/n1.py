"""``autocomp-n1``: Auto-Comp's N = 1 single-object baselines, Vary Color and Vary Object.

Auto-Comp §4: "We additionally generate a Color N=1 split as a sanity check, reported in
Appendix A.3." App. A.3, Table 14: "Full model performance (%) on the N=1 single-object
benchmark. 'Minimal' corresponds to the Handmade setting and 'Contextual' to the LLM setting",
with the columns "Vary Color | Vary Object" under each. §6: "On the Color N=1 split (Appendix
A.3), the same models that collapse at N>=2 achieve >85% accuracy, isolating binding as the
source of failure."

So per one-object concept and condition there are two items (column ``negative_set``):

- ``vary_color``: the positive against the same object in every other colour the task draws
  from (vocabulary order): "a red mug" vs "a crimson mug", "an orange mug", ...;
- ``vary_object``: the positive against every other object of the task in the same colour
  (the task's object order): "a red mug" vs "a red bottle", "a red box", ...

The ``color`` task (everyday objects) is the paper's split (``origin`` = "Auto-Comp Table
14"); ``shape_color`` (geometric solids) is foilbench's analogue of it (``origin`` =
"foilbench"). The paper does not say how many negatives each item holds; foilbench uses every
other word of the vocabulary, so chance is 1 / (1 + number of negatives) per item. Relational
tasks have no relation at N = 1 and are not part of this set.

Captions are worded per condition exactly as the N >= 2 sets
(:mod:`foilbench.construct.autocomp.captions`: Minimal "... on a white background", Contextual
in the scene's context), one frame per concept and condition. Concepts are drawn and rendered
by the same code as ``autocomp-swap``/``autocomp-confusion``, once in each condition (same
``concept_id``, exactly one target object). Every negative is false of the image by
construction (the scene holds one object of one colour), so ``true_negatives`` is empty and
``r1_valid`` equals the paper's ``r1``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from foilbench.construct.autocomp.bench import (
    SEED_STREAM,
    caption_frames,
    concept_id,
    concept_row,
    render_concept,
    sample_concepts,
)
from foilbench.construct.autocomp.captions import (
    AutoCompRealiser,
    TemplateRealiser,
    apply_frame,
)
from foilbench.construct.autocomp.negatives import Concept, caption
from foilbench.data.format import Benchmark, Manifest, make_benchmark
from foilbench.kinds import ChoiceKind
from foilbench.world.autocomp import TASK_OBJECTS, TASK_VALUES
from foilbench.world.vocab import CONDITIONS

NAME = "autocomp-n1"
OPERATION = "recognition"
N1_TASKS = ("color", "shape_color")
NEGATIVE_SETS = ("vary_color", "vary_object")  # Table 14's two columns, in its order
ORIGIN = {"color": "Auto-Comp Table 14", "shape_color": "foilbench"}
TABLE14_LABEL = {"vary_color": "Vary Color", "vary_object": "Vary Object"}


def recognition_negatives(concept: Concept, negative_set: str) -> list[str]:
    """Template captions of one one-object attribute concept's ``vary_color`` or
    ``vary_object`` negatives, in vocabulary order (module docstring)."""
    if concept.task not in N1_TASKS:
        raise ValueError(f"autocomp-n1: task {concept.task!r} has no N = 1 recognition set; "
                         f"possible: {', '.join(N1_TASKS)}")
    if concept.n != 1:
        raise ValueError(f"autocomp-n1: a concept of exactly 1 object is needed, got "
                         f"{concept.n}: {list(concept.objects)}")
    if negative_set not in NEGATIVE_SETS:
        raise ValueError(f"autocomp-n1: unknown negative set {negative_set!r}; possible: "
                         f"{', '.join(NEGATIVE_SETS)}")
    (obj,), (colour,) = concept.objects, concept.values
    if negative_set == "vary_color":
        return [caption(Concept(concept.task, (obj,), (other,)))
                for other in TASK_VALUES[concept.task] if other != colour]
    return [caption(Concept(concept.task, (other,), (colour,)))
            for other in TASK_OBJECTS[concept.task] if other != obj]


def build_autocomp_n1(root: str | Path, seed: int = 0, n_concepts: int = 16, size: int = 160,
                      tasks: tuple[str, ...] = N1_TASKS, progress: Any = True,
                      realiser: AutoCompRealiser | None = None) -> Benchmark:
    """Render ``n_concepts`` one-object concepts per task in both conditions under
    ``root/images`` and return the ``autocomp-n1`` choice benchmark rooted at ``root``."""
    from foilbench.scoring.progress import steps

    for task in tasks:
        if task not in N1_TASKS:
            raise ValueError(f"autocomp-n1: unknown task {task!r}; possible: "
                             f"{', '.join(N1_TASKS)}")
    if n_concepts < 1:
        raise ValueError(f"n_concepts must be at least 1, got {n_concepts}")
    realiser = realiser or TemplateRealiser()
    root = Path(root)
    (root / "images").mkdir(parents=True, exist_ok=True)
    rows, cells = [], []
    for task in steps(progress, tasks, "suite: auto-comp N=1 concepts",
                      "task"):
        concepts = sample_concepts(seed, task, 1, n_concepts)
        for concept, rng in concepts:
            cid = concept_id(concept)
            scene, images = render_concept(root, concept, cid, rng, size)
            if len(scene.objects) != 1:
                raise RuntimeError(f"{cid}: expected one target object, drew "
                                   f"{len(scene.objects)}")
            frames = caption_frames(realiser, concept, scene)
            for condition in CONDITIONS:
                for negative_set in NEGATIVE_SETS:
                    texts = [caption(concept), *recognition_negatives(concept, negative_set)]
                    if len(set(texts)) != len(texts):
                        raise RuntimeError(f"{cid}: duplicate captions in {texts}")
                    rows.append({
                        **concept_row(concept, cid, scene.scene_id, images[condition],
                                      condition, captions=[apply_frame(frames[condition], t)
                                                           for t in texts],
                                      operation=OPERATION, negative_set=negative_set),
                        "n_negatives": len(texts) - 1,
                        "caption_frame": frames[condition],
                        "origin": ORIGIN[task],
                        # every negative is false (one object of one colour): r1_valid = r1
                        "true_negatives": [],
                        "n_true_negatives": 0,
                    })
        first = concepts[0][0]
        cells.append({"task": task, "concepts": len(concepts), "origin": ORIGIN[task],
                      **{f"{s}_negatives": len(recognition_negatives(first, s))
                         for s in NEGATIVE_SETS}})
    manifest = Manifest(
        name=NAME, kind=ChoiceKind.name, license="MIT", primary_metric="r1_valid",
        source=f"foilbench.world procedural renderer (seed {seed}, stream {SEED_STREAM:#x}, "
               f"{size}px)",
        description="Auto-Comp N = 1 single-object baselines (Table 14: Vary Color, Vary "
                    "Object; the color task is the paper's split, shape_color foilbench's "
                    "analogue): one object, captions = [positive] + the same caption with the "
                    "colour (vary_color) or the object (vary_object) replaced.",
        extras={"seed": seed, "size": size, "n_concepts": n_concepts, "tasks": list(tasks),
                "cells": cells, "caption_realiser": realiser.name,
                "table14_labels": TABLE14_LABEL},
    )
    return make_benchmark(manifest, pd.DataFrame(rows), root)


def build(out_dir, *, seed: int = 0, size: int = 160, progress: Any = True,
          **cfg) -> list[Benchmark]:
    """The suite-part contract (:mod:`foilbench.construct.suite`): render under
    ``out_dir/autocomp-n1``; ``cfg`` takes ``n_concepts`` and ``tasks``."""
    return [build_autocomp_n1(Path(out_dir) / NAME, seed=seed, size=size, progress=progress,
                              **cfg)]
