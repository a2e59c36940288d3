"""Turning COMPASS caption structures into text.

COMPASS realises its captions with a language model; offline, foilbench uses deterministic
templates. Any backend implements :class:`Realiser`: it sees only a ``CaptionSpec`` and words
the positive (and d_i); every negative (c~_i, skill, d~_i) is that wording with the replaced
primitive's span substituted (:mod:`foilbench.construct.compass.spans`, COMPASS §3.2 "differ
minimally"), never a new wording. An LLM backend must be deterministic for a given spec
(temperature 0, a fixed prompt) for the benchmark to be reproducible.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from foilbench.construct.compass.sampling import CaptionSpec


@runtime_checkable
class Realiser(Protocol):
    """Wording backend. ``name`` is recorded in the benchmark manifest."""

    name: str

    def composed(self, spec: CaptionSpec) -> str:
        """The whole caption: every primitive of ``spec`` in one text."""
        ...

    def decomposed(self, spec: CaptionSpec, index: int) -> str:
        """Primitive ``index`` of ``spec`` alone (with its object, for attributes and
        relations)."""
        ...


def with_article(words: str) -> str:
    return ("an " if words[:1].lower() in "aeiou" else "a ") + words


class _Pieces:
    """Text built piece by piece, remembering which primitive each piece states."""

    def __init__(self) -> None:
        self.text = ""
        self.spans: dict[int, list[tuple[int, int]]] = {}

    def add(self, piece: str, index: int | None = None) -> None:
        if index is not None:
            self.spans.setdefault(index, []).append((len(self.text), len(self.text) + len(piece)))
        self.text += piece


class TemplateRealiser:
    """Deterministic templates, the offline default.

    composed, no relations:  "a red metal cube, a sphere and a blue mug"
    composed, relations:     "a red cube left of a sphere, and the sphere behind a blue mug"
    decomposed:              "There is a cube in the image." / "There is a red cube." /
                             "The cube is left of the sphere."

    ``*_with_spans`` also return where each primitive is said (primitive index -> character
    spans, every mention of an object), the spans negatives substitute into
    (:mod:`foilbench.construct.compass.spans`).
    """

    name = "template"

    def _noun_phrase(self, spec: CaptionSpec, object_id: int, out: _Pieces) -> None:
        n_o = spec.n_o
        obj_index = next(i for i, (oid, _) in enumerate(spec.objects) if oid == object_id)
        attrs = [(n_o + k, a) for k, (oid, a) in enumerate(spec.attributes) if oid == object_id]
        first = attrs[0][1] if attrs else spec.name_of(object_id)
        out.add(with_article(first)[: -len(first)])
        for k, a in attrs:
            out.add(a, k)
            out.add(" ")
        out.add(spec.name_of(object_id), obj_index)

    def composed_with_spans(self, spec: CaptionSpec) -> tuple[str, dict]:
        out = _Pieces()
        obj_index = {oid: i for i, (oid, _) in enumerate(spec.objects)}
        if not spec.relations:
            for k, (oid, _) in enumerate(spec.objects):
                if k:
                    out.add(" and " if k == spec.n_o - 1 else ", ")
                self._noun_phrase(spec, oid, out)
            return out.text, out.spans
        mentioned: set[int] = set()

        def ref(oid: int) -> None:
            if oid in mentioned:
                out.add("the ")
                out.add(spec.name_of(oid), obj_index[oid])
                return
            mentioned.add(oid)
            self._noun_phrase(spec, oid, out)

        base = spec.n_o + spec.n_a
        for k, (s, p, o) in enumerate(spec.relations):
            if k:
                out.add(", and ")
            ref(s)
            out.add(" ")
            out.add(p, base + k)
            out.add(" ")
            ref(o)
        for oid, _ in spec.objects:
            if oid not in mentioned:
                out.add(", and ")
                self._noun_phrase(spec, oid, out)
        return out.text, out.spans

    def composed(self, spec: CaptionSpec) -> str:
        return self.composed_with_spans(spec)[0]

    def decomposed_with_spans(self, spec: CaptionSpec, index: int) -> tuple[str, dict]:
        """d_i with the span of primitive ``index`` (the only primitive it replaces)."""
        prim = spec.primitives[index]
        out = _Pieces()
        if prim.kind == "object":
            out.add("There is " + with_article(prim.value)[: -len(prim.value)])
            out.add(prim.value, index)
            out.add(" in the image.")
        elif prim.kind == "attribute":
            out.add("There is " + with_article(prim.value)[: -len(prim.value)])
            out.add(prim.value, index)
            out.add(f" {spec.name_of(prim.object_id)}.")
        else:
            assert prim.target_id is not None
            out.add(f"The {spec.name_of(prim.object_id)} is ")
            out.add(prim.value, index)
            out.add(f" the {spec.name_of(prim.target_id)}.")
        return out.text, out.spans

    def decomposed(self, spec: CaptionSpec, index: int) -> str:
        return self.decomposed_with_spans(spec, index)[0]


def describe_spec(spec: CaptionSpec) -> str:
    """The primitives of ``spec`` as a plain list, for a language-model prompt."""
    lines = [f"- object: {name}" for _, name in spec.objects]
    lines += [f"- attribute: the {spec.name_of(oid)} is {a}" for oid, a in spec.attributes]
    lines += [f"- relation: the {spec.name_of(s)} is {p} the {spec.name_of(o)}"
              for s, p, o in spec.relations]
    return "\n".join(lines)


PROMPT = (
    "Write one fluent image caption that states exactly these facts and nothing else. "
    "Use every word as given.\n{facts}\nCaption:"
)


class PromptRealiser:
    """A language-model backend behind :class:`Realiser` (COMPASS rewrites with an LLM).

    ``generate(prompt) -> str`` is any deterministic text generator the user supplies (a local
    model at temperature 0); nothing here opens a network connection. The model words the
    positive only: negatives substitute into that wording
    (:mod:`foilbench.construct.compass.spans`), never a second model call. A wording in which
    some primitive cannot be placed (a primitive's words dropped, or two places it could be)
    falls back to the template so every primitive stays verifiable; ``fallbacks`` counts how
    often. Decomposed captions stay templated (they state one fact).
    """

    def __init__(self, generate, name: str = "llm", prompt: str = PROMPT) -> None:
        self.generate = generate
        self.name = name
        self.prompt = prompt
        self.fallbacks = 0
        self._template = TemplateRealiser()

    def composed_with_spans(self, spec: CaptionSpec) -> tuple[str, dict]:
        from foilbench.construct.compass.spans import locate_spans, map_spans

        text = " ".join(str(self.generate(self.prompt.format(facts=describe_spec(spec)))).split())
        known, known_spans = self._template.composed_with_spans(spec)
        spans = (map_spans(known, known_spans, text, spec) or locate_spans(spec, text)) if text \
            else None
        if spans is None:
            self.fallbacks += 1
            return self._template.composed_with_spans(spec)
        return text, spans

    def composed(self, spec: CaptionSpec) -> str:
        return self.composed_with_spans(spec)[0]

    def decomposed_with_spans(self, spec: CaptionSpec, index: int) -> tuple[str, dict]:
        return self._template.decomposed_with_spans(spec, index)

    def decomposed(self, spec: CaptionSpec, index: int) -> str:
        return self._template.decomposed(spec, index)


def positive_with_spans(realiser, spec: CaptionSpec) -> tuple[str, dict, bool]:
    """(text, spans, fell back) of the positive: the realiser's own spans when it has them,
    else its wording located by :func:`~foilbench.construct.compass.spans.locate_spans`, else
    the template wording (``fell back`` True)."""
    from foilbench.construct.compass.spans import locate_spans

    if hasattr(realiser, "composed_with_spans"):
        text, spans = realiser.composed_with_spans(spec)
        return text, spans, False
    text = realiser.composed(spec)
    spans = locate_spans(spec, text)
    if spans is None:
        text, spans = TemplateRealiser().composed_with_spans(spec)
        return text, spans, True
    return text, spans, False


def decomposed_with_spans(realiser, spec: CaptionSpec, index: int) -> tuple[str, dict]:
    if hasattr(realiser, "decomposed_with_spans"):
        return realiser.decomposed_with_spans(spec, index)
    return TemplateRealiser().decomposed_with_spans(spec, index)
