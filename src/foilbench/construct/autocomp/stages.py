"""``autocomp`` stages 3-7, run once per track (Minimal, Contextual): text-to-image, the three
validation checks of Auto-Comp §3 Stage 2, the negatives of Stage 3, and the items. Each item
lists its true negatives (those meaning what the positive means,
:func:`foilbench.construct.autocomp.truth.equivalent_positions`), so runs score ``r1_valid``.

Each stage's name carries its track, so the survival table reads like Auto-Comp Table 3
(survival per validation stage, Minimal and Contextual apart).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from foilbench.construct.autocomp.checks import questions, substitute
from foilbench.construct.autocomp.negatives import (
    TASKS,
    confusion_arrangements,
    dedupe,
    swap_arrangements,
)
from foilbench.construct.autocomp.truth import equivalent_positions
from foilbench.construct.autocomp.vocab import canonical_relation
from foilbench.construct.backends.base import ImageRequest, Unanswerable
from foilbench.construct.engine.export import ConstructResult
from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.stages import Context, Failure, answered, drop_failed
from foilbench.construct.validators.image_checks import background_whiteness
from foilbench.world.token_budget import PAST_CONTEXT, past_context

NEGATIVE_SETS = ("swap", "confusion")


def _concept(t: Candidate):
    return t.data["concept_c"].data["concept"]


def _world_scene(t: Candidate, config):
    from foilbench.world.autocomp import concept_scene

    c = t.data["concept_c"]
    concept = c.data["concept"]
    rng = np.random.default_rng([config.seed, 0xA5C2, c.data["index"]])
    values = concept.values if concept.spec.binds == "attribute" else tuple(
        canonical_relation(v) for v in concept.values)  # the world's words (Auto-Comp §4)
    scene = concept_scene(rng, concept.task, concept.objects, values,
                          scene_id_prefix=f"{c.id}-")
    return replace(scene, condition=t.data["track"])


def stage_images(ctx: Context, tracks: list[Candidate], config, vocab,
                 track: str) -> list[Candidate]:
    from foilbench.construct.composet.spec import write_png

    structured = getattr(ctx.backend("image"), "reads_structure", False)
    with ctx.log.stage(f"text-to-image [{track}]", tracks, unit="concept") as st:
        jobs = []
        for t in tracks:
            scene = None
            if structured:
                try:
                    scene = _world_scene(t, config)
                except (RuntimeError, ValueError) as e:
                    st.drop(t, "world cannot realise the concept", error=str(e))
                    continue
            text = t.data["concept_c"].data["captions"][track]
            jobs.append((t.id, (ImageRequest(text, seed=t.data["concept_c"].data["seed"],
                                             size=(config.size, config.size), scene=scene),)))
        results = ctx.call_many(st, "image", jobs)
        for t, res in answered(st, [t for t in tracks if t.id in results], results):
            t.data["image"] = res.value
            t.data["path"] = write_png(ctx, f"images/{t.id}.png", res.value)
            st.passed(t, backend=ctx.backend("image").fingerprint, **res.describe(),
                      outputs={"image": t.data["path"]})
    return st.survivors


def stage_objects(ctx: Context, tracks: list[Candidate], config, track: str) -> list[Candidate]:
    th = config.detector_threshold
    with ctx.log.stage(f"object presence and count [{track}]", tracks, unit="concept") as st:
        jobs = [(t.id, (t.data["image"], sorted(set(_concept(t).objects)), th)) for t in tracks]
        results = ctx.call_many(st, "detector", jobs)
        for t, res in answered(st, tracks, results):
            want: dict[str, int] = {}
            for o in _concept(t).objects:
                want[o.lower()] = want.get(o.lower(), 0) + 1
            got: dict[str, int] = {}
            boxes = []
            for d in res.value:
                if d.score >= th:
                    got[d.label.lower()] = got.get(d.label.lower(), 0) + 1
                    boxes.append(d.box)
            t.data["boxes"] = boxes
            verdict = {"expected": want, "detected": got}
            if any(got.get(k, 0) != v for k, v in want.items()):
                st.drop(t, "objects missing or miscounted", verdicts=verdict)
            else:
                st.passed(t, **res.describe(), verdicts=verdict)
    return st.survivors


def stage_background(ctx: Context, tracks: list[Candidate], config) -> list[Candidate]:
    with ctx.log.stage("background check [minimal]", tracks, unit="concept") as st:
        for t in ctx.track(tracks, st.name, unit="image"):
            white = background_whiteness(t.data["image"], t.data["boxes"], config.white_level)
            verdict = {"whiteness": round(white, 4), "needed": config.white_share}
            if white >= config.white_share:
                st.passed(t, verdicts=verdict)
            else:
                st.drop(t, "background not white", verdicts=verdict)
    return st.survivors


def _choices(vocab, concept) -> tuple[str, ...]:
    from foilbench.construct.autocomp.vocab import task_words

    return task_words(vocab, concept.task)[1]


def _same_answer(concept, answer, expected) -> bool:
    """Answers compared on the canonical relation word ("under" is "below", §4's words)."""
    if answer is None or concept.spec.binds == "attribute":
        return answer == expected
    return canonical_relation(answer) == canonical_relation(expected)


def stage_vqa(ctx: Context, tracks: list[Candidate], config, vocab, track: str) -> list[Candidate]:
    structured = getattr(ctx.backend("vqa"), "reads_structure", False)
    with ctx.log.stage(f"attribute/relation check [{track}]", tracks, unit="concept") as st:
        jobs, asked = [], {}
        for t in tracks:
            choices = _choices(vocab, _concept(t))
            if structured and _concept(t).spec.binds == "relation":  # the world's own words
                choices = tuple(dict.fromkeys(canonical_relation(v) for v in choices))
            qs = questions(_concept(t), choices)
            asked[t.id] = qs
            jobs += [(f"{t.id}#{k}", (t.data["image"], q, list(ch)))
                     for k, (q, ch, _) in enumerate(qs)]
        results = ctx.call_many(st, "vqa", jobs)
        for t in tracks:
            answers = [results[f"{t.id}#{k}"] for k in range(len(asked[t.id]))]
            failed = next((a for a in answers if isinstance(a, Failure)), None)
            if failed is not None:
                drop_failed(st, t, failed)
                continue
            verdict = [{"question": q, "expected": want,
                        **({"answer": None, "unanswerable": a.value.reason}
                           if isinstance(a.value, Unanswerable) else {"answer": a.value})}
                       for (q, _, want), a in zip(asked[t.id], answers, strict=True)]
            concept = _concept(t)
            if all(_same_answer(concept, v["answer"], v["expected"]) for v in verdict):
                st.passed(t, verdicts={"qa": verdict})
            elif any(v["answer"] is not None
                     and not _same_answer(concept, v["answer"], v["expected"])
                     for v in verdict):
                st.drop(t, "VQA answer wrong", verdicts={"qa": verdict})
            else:  # a failed check too: the validator could not confirm the concept
                st.drop(t, "VQA answer names no single choice", verdicts={"qa": verdict})
    return st.survivors


def stage_negatives(ctx: Context, tracks: list[Candidate], track: str) -> list[Candidate]:
    with ctx.log.stage(f"swap and confusion negatives [{track}]", tracks,
                       unit="concept") as st:
        for t in tracks:
            concept = _concept(t)
            c = t.data["concept_c"]
            text, spans = c.data["captions"][track], c.data["spans"][track]
            negs, removed, true, past = {}, {}, {}, {}
            for name, arrangements in (("swap", swap_arrangements(concept)),
                                       ("confusion", confusion_arrangements(concept))):
                texts = [substitute(text, spans, o, v) for o, v in arrangements]
                negs[name], removed[name] = dedupe(texts, text)
                cut = set(past_context(text, negs[name]))  # the encoder sees the positive
                past[name] = len(cut)
                negs[name] = [n for k, n in enumerate(negs[name]) if k not in cut]
                first = {}  # the arrangement behind each kept text (first one wins)
                for arr, t_ in zip(arrangements, texts, strict=True):
                    first.setdefault(t_, arr)
                true[name] = equivalent_positions(concept, [first[n] for n in negs[name]])
            if not negs["swap"] and not negs["confusion"]:
                st.drop(t, PAST_CONTEXT if any(past.values()) else "no negative exists (N = 1)",
                        verdicts={"past_context": past})
                continue
            t.data["negatives"], t.data["removed"] = negs, removed
            t.data["true_negatives"] = true
            st.passed(t, outputs={k: len(v) for k, v in negs.items()},
                      verdicts={"duplicates_removed": removed, "past_context": past})
    return st.survivors


def result_for(ctx: Context, kept: list[Candidate], config) -> ConstructResult:
    by_concept: dict[str, set] = {}
    for t in kept:
        by_concept.setdefault(t.data["concept_c"].id, set()).add(t.data["track"])
    rows = []
    for t in kept:
        concept, c = _concept(t), t.data["concept_c"]
        paired = by_concept[c.id] == set(("minimal", "contextual"))
        for name in NEGATIVE_SETS:
            negs = t.data["negatives"][name]
            if not negs:
                continue
            rows.append({
                "item_id": f"{t.id}-{name}", "image": t.data["path"],
                "captions": [c.data["captions"][t.data["track"]], *negs],
                "scene_id": c.id, "edit_type": concept.task,
                "category": TASKS[concept.task].binds, "operation": name,
                "negative_set": name, "n_objects": concept.n, "condition": t.data["track"],
                "concept_id": c.id, "task": concept.task, "objects": list(concept.objects),
                "values": list(concept.values), "paired": paired,
                "n_negatives": len(negs), "n_duplicates_removed": t.data["removed"][name],
                # negatives meaning what the positive means (r1_valid leaves them out)
                "true_negatives": t.data["true_negatives"][name],
                "n_true_negatives": len(t.data["true_negatives"][name])})
    n_paired = sum(1 for v in by_concept.values() if len(v) == 2)
    return ConstructResult(
        name="autocomp-construct", kind="choice", rows=rows, root=ctx.out,
        description=("Auto-Comp-style concepts (§3) in the Minimal and Contextual conditions, "
                     "validated (objects and counts, white background for Minimal, VQA), with "
                     "Swap and Confusion negatives (column negative_set); `paired` marks "
                     "concepts validated in both conditions (the Paired Comparison Set)."),
        extras={"paired_concepts": n_paired, "concepts": len(by_concept)})
