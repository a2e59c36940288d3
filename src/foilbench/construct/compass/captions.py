"""COMPASS captions from scene graphs: composed/decomposed pairs and skill-targeted negatives.

For a caption c with primitives 1..N (COMPASS, integration gap):

* c~_i  the composed caption with primitive i replaced (hard negative, see compass_negatives);
* d_i   primitive i alone ("There is a sofa in the image.", "There is a dark brown sofa.",
        "The sofa is in the living room.");
* d~_i  d_i with the *same* replacement as c~_i, so composed and decomposed see matched
        perturbations.

Skill-targeted negatives (COMPASS §6.1: "We generate K = 4 hard negatives per caption"): for
each primitive type present, exactly K = 4 negatives that each replace one primitive of that
type. A caption for which four distinct valid negatives of a type cannot be drawn gets no skill
item of that type (it is not kept with fewer): with fewer negatives R@1 is easier (chance
1/(K+1) grows), and K would then shrink with the number of primitives of the type, which the
skill-load regression would read as load. The dropped (caption, type) sets are counted
(``CompassCaption.skill_dropped``, ``compass_rows(..., stats=...)``). The caption's composed
and decomposed items are kept: the integration gap does not use the skill negatives.

Benchmark rows (kind ``choice``, positive first) carry ``role``: ``composed``
([c, c~_1..c~_N]), ``decomposed`` ([d_i, d~_i], one row per i) and ``skill`` ([c, K negatives]),
with the metadata the analyses need (``analysis.compass``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from foilbench.construct.compass.negatives import (
    K_SKILL_NEGATIVES,
    Perturbation,
    PrimitivePools,
    choose_perturbation,
    skill_targets,
)
from foilbench.construct.compass.realise import (
    Realiser,
    TemplateRealiser,
    decomposed_with_spans,
    positive_with_spans,
)
from foilbench.construct.compass.sampling import (
    LEVELS,
    PRIMITIVE_KINDS,
    SKILL_OF_KIND,
    CaptionSpec,
    sample_caption_spec,
)
from foilbench.construct.compass.scene_graph import SceneGraph
from foilbench.construct.compass.spans import check_confined, substitute

MAX_TRIES_PER_CAPTION = 25


@dataclass
class CompassCaption:
    caption_id: str
    spec: CaptionSpec
    text: str
    perturbations: list[Perturbation]  # aligned with spec.primitives
    composed_negatives: list[str]  # c~_i
    decomposed: list[tuple[str, str]]  # (d_i, d~_i)
    skill_negatives: dict[str, list[tuple[Perturbation, str]]] = field(default_factory=dict)
    # skill -> how many valid negatives could be drawn (< K): the skill item was dropped
    skill_dropped: dict[str, int] = field(default_factory=dict)
    # primitive index -> character spans in ``text`` (what each negative substitutes)
    spans: dict[int, list[tuple[int, int]]] = field(default_factory=dict)


def make_caption(graph: SceneGraph, spec: CaptionSpec, pools: PrimitivePools,
                 rng: np.random.Generator, realiser: Realiser, caption_id: str,
                 k: int = K_SKILL_NEGATIVES, choose=None) -> CompassCaption | None:
    """All texts for ``spec``; None when some primitive has no valid replacement.

    The positive is worded once; every negative substitutes the replaced primitive's span in
    that wording (c~_i and skill negatives in the positive, d~_i in d_i) and is checked to
    differ from it only there (:func:`~foilbench.construct.compass.spans.check_confined`,
    COMPASS §3.2: negatives "differ minimally"). ``choose`` draws replacements (default
    :func:`~foilbench.construct.compass.negatives.choose_perturbation`)."""
    choose = choose or choose_perturbation
    perts = []
    for i in range(spec.n_total):
        p = choose(graph, spec, i, pools, rng)
        if p is None:
            return None
        perts.append(p)
    text, spans, _ = positive_with_spans(realiser, spec)

    def negative(p: Perturbation) -> str:
        neg = substitute(text, spans, p.index, p.old, p.new)
        return check_confined(text, neg, spans[p.index], f"{caption_id} primitive {p.index}")

    composed = [negative(p) for p in perts]
    decomposed = []
    for p in perts:
        d, d_spans = decomposed_with_spans(realiser, spec, p.index)
        d_neg = substitute(d, d_spans, p.index, p.old, p.new)
        decomposed.append((d, check_confined(d, d_neg, d_spans[p.index],
                                             f"{caption_id} decomposed {p.index}")))
    skills, dropped = {}, {}
    for kind in PRIMITIVE_KINDS:
        got = skill_targets(graph, spec, kind, pools, rng, negative, text, k, choose)
        if len(got) == k:
            skills[SKILL_OF_KIND[kind]] = got
        elif got:
            dropped[SKILL_OF_KIND[kind]] = len(got)
    return CompassCaption(caption_id, spec, text, perts, composed, decomposed, skills, dropped,
                          spans)


def captions_for_graph(graph: SceneGraph, pools: PrimitivePools, rng: np.random.Generator,
                       realiser: Realiser | None = None, per_level: int = 1,
                       levels: Sequence[str] = tuple(LEVELS),
                       k: int = K_SKILL_NEGATIVES) -> list[CompassCaption]:
    """Up to ``per_level`` distinct captions per level (fewer when the graph cannot fill a
    level, e.g. no relations for L2-OR)."""
    realiser = realiser or TemplateRealiser()
    out: list[CompassCaption] = []
    for level in levels:
        seen: set[str] = set()
        for _ in range(MAX_TRIES_PER_CAPTION * per_level):
            if len(seen) >= per_level:
                break
            spec = sample_caption_spec(graph, level, rng,
                                       relation_groups=pools.relation_groups)
            if spec is None:
                continue
            cap = make_caption(graph, spec, pools, rng, realiser,
                               f"{graph.image_id}/{level}/{len(seen)}", k)
            if cap is None or cap.text in seen:
                continue
            seen.add(cap.text)
            out.append(cap)
    return out


def caption_rows(cap: CompassCaption, image: str, scene_id: str) -> list[dict]:
    """Benchmark rows (kind ``choice``) for one caption: composed, decomposed, skill."""
    spec = cap.spec
    base = {"image": image, "scene_id": scene_id, "level": spec.level, "n_o": spec.n_o,
            "n_a": spec.n_a, "n_r": spec.n_r, "n_primitives": spec.n_total,
            "caption_id": cap.caption_id, "category": "compass"}
    rows = [{**base, "item_id": f"{cap.caption_id}/composed", "role": "composed",
             "captions": [cap.text, *cap.composed_negatives], "primitive_index": -1,
             "primitive_type": "", "skill": "", "perturbation": ""}]
    for p, (d, d_neg) in zip(cap.perturbations, cap.decomposed, strict=True):
        rows.append({**base, "item_id": f"{cap.caption_id}/decomposed/{p.index}",
                     "role": "decomposed", "captions": [d, d_neg], "primitive_index": p.index,
                     "primitive_type": p.kind, "skill": SKILL_OF_KIND[p.kind],
                     "perturbation": f"{p.old} -> {p.new}"})
    for skill, negs in cap.skill_negatives.items():
        rows.append({**base, "item_id": f"{cap.caption_id}/skill/{skill}", "role": "skill",
                     "captions": [cap.text, *(t for _, t in negs)], "primitive_index": -1,
                     "primitive_type": negs[0][0].kind, "skill": skill,
                     "perturbation": "; ".join(f"{p.index}:{p.old} -> {p.new}" for p, _ in negs)})
    return rows


def skill_drop_counts(captions: Iterable[CompassCaption]) -> dict[str, dict[str, int]]:
    """Per skill: skill items kept (exactly K negatives) and dropped (fewer could be drawn)."""
    kept = dict.fromkeys(SKILL_OF_KIND.values(), 0)
    dropped = dict.fromkeys(SKILL_OF_KIND.values(), 0)
    for cap in captions:
        for skill in cap.skill_negatives:
            kept[skill] += 1
        for skill in cap.skill_dropped:
            dropped[skill] += 1
    return {"skill_items_kept": kept, "skill_items_dropped_fewer_than_k": dropped}


def compass_rows(graphs: Iterable[tuple[SceneGraph, str]], pools: PrimitivePools, seed: int = 0,
                 realiser: Realiser | None = None, per_level: int = 1,
                 stats: dict | None = None) -> list[dict]:
    """Rows for (graph, image path) pairs; graph j draws from its own seeded generator
    ``default_rng([seed, j])``, so adding graphs never changes earlier ones. ``stats``, when
    given, is filled with :func:`skill_drop_counts` of the captions built."""
    rows: list[dict] = []
    captions: list[CompassCaption] = []
    for j, (graph, image) in enumerate(graphs):
        rng = np.random.default_rng([seed, j])
        for cap in captions_for_graph(graph, pools, rng, realiser, per_level):
            captions.append(cap)
            rows.extend(caption_rows(cap, image, graph.image_id))
    if stats is not None:
        stats.update(skill_drop_counts(captions))
    return rows
