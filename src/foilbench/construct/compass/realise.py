"""Turning COMPASS caption structures into text.

COMPASS realises its captions with a language model; offline, foilbench uses deterministic
templates. Any backend implements :class:`Realiser`: it sees only a ``CaptionSpec``, so the
positive, each perturbed spec (c~_i) and each decomposed primitive (d_i, d~_i) go through the
same wording and differ only in the perturbed primitive. An LLM backend must be deterministic
for a given spec (temperature 0, a fixed prompt) for the benchmark to be reproducible.
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


class TemplateRealiser:
    """Deterministic templates, the offline default.

    composed, no relations:  "a red metal cube, a sphere and a blue mug"
    composed, relations:     "a red cube left of a sphere, and the sphere behind a blue mug"
    decomposed:              "There is a cube in the image." / "There is a red cube." /
                             "The cube is left of the sphere."
    """

    name = "template"

    def _noun_phrase(self, spec: CaptionSpec, object_id: int) -> str:
        return with_article(" ".join([*spec.attributes_of(object_id), spec.name_of(object_id)]))

    def composed(self, spec: CaptionSpec) -> str:
        if not spec.relations:
            phrases = [self._noun_phrase(spec, oid) for oid, _ in spec.objects]
            return phrases[0] if len(phrases) == 1 else (
                ", ".join(phrases[:-1]) + " and " + phrases[-1])
        mentioned: set[int] = set()

        def ref(oid: int) -> str:
            if oid in mentioned:
                return f"the {spec.name_of(oid)}"
            mentioned.add(oid)
            return self._noun_phrase(spec, oid)

        clauses = []
        for s, p, o in spec.relations:
            subject = ref(s)
            clauses.append(f"{subject} {p} {ref(o)}")
        loose = [self._noun_phrase(spec, oid) for oid, _ in spec.objects if oid not in mentioned]
        text = clauses[0]
        for clause in clauses[1:]:
            text += f", and {clause}"
        for phrase in loose:
            text += f", and {phrase}"
        return text

    def decomposed(self, spec: CaptionSpec, index: int) -> str:
        prim = spec.primitives[index]
        if prim.kind == "object":
            return f"There is {with_article(prim.value)} in the image."
        if prim.kind == "attribute":
            return f"There is {with_article(prim.value + ' ' + spec.name_of(prim.object_id))}."
        assert prim.target_id is not None
        subject, target = spec.name_of(prim.object_id), spec.name_of(prim.target_id)
        return f"The {subject} is {prim.value} the {target}."


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
    model at temperature 0); nothing here opens a network connection. A composed caption that
    drops a primitive's words falls back to the template so every primitive stays verifiable;
    ``fallbacks`` counts how often. Decomposed captions stay templated (they state one fact).
    """

    def __init__(self, generate, name: str = "llm", prompt: str = PROMPT) -> None:
        self.generate = generate
        self.name = name
        self.prompt = prompt
        self.fallbacks = 0
        self._template = TemplateRealiser()

    def composed(self, spec: CaptionSpec) -> str:
        text = " ".join(str(self.generate(self.prompt.format(facts=describe_spec(spec)))).split())
        low = text.lower()
        if not text or not all(p.value.lower() in low for p in spec.primitives):
            self.fallbacks += 1
            return self._template.composed(spec)
        return text

    def decomposed(self, spec: CaptionSpec, index: int) -> str:
        return self._template.decomposed(spec, index)
