"""The ``compass`` pipeline: COMPASS §3 captions from scene graphs, worded by a text backend.

COMPASS §3.1: "For each image, we sample a subgraph S using a random walk of up to ten steps
... For the final step of synthesis, we convert the resulting primitive sets into natural
language captions using GPT 4o-mini with few-shot examples". §3.2: hard negatives replace "a
single primitive p_i in P(c) with another primitive of the same type t, while keeping all other
primitives fixed".

The sampling, the structural levels and the negatives are the existing construction
(:mod:`foilbench.construct.compass.captions`). Stages:

1. propose: for every distinct object name, attribute and predicate of the run's graphs, the
   text backend proposes same-category replacements (prompt ``compass.propose``; §3.2 "propose
   candidate primitives of the same semantic category"); the template answers from the shipped
   category table. Replacements are then drawn from these (open world) or from the pool words
   among them (closed world), absent from the graph by lemma, and filtered for near-synonyms
   by the Sentence-Transformer filter (:mod:`.similarity`; ``similarity=None`` turns it off).
2. structures: every caption structure and its perturbations are decided with the template
   wording, so random draws never depend on a model's wording.
3. realise: the text backend words the positive only (prompt ``compass.realise``), once.
4. check: the positive passes the structural checks (:mod:`.checks`: every primitive said,
   attributes bound, relations in order, nothing else) and its primitives are located
   (:func:`.spans.locate_spans`); every composed, skill and decomposed negative is then the
   positive's wording with the replaced primitive's span substituted, asserted to differ only
   there (:func:`.spans.check_confined`). The model never rewords a negative. A positive
   failing a check is dropped (``on_violation="drop"``) or replaced by the template wording
   (``"template"``), counted either way.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from foilbench.construct.compass.plan import (
    compass_plan,
    propose_tokens,
    realise_tokens,
    words_of,
    world_scenes,
)
from foilbench.construct.compass.realise import TemplateRealiser, describe_spec
from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.construct.compass.similarity import MAX_SIMILARITY
from foilbench.construct.engine.export import ConstructResult
from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.replies import (
    ReplyError,
    clean_sentence,
    is_ascii,
    parse_json,
    require,
)
from foilbench.construct.engine.stages import ConstructError, Context, Failure

ROLES = {"text": True}


@dataclass(frozen=True)
class CompassConfig:
    scene_graphs: Path | None = None
    images: Path | None = None
    n_scenes: int = 12
    size: int = 160
    per_level: int = 1
    limit: int | None = None
    seed: int = 0
    on_violation: str = "drop"
    categories: Path | None = None  # a category table for words no proposal covers
    category_policy: str = "strict"  # a word of no known category: "strict" or "any"
    similarity: float | None = MAX_SIMILARITY  # Sentence-Transformer threshold; None: off

    def __post_init__(self) -> None:
        from foilbench.construct.compass.similarity import check_threshold

        check_threshold(self.similarity)  # before any call is paid for (issue 40)

    def options(self) -> dict:
        out = asdict(self)
        out["scene_graphs"] = str(self.scene_graphs) if self.scene_graphs else None
        out["images"] = str(self.images) if self.images else None
        out["categories"] = str(self.categories) if self.categories else None
        return out


def spec_to_dict(spec: CaptionSpec) -> dict:
    return asdict(spec)


def spec_from_dict(d: dict) -> CaptionSpec:
    return CaptionSpec(d["graph_id"], d["level"], tuple(tuple(o) for o in d["objects"]),
                       tuple(tuple(a) for a in d["attributes"]),
                       tuple(tuple(r) for r in d["relations"]))


def _graphs(ctx: Context, config: CompassConfig):
    """(graphs with image paths relative to ``root``, pools, root)."""
    from foilbench.construct.compass.negatives import PrimitivePools
    from foilbench.construct.compass.vg import ImageIndex, read_vg_file

    if config.scene_graphs is None:
        from foilbench.construct.compass.scene_graph import write_scene_graphs
        from foilbench.construct.compass.world_graph import scene_graph_from_world, world_pools
        from foilbench.world.render import png_bytes, render

        (ctx.out / "images").mkdir(parents=True, exist_ok=True)
        pairs = []
        for j, scene in enumerate(world_scenes(config)):
            rel = f"images/{j:04d}-{scene.scene_id}.png"
            (ctx.out / rel).write_bytes(png_bytes(render(scene, config.size)))
            pairs.append((scene_graph_from_world(scene, image=rel), rel))
        write_scene_graphs([g for g, _ in pairs], ctx.out / "scene_graphs.json")
        return pairs, world_pools(), ctx.out
    images = Path(config.images or Path(config.scene_graphs).parent)
    graphs = read_vg_file(config.scene_graphs).graphs  # VG release layouts, counted skips
    pools = PrimitivePools.from_graphs(graphs)
    chosen = graphs[: config.limit] if config.limit else graphs
    index = ImageIndex(images)  # the folder and VG_100K/ + VG_100K_2/ under it
    pairs = [(g, rel) for g in chosen if (rel := index.find(g)) is not None]
    if not pairs:
        hint = index.hint()
        raise ConstructError(f"none of the {len(chosen)} scene graphs has an image in {images}"
                             + (f" ({hint})" if hint else ""))
    return pairs, pools, images


def plan(config: CompassConfig) -> dict[str, dict[str, int]]:
    """Per distinct word of the run's graphs one proposal; per graph and level ``per_level``
    positives (:func:`.plan.compass_plan`, each call bounded by its own request)."""
    return compass_plan(config)


def composed_specs(cap) -> list[CaptionSpec]:
    """Every spec whose composed wording the caption's rows use: positive, c~_i, skill."""
    specs = [cap.spec] + [cap.spec.replaced(p.index, p.new) for p in cap.perturbations]
    for negs in cap.skill_negatives.values():
        specs += [cap.spec.replaced(p.index, p.new) for p, _ in negs]
    return specs


