"""COMPASS negatives as span substitutions in one wording of the positive.

COMPASS §3.2: "we construct hard negatives by replacing a single primitive p_i in P(c) with
another primitive of the same type t, while keeping all other primitives fixed ... This results
in captions that differ minimally ... After substitution, we adjust the caption for
grammatical correctness". The positive is worded once (template or LLM); every composed,
skill and decomposed negative is that wording with the replaced primitive's span(s) rewritten
(every mention, for an object named twice) and only local grammar fixed: the indefinite
article right before a span (a/an) and the plural of an object noun the text used in the
plural. :func:`diff_confined` is the independent check that a negative's token difference
from its positive lies inside those spans (plus the article token before each); builders
assert it, so a reworded negative can never ship.

Spans of a free-text positive (an LLM's wording) are found by :func:`locate_spans`: whole
words, objects by singular or plural, an attribute at the occurrence bound to its object, a
relation at the occurrence between its subject and object. Any ambiguity (two objects with one
name, one attribute word that cannot be told apart) returns None: the caller then keeps the
template wording, whose spans are known by construction.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.errors import FoilbenchError

Span = tuple[int, int]  # character offsets [start, end) into the positive's text
SpanMap = dict[int, list[Span]]  # primitive index -> its spans (every mention)

ATTR_GAP = 2  # words allowed between an attribute and its object ("a dark brown sofa")
REL_GAP = 8  # words allowed between a relation and its subject / object
_TOKEN = re.compile(r"\w+(?:[-']\w+)*|[^\w\s]")
_IRREGULAR_PLURALS = {"man": "men", "woman": "women", "person": "people", "child": "children",
                      "foot": "feet", "tooth": "teeth", "mouse": "mice", "goose": "geese",
                      "leaf": "leaves", "knife": "knives", "shelf": "shelves",
                      "glass": "glasses", "bus": "buses", "sheep": "sheep", "fish": "fish"}
_IRREGULAR_SINGULARS = {v: k for k, v in _IRREGULAR_PLURALS.items()}


class SpanError(FoilbenchError, AssertionError):
    """A negative differs from its positive outside the replaced primitive's span."""


def pluralize(phrase: str) -> str:
    """The plural of a noun phrase's head (last word): "cup" -> "cups", "box" -> "boxes"."""
    head, _, rest = phrase.rpartition(" ")
    word = rest
    low = word.lower()
    if low in _IRREGULAR_PLURALS:
        plural = _IRREGULAR_PLURALS[low]
    elif re.search(r"(s|x|z|ch|sh)$", low):
        plural = word + "es"
    elif re.search(r"[^aeiou]y$", low):
        plural = word[:-1] + "ies"
    else:
        plural = word + "s"
    return f"{head} {plural}" if head else plural


def lemma(phrase: str) -> str:
    """The singular of a noun phrase's head, lower-cased: "cups" -> "cup", "living rooms" ->
    "living room", "boxes" -> "box", "glasses" -> "glass"; other words unchanged.

    A rule-based lemmatiser (no WordNet data is available offline): irregular plurals from a
    table, then -ies -> -y, -(s|x|z|ch|sh)es -> drop "es", -s (not -ss, -us, -is) -> drop "s"."""
    words = " ".join(phrase.lower().split()).split(" ")
    w = words[-1]
    if w in _IRREGULAR_SINGULARS:
        w = _IRREGULAR_SINGULARS[w]
    elif w in _IRREGULAR_PLURALS:
        pass
    elif len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and re.search(r"(ss|x|z|ch|sh)es$", w):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not re.search(r"(ss|us|is)$", w):
        w = w[:-1]
    return " ".join([*words[:-1], w])


