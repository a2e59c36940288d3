"""Structural checks of worded COMPASS captions.

COMPASS asks its captioning model to realise exactly a caption's primitives (§3.1) and keeps
negatives that differ from the ground truth in one primitive (§3.2); the paper states no
automatic check of the wording. These are ours, on every composed text the text backend
returns (the positive c, each c~_i and each skill-targeted negative):

1. every primitive is said: each object name (singular or plural), attribute word and
   predicate appears as whole words;
2. each attribute is bound to its object: the attribute before the object's name with at most
   as many words between as the object has other attributes, plus two ("a dark brown sofa",
   "a large transparent brown metal mug"), or after "<name> is / that is / which is";
3. each relation reads subject, predicate, object in this order, at most eight words apart;
4. nothing else is asserted about objects: no object name of the pools that the spec does not
   hold (unless it is one of the spec's attribute or predicate words);
5. the composed negatives differ from the positive and from each other, and so do the
   negatives of each skill set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.world.token_budget import PAST_CONTEXT, past_context

ATTR_SLACK = 2
REL_GAP = 8


def _pat(word: str, plural: bool = False) -> re.Pattern:
    tail = r"(?:s|es)?" if plural else ""
    return re.compile(rf"\b{re.escape(word.lower())}{tail}\b")


def _n_words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def _bound(low: str, attr: str, name: str, gap: int) -> bool:
    for m in _pat(name, True).finditer(low):
        before = [a for a in _pat(attr).finditer(low[:m.start()])
                  if _n_words(low[a.end():m.start()]) <= gap]
        if before:
            return True
        after = re.match(rf"\W+(?:is|that is|which is)\W+{re.escape(attr.lower())}\b",
                         low[m.end():])
        if after:
            return True
    return False


def _related(low: str, subject: str, predicate: str, obj: str) -> bool:
    for r in _pat(predicate).finditer(low):
        s_ok = any(_n_words(low[m.end():r.start()]) <= REL_GAP
                   for m in _pat(subject, True).finditer(low[:r.start()]))
        o_ok = any(_n_words(low[r.end():r.end() + m.start()]) <= REL_GAP
                   for m in _pat(obj, True).finditer(low[r.end():]))
        if s_ok and o_ok:
            return True
    return False


def text_problems(spec: CaptionSpec, text: str, vocabulary: Sequence[str]) -> list[str]:
    """What ``text`` gets wrong about ``spec`` (checks 1-4 of the module docstring)."""
    low = " ".join(text.lower().split())
    if not low:
        return ["empty text"]
    out = []
    names = {oid: name for oid, name in spec.objects}
    for _, name in spec.objects:
        if not _pat(name, True).search(low):
            out.append(f"object '{name}' missing")
    for oid, attr in spec.attributes:
        if not _pat(attr).search(low):
            out.append(f"attribute '{attr}' missing")
        elif not _bound(low, attr, names[oid], len(spec.attributes_of(oid)) - 1 + ATTR_SLACK):
            out.append(f"attribute '{attr}' not bound to '{names[oid]}'")
    for s, p, o in spec.relations:
        if not _pat(p).search(low):
            out.append(f"relation '{p}' missing")
        elif not _related(low, names[s], p, names[o]):
            out.append(f"relation '{names[s]} {p} {names[o]}' not in order")
    said = {n.lower() for n in names.values()} | {a.lower() for _, a in spec.attributes} | \
        {p.lower() for _, p, _ in spec.relations}
    foreign = sorted(w for w in vocabulary if w.lower() not in said
                     and not any(w.lower() in s for s in said) and _pat(w, True).search(low))
    if foreign:
        out.append(f"mentions objects not in the spec: {', '.join(foreign[:3])}")
    return out


def caption_problems(specs: Sequence[CaptionSpec], texts: Sequence[str], pools,
                     n_composed: int) -> list[tuple[int, str]]:
    """``(text index, problem)`` for one caption's texts, ordered as
    :func:`foilbench.construct.compass.pipeline.composed_specs` (positive, the ``n_composed``
    c~_i, then skill negatives); empty when every check passes."""
    problems = [(i, p) for i, (spec, text) in enumerate(zip(specs, texts, strict=True))
                for p in text_problems(spec, text, pools.objects)]
    positive = texts[0].lower()
    seen = {positive}
    for i in range(1, 1 + n_composed):
        t = texts[i].lower()
        if t in seen:
            problems.append((i, "negative repeats the positive or another negative"))
        seen.add(t)
    skill_seen: set[str] = set()
    for i in range(1 + n_composed, len(texts)):
        t = texts[i].lower()
        if t == positive:
            problems.append((i, "negative repeats the positive or another negative"))
        skill_seen.add(t)
    return problems + [(i, PAST_CONTEXT) for i in past_context(texts[0], texts[1:], start=1)]


def distinct_problems(cap) -> list[str]:
    """Check 5 on a caption built by substitution: composed negatives distinct from the positive
    and each other; skill negatives distinct from the positive."""
    out = []
    positive = cap.text.lower()
    seen = {positive}
    for t in cap.composed_negatives:
        if t.lower() in seen:
            out.append("negative repeats the positive or another negative")
        seen.add(t.lower())
    for negs in cap.skill_negatives.values():
        if any(t.lower() == positive for _, t in negs):
            out.append("negative repeats the positive or another negative")
    texts = [*cap.composed_negatives, *(t for negs in cap.skill_negatives.values() for _, t in negs)]
    if past_context(cap.text, texts):
        out.append(PAST_CONTEXT)
    return out
