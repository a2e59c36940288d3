"""Auto-Comp's programmatic checks and rewrites on caption text.

Semantic preservation (Auto-Comp §3, Stage 1): "This check programmatically parses the LLM's
output to verify that all original objects and their assigned attributes from the concept C
are present and correctly associated. We define a 'correct association' with a strict
syntactic pattern". The patterns themselves did not survive in our copy of the paper, so ours
are stated here:

- attribute binding (o_i, a_i): ``a_i`` followed by at most two words and then ``o_i`` ("a red
  ceramic mug"), or ``o_i`` followed by "is"/"that is"/"which is"/"painted"/"coloured" and
  ``a_i`` ("the mug is red"); each binding must use its own occurrence of the attribute.
- relational binding (o_i, r_i, o_{i+1}): ``o_i``, then ``r_i``, then ``o_{i+1}``, in this
  order, at most six words apart each ("a cube sits just left of a sphere").

Words match whole words, case aside; objects match their plural too. The matched spans are
kept: Stage 3's Swap and Confusion negatives of a Contextual caption substitute the concept's
words at exactly those places (:func:`substitute`), so positive and negatives differ only in
the swapped elements, as the paper asks ("positive and negative captions are perfectly
controlled ... differing only in the swapped conceptual elements").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from foilbench.construct.autocomp.negatives import Concept
from foilbench.construct.backends.world_questions import (
    NONE_OF_THESE,
    color_question,
    relation_question,
)

GAP_ATTR = 2
GAP_REL = 6
COPULAS = ("is", "that is", "which is", "painted", "coloured", "colored")


def _word(w: str, plural: bool = False) -> str:
    tail = r"(?:s|es)?" if plural else ""
    return rf"\b{re.escape(w.lower())}{tail}\b"


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    role: str  # "object" or "value"
    index: int  # position in concept.objects or concept.values


def _gap(n: int) -> str:
    """Between two matched words: up to ``n`` other words."""
    return rf"(?:\W+\w+){{0,{n}}}?\W+"


def attribute_spans(text: str, concept: Concept) -> list[Span] | None:
    low = text.lower()
    spans: list[Span] = []
    used: set[int] = set()
    for i, (obj, val) in enumerate(zip(concept.objects, concept.values, strict=True)):
        o, v = _word(obj, plural=True), _word(val)
        forward = rf"(?P<v>{v}){_gap(GAP_ATTR)}(?P<o>{o})"
        cop = "|".join(re.escape(c) for c in COPULAS)
        backward = rf"(?P<o>{o})\W+(?:{cop})\W+(?P<v>{v})"
        found = None
        for pattern in (forward, backward):
            for m in re.finditer(pattern, low):
                if m.start("v") not in used and m.start("o") not in used:
                    found = m
                    break
            if found:
                break
        if found is None:
            return None
        used.update({found.start("v"), found.start("o")})
        spans.append(Span(found.start("o"), found.start("o") + len(obj), "object", i))
        spans.append(Span(found.start("v"), found.end("v"), "value", i))
    return spans


def _words_between(text: str, a: int, b: int) -> int:
    return len(re.findall(r"\w+", text[a:b]))


def relation_spans(text: str, concept: Concept) -> list[Span] | None:
    """For each relation in order: its first occurrence after the previous one, the nearest
    mention of its subject before it and of its object after it (each within GAP_REL words),
    so "a cube left of a sphere, and the sphere above a cone" binds both sphere mentions."""
    low = text.lower()
    spans: list[Span] = []
    start = 0
    for i, rel in enumerate(concept.values):
        a, b = concept.objects[i], concept.objects[i + 1]
        found = None
        for r in re.finditer(_word(rel), low[start:]):
            rs, re_ = r.start() + start, r.end() + start
            subj = [m for m in re.finditer(_word(a, True), low[:rs])
                    if _words_between(low, m.end(), rs) <= GAP_REL]
            obj = [m for m in re.finditer(_word(b, True), low[re_:])
                   if _words_between(low, re_, m.start() + re_) <= GAP_REL]
            if subj and obj:
                found = (subj[-1].start(), rs, re_, obj[0].start() + re_)
                break
        if found is None:
            return None
        sa, rs, re_, ob = found
        spans += [Span(sa, sa + len(a), "object", i), Span(rs, re_, "value", i),
                  Span(ob, ob + len(b), "object", i + 1)]
        start = re_
    return spans


def preserved_spans(text: str, concept: Concept) -> list[Span] | None:
    """The binding spans of ``text`` (unique by position), or None when a binding is
    missing: the semantic-preservation check."""
    found = (attribute_spans if concept.spec.binds == "attribute" else relation_spans)(
        text, concept)
    if found is None:
        return None
    by_pos: dict[int, Span] = {}
    for s in found:
        if s.start in by_pos and by_pos[s.start] != s:
            if by_pos[s.start].role != s.role or by_pos[s.start].index != s.index:
                return None  # one word read as two different elements
        by_pos[s.start] = s
    return sorted(by_pos.values(), key=lambda s: s.start)


def substitute(text: str, spans: list[Span], objects, values) -> str:
    """``text`` with each span replaced by the arrangement's word (articles fixed)."""
    from foilbench.construct.sugarcrepe.template import article_fix

    out = text
    for s in sorted(spans, key=lambda s: s.start, reverse=True):
        word = objects[s.index] if s.role == "object" else values[s.index]
        out = out[:s.start] + word + out[s.end:]
    return article_fix(out)


def questions(concept: Concept, value_choices: tuple[str, ...]) -> list[tuple[str, list, str]]:
    """Auto-Comp's Attribute/Relation Correctness Check: ``(question, choices, expected)``,
    answers constrained to the task's vocabulary (plus "none of these" for relations)."""
    if concept.spec.binds == "attribute":
        return [(color_question(o), list(value_choices), v)
                for o, v in zip(concept.objects, concept.values, strict=True)]
    return [(relation_question(concept.objects[i], concept.objects[i + 1]),
             [*value_choices, NONE_OF_THESE], r) for i, r in enumerate(concept.values)]