def _words(graphs: list[Candidate]) -> list[tuple[str, str, str | None]]:
    """(kind, word, VG synset) of every primitive the run's graphs can put in a caption."""
    return words_of([g.data["graph"] for g in graphs])


def stage_propose(ctx: Context, graphs: list[Candidate], config) -> dict:
    """Same-category candidates per (kind, word), from the text backend (module doc, 1).
    Words whose call failed or whose reply was unusable get none (the category table answers
    for them) and are counted in ``ctx.notes["proposals"]``."""
    words = _words(graphs)
    jobs = [(f"{k}/{w}", (ctx.text_request(
        "compass.propose", {"kind": "compass.propose", "primitive": k, "word": w,
                            "synset": syn},
        max_tokens=propose_tokens(is_ascii(k, w)), kind=k, word=w),)) for k, w, syn in words]
    results = ctx.call_many("propose same-category replacements", "text", jobs)
    proposals: dict[tuple[str, str], list[str]] = {}
    counts = {"words": len(words), "proposed": 0, "unknown_category": 0, "failed": 0,
              "unusable_reply": 0}
    for k, w, _ in words:
        res = results[f"{k}/{w}"]
        if isinstance(res, Failure):
            counts["failed"] += 1
            continue
        try:
            got = parse_json(res.value).get("candidates")
        except (ReplyError, AttributeError):
            counts["unusable_reply"] += 1
            continue
        if got is None:
            counts["unknown_category"] += 1
        elif isinstance(got, list) and all(isinstance(x, str) for x in got):
            proposals[(k, w)] = got
            counts["proposed"] += 1
        else:
            counts["unusable_reply"] += 1
    ctx.notes["proposals"] = counts
    return proposals


