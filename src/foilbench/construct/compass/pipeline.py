"""The ``compass`` pipeline: COMPASS §3 captions from scene graphs, worded by a text backend.

COMPASS §3.1: "For each image, we sample a subgraph S using a random walk of up to ten steps
... For the final step of synthesis, we convert the resulting primitive sets into natural
language captions using GPT 4o-mini with few-shot examples". §3.2: hard negatives replace "a
single primitive p_i in P(c) with another primitive of the same type t, while keeping all other
primitives fixed".

The sampling, the structural levels and the negatives are the existing construction
(:mod:`foilbench.construct.compass.captions`); this pipeline decides every structure first with the
template wording (so random draws never depend on a model's wording), then has the text
backend word every composed caption -- the positive, each c~_i and each skill-targeted
negative -- from its primitive list (:func:`foilbench.construct.compass.realise.describe_spec`,
prompt ``compass.realise``). Decomposed captions d_i, d~_i stay templated, as in
:class:`~foilbench.construct.compass.realise.PromptRealiser`.

Structural constraints checked on every worded caption (:mod:`.compass_checks`): every
primitive's words present, each attribute next to its object, each relation between its
subject and object in order, no object of the vocabulary that the spec does not hold, and
negatives distinct from the positive and from each other. A caption failing any check is
dropped (``on_violation="drop"``) or falls back to the template wording for the failing texts
(``"template"``), counted either way. COMPASS's Sentence-Transformer filter of overly similar
negatives is not applied (the replacements are exact primitives, not free rewrites).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from foilbench.construct.compass.realise import TemplateRealiser, describe_spec
from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.construct.engine.export import ConstructResult
from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.replies import ReplyError, clean_sentence, parse_json, require
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

    def options(self) -> dict:
        out = asdict(self)
        out["scene_graphs"] = str(self.scene_graphs) if self.scene_graphs else None
        out["images"] = str(self.images) if self.images else None
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
        from foilbench.world.sample import sample_scene

        (ctx.out / "images").mkdir(parents=True, exist_ok=True)
        pairs = []
        for j in range(config.n_scenes):
            rng = np.random.default_rng([config.seed, j])
            scene = sample_scene(rng, int(rng.integers(3, 9)), "minimal",
                                 scene_id_prefix="compass-")
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


def plan(config: CompassConfig) -> dict[str, int]:
    """Per graph and level: 1 + N (c~_i) + 3 x 4 (skill negatives) composed texts, N <= 12."""
    if config.scene_graphs is None:
        n = config.n_scenes
    else:
        from foilbench.construct.compass.vg import read_scene_graphs

        n = len(read_scene_graphs(config.scene_graphs))
        n = min(n, config.limit) if config.limit else n
    return {"text": n * 4 * config.per_level * (1 + 12 + 12)}


def composed_specs(cap) -> list[CaptionSpec]:
    """Every spec whose composed wording the caption's rows use: positive, c~_i, skill."""
    specs = [cap.spec] + [cap.spec.replaced(p.index, p.new) for p in cap.perturbations]
    for negs in cap.skill_negatives.values():
        specs += [cap.spec.replaced(p.index, p.new) for p, _ in negs]
    return specs


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


def stage_realise(ctx: Context, caps: list[Candidate]) -> list[Candidate]:
    with ctx.log.stage("realise (text backend)", caps, unit="caption") as st:
        jobs = []
        for c in caps:
            for k, spec in enumerate(composed_specs(c.data["cap"])):
                jobs.append((f"{c.id}#{k}", (ctx.text_request(
                    "compass.realise", {"kind": "compass.realise", "spec": spec_to_dict(spec)},
                    max_tokens=200, facts=describe_spec(spec)),)))
        results = ctx.call_many(st, "text", jobs)
        for c in caps:
            texts = []
            for k in range(len(composed_specs(c.data["cap"]))):
                res = results[f"{c.id}#{k}"]
                if isinstance(res, Failure):
                    texts = None
                    st.drop(c, "call failed", error=res.error, attempts=res.attempts)
                    break
                try:
                    texts.append(clean_sentence(require(parse_json(res.value),
                                                        {"caption": str}, "realise")["caption"]))
                except ReplyError:
                    texts.append(clean_sentence(res.value))
            if texts is not None:
                c.data["texts"] = texts
                st.passed(c, outputs={"positive": texts[0], "n_texts": len(texts)})
    return st.survivors


def stage_check(ctx: Context, caps: list[Candidate], pools, config) -> list[Candidate]:
    from foilbench.construct.compass.checks import caption_problems

    template = TemplateRealiser()
    with ctx.log.stage("structural check", caps, unit="caption") as st:
        for c in caps:
            cap = c.data["cap"]
            specs = composed_specs(cap)
            problems = caption_problems(specs, c.data["texts"], pools, len(cap.perturbations))
            if problems and config.on_violation == "drop":
                st.drop(c, f"structural check: {problems[0][1]}",
                        verdicts={"problems": [f"{i}: {p}" for i, p in problems]})
                continue
            texts = list(c.data["texts"])
            for i, _ in problems:
                texts[i] = template.composed(specs[i])
            c.data["final"] = _reworded(cap, texts)
            st.passed(c, verdicts={"problems": [f"{i}: {p}" for i, p in problems],
                                   "template_fallbacks": len({i for i, _ in problems})})
    return st.survivors


def _reworded(cap, texts: list[str]):
    """``cap`` with every composed text taken from ``texts`` (order of composed_specs)."""
    n = len(cap.perturbations)
    skills, k = {}, 1 + n
    for skill, negs in cap.skill_negatives.items():
        skills[skill] = [(p, texts[k + j]) for j, (p, _) in enumerate(negs)]
        k += len(negs)
    return replace(cap, text=texts[0], composed_negatives=texts[1:1 + n],
                   skill_negatives=skills)


def build(ctx: Context, config: CompassConfig) -> ConstructResult:
    from foilbench.construct.compass.captions import caption_rows

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
                "skill_items_dropped_fewer_than_k":
                    ctx.notes.get("skill_items_dropped_fewer_than_k", {})})