def article_for(word: str) -> str:
    """The indefinite article the templates use: "an" before a vowel letter, else "a"."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def _pat(word: str, plural: bool = False) -> str:
    tail = r"(?:s|es)?" if plural else ""
    return rf"(?<![\w-]){re.escape(word.lower())}{tail}(?![\w-])"


def _words_between(text: str, a: int, b: int) -> int:
    return len(re.findall(r"\w+", text[a:b]))


def _overlaps(span: Span, taken: Sequence[Span]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in taken)


def locate_spans(spec: CaptionSpec, text: str) -> SpanMap | None:
    """The span(s) of every primitive of ``spec`` in ``text``, or None when some primitive is
    missing or cannot be placed unambiguously (module docstring)."""
    low = text.lower()
    prims = spec.primitives
    names = [name for _, name in spec.objects]
    if len({n.lower() for n in names}) != len(names):
        return None  # two objects with one name: a mention cannot be assigned
    out: SpanMap = {}
    taken: list[Span] = []
    # longer words first, so "living room" claims its words before "room" does
    order = sorted(range(len(prims)), key=lambda i: -len(prims[i].value))
    object_index = {oid: i for i, (oid, _) in enumerate(spec.objects)}
    for i in (i for i in order if prims[i].kind == "object"):
        found = [(m.start(), m.end()) for m in re.finditer(_pat(prims[i].value, True), low)]
        found = [s for s in found if not _overlaps(s, taken)]
        if not found:
            return None
        out[i] = found
        taken += found
    for i in (i for i in order if prims[i].kind != "object"):
        p = prims[i]
        cands = [(m.start(), m.end()) for m in re.finditer(_pat(p.value), low)]
        cands = [s for s in cands if not _overlaps(s, taken)]
        if p.kind == "attribute":
            mentions = out[object_index[p.object_id]]
            gap = len(spec.attributes_of(p.object_id)) - 1 + ATTR_GAP
            bound = [s for s in cands if any(
                m[0] >= s[1] and _words_between(low, s[1], m[0]) <= gap for m in mentions)
                or any(re.fullmatch(r"\W+(?:is|are|that is|which is)\W+", low[m[1]:s[0]])
                       for m in mentions if m[1] <= s[0])]
        else:
            subj = out[object_index[p.object_id]]
            obj = out[object_index[p.target_id]]
            bound = [s for s in cands
                     if any(m[1] <= s[0] and _words_between(low, m[1], s[0]) <= REL_GAP
                            for m in subj)
                     and any(m[0] >= s[1] and _words_between(low, s[1], m[0]) <= REL_GAP
                             for m in obj)]
        same_word = any(j != i and prims[j].kind == p.kind
                        and prims[j].value.lower() == p.value.lower() for j in range(len(prims)))
        if not bound or (len(bound) > 1 and same_word):
            return None  # missing, or places that cannot be told apart from another's
        out[i] = bound  # every bound mention (one, unless the text repeats the fact)
        taken += bound
    return out


def map_spans(template: str, template_spans: SpanMap, text: str,
              spec: CaptionSpec | None = None) -> SpanMap | None:
    """The template's spans carried into ``text`` by a character alignment (difflib): each
    span must fall inside one block the two texts share and stand as whole words in ``text``.
    This places primitives in a wording that keeps the template's order (two objects with
    one name included), where :func:`locate_spans` would find them ambiguous; None when some
    span cannot be carried."""
    sm = difflib.SequenceMatcher(a=template.lower(), b=text.lower(), autojunk=False)
    blocks = [b for b in sm.get_matching_blocks() if b.size]
    out: SpanMap = {}
    for index, spans in template_spans.items():
        mapped = []
        for s, e in spans:
            block = next((b for b in blocks if b.a <= s and e <= b.a + b.size), None)
            if block is None:
                return None
            ms, me = block.b + s - block.a, block.b + e - block.a
            if (ms > 0 and (text[ms - 1].isalnum() or text[ms - 1] == "-")) or \
                    (me < len(text) and (text[me].isalnum() or text[me] == "-")):
                return None
            mapped.append((ms, me))
        out[index] = mapped
    if spec is not None:  # an object the wording names more often than the template does
        names = [n.lower() for _, n in spec.objects]
        taken = [sp for sps in out.values() for sp in sps]
        for i, (_, name) in enumerate(spec.objects):
            extra = [(m.start(), m.end()) for m in re.finditer(_pat(name, True), text.lower())
                     if not _overlaps((m.start(), m.end()), taken)]
            if extra and names.count(name.lower()) > 1:
                return None  # cannot tell which of two same-named objects it is
            out[i] = sorted(out.get(i, []) + extra)
            taken += extra
    return out


def substitute(text: str, spans: SpanMap, index: int, old: str, new: str) -> str:
    """``text`` with primitive ``index``'s spans (which say ``old``) rewritten to ``new``: the
    plural kept where the text wrote ``old`` in the plural, the article "a"/"an" just before
    each span re-chosen for the new word."""
    out = text
    for start, end in sorted(spans[index], reverse=True):
        said = text[start:end]
        word = new
        if said.lower() != old.lower() and said.lower().startswith(old.lower()):
            word = pluralize(new)  # "cups" for "cup": agreement with the rest of the text
        out = out[:start] + word + out[end:]
        before = re.search(r"(?<![\w-])(a|an|A|An)(\s+)$", out[:start])
        if before:
            art = article_for(word)
            art = art.capitalize() if before.group(1)[0].isupper() else art
            out = out[:before.start(1)] + art + before.group(2) + out[start:]
    return out


def tokens(text: str) -> list[tuple[str, int, int]]:
    """Word and punctuation tokens with their character offsets."""
    return [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def diff_confined(positive: str, negative: str, spans: Sequence[Span]) -> bool:
    """Whether every token of ``positive`` that ``negative`` changes, drops, or inserts next to
    lies inside ``spans`` or is the article token right before one; and the negative differs.

    Computed from the two texts alone (word by word when they have as many words, else difflib
    over word tokens), not from how the negative was made, so it also catches a negative that
    was reworded."""
    a, b = tokens(positive), tokens(negative)
    if [t for t, _, _ in a] == [t for t, _, _ in b]:
        return False
    allowed: set[int] = set()
    for k, (_tok, s, e) in enumerate(a):
        if any(s < se and ss < e for ss, se in spans):
            allowed.add(k)
            if k > 0 and a[k - 1][0].lower() in ("a", "an"):
                allowed.add(k - 1)
    if len(a) == len(b):
        # same length: compare word by word. difflib's alignment is ambiguous when a replaced
        # word repeats ("... in front of the cube, and ... in front of the cube") and could
        # report a change outside the spans that this valid alignment does not have
        return all(k in allowed for k in range(len(a)) if a[k][0].lower() != b[k][0].lower())
    sm = difflib.SequenceMatcher(a=[t.lower() for t, _, _ in a],
                                 b=[t.lower() for t, _, _ in b], autojunk=False)
    for op, i1, i2, _, _ in sm.get_opcodes():
        if op == "equal":
            continue
        touched = range(i1, i2) if i2 > i1 else [i1 - 1, i1]  # an insertion: its neighbours
        if i2 > i1 and not all(k in allowed for k in touched):
            return False
        if i2 == i1 and not any(k in allowed for k in touched):
            return False
    return True


def check_confined(positive: str, negative: str, spans: Sequence[Span], what: str) -> str:
    """``negative`` when :func:`diff_confined`, else :class:`SpanError` naming ``what``."""
    if not diff_confined(positive, negative, spans):
        raise SpanError(f"{what}: negative {negative!r} differs from positive {positive!r} "
                        f"outside the replaced span(s) {list(spans)}")
    return negative