def ruled_pools(pools, proposals: dict, config, world: bool):
    """``pools`` with the proposals as category source, each checked against the replaced
    word's category in the table (a word the backend gave nothing for falls back to the
    table), the lexical exclusions (open world) and the similarity filter."""
    from foilbench.construct.compass.categories import CategoryTable, ProposedCategories
    from foilbench.construct.compass.lexicon import Lexicon
    from foilbench.construct.compass.similarity import SimilarityFilter

    table = (CategoryTable.from_path(config.categories) if config.categories
             else CategoryTable.shipped())

    class Source:
        name = "proposed+table"
        source = f"text backend proposals, then {table.source}"
        proposed = ProposedCategories(proposals, table)

        def candidates(self, kind, word, synset=None):
            got = self.proposed.candidates(kind, word, synset)
            return got if got is not None else table.candidates(kind, word, synset)

    sim = None
    if config.similarity is not None:
        sim = (SimilarityFilter.world() if world and config.similarity == MAX_SIMILARITY
               else SimilarityFilter.minilm(config.similarity))
    return pools.with_rules(Source(), config.category_policy, sim, Lexicon.shipped())


def stage_structures(ctx: Context, graphs: list[Candidate], pools, config) -> list[Candidate]:
    from foilbench.construct.compass.captions import captions_for_graph

    dropped: dict[str, int] = {}
    with ctx.log.stage("caption structures (random walk)", graphs, unit="graph") as st:
        for g in graphs:
            rng = np.random.default_rng([config.seed, g.data["index"]])
            caps = captions_for_graph(g.data["graph"], pools, rng, TemplateRealiser(),
                                      config.per_level)
            if not caps:
                st.drop(g, "no caption structure (graph too small)")
                continue
            st.expand(g, [Candidate(cap.caption_id, "caption", {"cap": cap, "graph": g})
                          for cap in caps], levels=[c.spec.level for c in caps],
                      skill_sets_dropped_fewer_than_k=[sorted(c.skill_dropped) for c in caps])
            for cap in caps:
                for skill in cap.skill_dropped:
                    dropped[skill] = dropped.get(skill, 0) + 1
    ctx.notes["skill_items_dropped_fewer_than_k"] = dropped  # COMPASS §6.1: exactly K = 4
    return st.children


def _realise_budget(facts: str) -> int:
    return realise_tokens(len(facts.encode("utf-8")), is_ascii(facts))


def stage_realise(ctx: Context, caps: list[Candidate]) -> list[Candidate]:
    """The text backend words each caption's positive, once (module doc, 3)."""
    with ctx.log.stage("realise positive (text backend)", caps, unit="caption") as st:
        jobs = [(c.id, (ctx.text_request(
            "compass.realise", {"kind": "compass.realise",
                                "spec": spec_to_dict(c.data["cap"].spec)},
            max_tokens=_realise_budget(describe_spec(c.data["cap"].spec)),
            facts=describe_spec(c.data["cap"].spec)),)) for c in caps]
        results = ctx.call_many(st, "text", jobs)
        for c in caps:
            res = results[c.id]
            if isinstance(res, Failure):
                st.drop(c, "call failed", error=res.error, attempts=res.attempts)
                continue
            try:
                text = clean_sentence(require(parse_json(res.value), {"caption": str},
                                              "realise")["caption"])
            except ReplyError:
                text = clean_sentence(res.value)
            c.data["positive"] = text
            st.passed(c, outputs={"positive": text})
    return st.survivors


def negatives_from(cap, text: str, spans: dict):
    """``cap`` with its positive ``text`` and every negative substituted into it (module
    doc, 4); :class:`~.spans.SpanError` if one differs outside its span."""
    from foilbench.construct.compass.spans import check_confined, substitute

    def neg(p) -> str:
        out = substitute(text, spans, p.index, p.old, p.new)
        return check_confined(text, out, spans[p.index], f"{cap.caption_id} primitive {p.index}")

    skills = {skill: [(p, neg(p)) for p, _ in negs] for skill, negs in cap.skill_negatives.items()}
    return replace(cap, text=text, composed_negatives=[neg(p) for p in cap.perturbations],
                   skill_negatives=skills, spans=spans)


