"""COMPASS's spend plan: the most text calls per stage, each with what bounds one call
(:class:`~foilbench.construct.engine.budget.Calls`: its output budget and its prompt's size),
so the dry run bounds each stage by its own requests (issue 40).

The counts are the pipeline's own: one proposal per distinct (kind, word) of the run's graphs
(:func:`.pipeline.stage_propose`), one realisation per caption, at most ``per_level`` captions
per graph and level it can fill (:func:`.captions.captions_for_graph`, :func:`levels_of`). The
graphs are the run's own: the
world scenes are sampled here as the run samples them (not rendered); a scene-graph file's
graphs are read and cut to ``--limit`` (a graph with no image is dropped by the run, so
counting it only loosens the bound).

Prompt sizes are bounds, not estimates: a proposal's fields are its kind and word, and a
realisation's facts are at most ``n_max`` of its graph's facts (objects, attributes,
relations, worded as :func:`.realise.describe_spec` words them).

The world scenes, the words to propose for and the output budgets live here and the pipeline
takes them from here, so the plan counts what the run sends.
"""

from __future__ import annotations

from foilbench.construct.compass.sampling import LEVELS
from foilbench.construct.engine.budget import Calls, fixed_prompt
from foilbench.construct.engine.prompts import template_bytes
from foilbench.construct.engine.replies import is_ascii, json_reply_tokens

#: the proposal prompt asks for "up to 12" candidates; a word or short phrase with its quotes
#: and comma takes at most this many bytes
MAX_CANDIDATES, CANDIDATE_BYTES = 12, 16


def propose_tokens(ascii: bool) -> int:
    """Output budget of one ``compass.propose`` request (issue 40: a list of k items is k x
    per-item, :func:`~foilbench.construct.engine.replies.json_reply_tokens`: one token per
    two bytes when its kind and word are ASCII, ``ascii``, else one a byte).

    >>> propose_tokens(True), propose_tokens(False)
    (128, 224)
    """
    return json_reply_tokens(MAX_CANDIDATES * CANDIDATE_BYTES, ascii)


def realise_tokens(facts_bytes: int, ascii: bool = False) -> int:
    """Output budget of one ``compass.realise`` request: a caption that states the listed
    facts, no longer than the facts themselves, in its JSON (one token per two bytes when
    the facts are ASCII, ``ascii``, else one a byte:
    :func:`~foilbench.construct.engine.replies.json_reply_tokens`).

    >>> realise_tokens(100), realise_tokens(100, ascii=True)
    (132, 82)
    """
    return json_reply_tokens(facts_bytes, ascii)


def world_scenes(config) -> list:
    """The run's world scenes (``--n-scenes`` of them, seeded by ``--seed`` and their index)."""
    import numpy as np

    from foilbench.world.sample import sample_scene

    out = []
    for j in range(config.n_scenes):
        rng = np.random.default_rng([config.seed, j])
        out.append(sample_scene(rng, int(rng.integers(3, 9)), "minimal",
                                scene_id_prefix="compass-"))
    return out


def words_of(graphs) -> list[tuple[str, str, str | None]]:
    """(kind, word, VG synset) of every primitive ``graphs`` can put in a caption: the
    proposal stage's calls, one each."""
    out: dict[tuple[str, str], str | None] = {}
    for graph in graphs:
        for o in graph.objects:
            out.setdefault(("object", o.name), o.synsets[0] if o.synsets else None)
            for a in o.attributes:
                out.setdefault(("attribute", a), None)
        for r in graph.relationships:
            out.setdefault(("relation", r.predicate), None)
    return [(k, w, syn) for (k, w), syn in out.items()]


def run_graphs(config) -> list:
    """The scene graphs the run builds captions from (world scenes unrendered)."""
    if config.scene_graphs is None:
        from foilbench.construct.compass.world_graph import scene_graph_from_world

        return [scene_graph_from_world(scene) for scene in world_scenes(config)]
    from foilbench.construct.compass.vg import read_scene_graphs

    graphs = read_scene_graphs(config.scene_graphs)
    return graphs[: config.limit] if config.limit else graphs