def stage_check(ctx: Context, caps: list[Candidate], pools, config) -> list[Candidate]:
    from foilbench.construct.compass.checks import distinct_problems, text_problems
    from foilbench.construct.compass.spans import locate_spans, map_spans

    template = TemplateRealiser()
    with ctx.log.stage("structural check", caps, unit="caption") as st:
        for c in caps:
            cap = c.data["cap"]
            text = c.data["positive"]
            problems = text_problems(cap.spec, text, pools.objects)
            known, known_spans = template.composed_with_spans(cap.spec)
            # the template's own wording: its spans are known by construction (two objects
            # of one name cannot be told apart in free text, but can here)
            spans = None if problems else (
                known_spans if text == known
                else map_spans(known, known_spans, text, cap.spec) or locate_spans(cap.spec, text))
            if spans is None and not problems:
                problems = ["a primitive cannot be placed in the wording unambiguously"]
            if problems and config.on_violation == "drop":
                st.drop(c, f"structural check: {problems[0]}", verdicts={"problems": problems})
                continue
            if problems:
                text, spans = known, known_spans
            final = negatives_from(cap, text, spans)
            repeats = distinct_problems(final)
            if repeats:
                st.drop(c, f"structural check: {repeats[0]}", verdicts={"problems": repeats})
                continue
            c.data["final"] = final
            st.passed(c, verdicts={"problems": problems, "template_fallbacks": int(bool(problems)),
                                   "negatives_span_confined": len(composed_specs(cap)) - 1})
    return st.survivors


def build(ctx: Context, config: CompassConfig) -> ConstructResult:
    from foilbench.construct.compass.captions import caption_rows

    if config.category_policy not in ("strict", "any"):
        raise ConstructError(f"category_policy must be 'strict' or 'any', got "
                             f"{config.category_policy!r}")
    if config.on_violation not in ("drop", "template"):
        raise ConstructError(f"on_violation must be 'drop' or 'template', got "
                             f"{config.on_violation!r}")
    pairs, pools, root = _graphs(ctx, config)
    graphs = []
    for j, (g, rel) in enumerate(pairs):
        cand = Candidate(f"graph/{g.image_id}", "graph", {"graph": g, "image": rel, "index": j})
        ctx.log.created(cand, stage="scene graphs", inputs={"image": rel,
                                                               "objects": len(g.objects)})
        graphs.append(cand)
    pools = ruled_pools(pools, stage_propose(ctx, graphs, config), config,
                        world=config.scene_graphs is None)
    caps = stage_check(ctx, stage_realise(ctx, stage_structures(ctx, graphs, pools, config)),
                       pools, config)
    ctx.log.keep_all(caps, stage="export")
    rows = [row for c in caps for row in caption_rows(
        c.data["final"], c.data["graph"].data["image"], c.data["graph"].data["graph"].image_id)]
    return ConstructResult(
        name="compass-construct", kind="choice", rows=rows, root=root,
        description=("COMPASS-style captions (levels L1, L2-OA, L2-OR, L3-OAR) worded by a text "
                     "backend under structural checks; role=composed / decomposed / skill as in "
                     "`foilbench compass`. Analyse with `foilbench compass tables RUN_ID`."),
        extras={"builder": "compass-construct", "on_violation": config.on_violation,
                "categories": pools.categories.source, "category_policy": config.category_policy,
                "uncategorised_replacements": dict(pools.uncategorised),
                "proposals": ctx.notes.get("proposals", {}),
                "proposal_category_check": {
                    **pools.categories.proposed.checks,
                    "rejected_examples": [list(r) for r in pools.categories.proposed.rejected]},
                "lexical_exclusions": {"source": pools.lexicon.source,
                                       "applies_to": "open-world graphs (objects, attributes)",
                                       "excluded": dict(sorted(pools.excluded.items())),
                                       "counting": "candidate removals over all draws: a "
                                                   "candidate removed for several primitives "
                                                   "or draws counts each time"},
                "similarity_filter": pools.similarity.describe() if pools.similarity else None,
                "skill_items_dropped_fewer_than_k":
                    ctx.notes.get("skill_items_dropped_fewer_than_k", {})})