def facts_bytes(graph, level: str | None = None) -> int:
    """Most UTF-8 bytes of the facts one caption of ``graph`` lists to the realisation prompt
    (at ``level``, or at any level): a caption states at most ``n_max`` of its graph's facts
    (:data:`.sampling.LEVELS`; the sampler asserts it), and only of the kinds its level
    states (L1 objects only, L2-OA no relations, L2-OR no attributes), so at most the
    ``n_max`` longest such fact lines, one line each, as :func:`.realise.describe_spec`
    words them."""
    names = {o.object_id: o.name for o in graph.objects}
    specs = [LEVELS[level]] if level else list(LEVELS.values())
    objects = [f"- object: {o.name}" for o in graph.objects]
    attributes = [f"- attribute: the {o.name} is {a}" for o in graph.objects
                  for a in o.attributes]
    relations = [f"- relation: the {names.get(r.subject_id, '')} is {r.predicate} the "
                 f"{names.get(r.object_id, '')}" for r in graph.relationships]
    most = 0
    for spec in specs:
        lines = (objects + (attributes if spec.attributes else [])
                 + (relations if spec.relations else []))
        longest = sorted((len(x.encode("utf-8")) for x in lines), reverse=True)[:spec.n_max]
        # the lines and the newlines between
        most = max(most, sum(longest) + max(len(longest) - 1, 0))
    return most


def levels_of(graph) -> list[str]:
    """The levels ``graph`` can fill, known from the graph alone
    (:func:`.sampling.sample_caption_spec` returns None for the others on every walk, so
    :func:`.captions.captions_for_graph` realises no caption there): L1 always; a level
    with relations only if some relation joins two distinct objects (the walk follows
    those alone); L2-OA only if some object has an attribute; L3-OAR only if an object
    with an attribute also has such a relation (its walk's objects are joined by them).
    A level kept here may still go unfilled by a run's walks, so the count stays a bound.

    >>> from foilbench.construct.compass.scene_graph import SceneGraph, SGObject
    >>> levels_of(SceneGraph("g", (SGObject(1, "cube", ("red",)), SGObject(2, "ball"))))
    ['L1', 'L2-OA']
    """
    joined = {i for r in graph.relationships if r.subject_id != r.object_id
              for i in (r.subject_id, r.object_id)}
    described = {o.object_id for o in graph.objects if o.attributes}
    return [name for name, spec in LEVELS.items()
            if (not spec.relations or joined) and (not spec.attributes or described)
            and not (spec.relations and spec.attributes and not described & joined)]


def compass_plan(config) -> dict[str, dict[str, int]]:
    """Per distinct (kind, word) of the run's graphs one proposal call, grouped by kind
    (``parts``); per graph, level it can fill (:func:`levels_of`) and ``per_level`` one
    realisation call, bounded per graph and level (``parts``: that graph's longest facts of
    that level's kinds, :func:`facts_bytes`)."""
    graphs = run_graphs(config)
    words = words_of(graphs)
    # a fact line holds only the graphs' words and ASCII template text (:func:`facts_bytes`)
    ascii = is_ascii(*(w for _, w, _ in words))

    def propose(kind: str) -> Calls:
        """The proposals for one kind: the kind is the same text in each, so the provider
        counts it with the prompt (``fill``); the words are known texts, each sent in the
        one call that asks for it (``known``), and bounded at that kind's longest."""
        mine = tuple(w for k, w, _ in words if k == kind)
        word = max(len(w.encode("utf-8")) for w in mine)
        return Calls(len(mine), max_tokens=propose_tokens(ascii),
                     prompt_bytes=template_bytes("compass.propose") + len(kind) + word,
                     fixed=(fixed_prompt("compass.propose", {"word": word}, known="word",
                                         fill={"kind": kind}),), known=mine, known_uses=1)

    def realise(n: int, facts: int, parts: tuple = ()) -> Calls:
        return Calls(n, max_tokens=realise_tokens(facts, ascii),
                     prompt_bytes=template_bytes("compass.realise") + facts,
                     fixed=(fixed_prompt("compass.realise", {"facts": facts}),), parts=parts)

    parts = tuple(realise(config.per_level, facts_bytes(g, level))
                  for g in graphs for level in levels_of(g))
    facts = max((facts_bytes(g) for g in graphs), default=0)
    kinds = tuple(propose(k) for k in dict.fromkeys(k for k, _, _ in words))
    return {"propose same-category replacements": {"text": Calls(
                len(words), max_tokens=propose_tokens(ascii),
                prompt_bytes=max((c.prompt_bytes for c in kinds), default=0), parts=kinds)},
            "realise positive (text backend)": {"text": realise(
                sum(map(int, parts)), facts, parts)}}
