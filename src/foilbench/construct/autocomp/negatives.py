"""Auto-Comp concepts and their Swap and Confusion negative captions.

Auto-Comp (Sbrolli, Matteucci, Yamasaki, 2026) probes binding with concepts of N objects:
attribute tasks bind one attribute (a colour) to each object; relational tasks chain the N
objects with N-1 relations. For each concept it builds two negative sets:

* Swap: every permutation but the identity, so N! - 1 negatives. Attribute tasks permute the
  attributes over the fixed objects; relational tasks permute the objects and keep relations.
* Confusion: low-entropy distractors that may repeat an object or a value. Attribute tasks:
  every object arrangement (N^N, with repetition) times every attribute arrangement (N^N),
  minus the positive: N^(2N) - 1. Relational tasks: N^N object arrangements times
  (N-1)^(N-1) arrangements of the concept's own relations, minus the positive
  (with 0^0 = 1, so a one-object concept has none).

A negative is removed only when its text equals the positive's or an earlier negative's in
the same set (this happens when a concept repeats an object or a value); the number removed
is reported by :func:`negatives_with_report`. Orders are deterministic: itertools order over
the concept's own sequences.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from foilbench.construct.autocomp.vocab import accepted_relations
from foilbench.errors import FoilbenchError
from foilbench.world.vocab import RELATIONS, SIZE_RELATIONS

MIN_OBJECTS = 1
MAX_OBJECTS = 3


class ConceptError(FoilbenchError, ValueError):
    """A concept cannot be built as asked; the message says what is possible."""


@dataclass(frozen=True)
class TaskSpec:
    """What a task binds: ``attribute`` tasks take N values, ``relation`` tasks N-1."""

    name: str
    binds: str  # "attribute" or "relation"
    allowed_values: tuple[str, ...] | None = None  # None: any non-empty word
    description: str = ""


TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec("color", "attribute", None, "one colour per object"),
        TaskSpec("shape_color", "attribute", None, "one colour per geometric shape"),
        TaskSpec("position", "relation", accepted_relations(RELATIONS),
                 "spatial relations chaining the objects"),
        TaskSpec("relative_size", "relation", accepted_relations(SIZE_RELATIONS),
                 "size relations chaining objects"),
    )
}


@dataclass(frozen=True)
class Concept:
    """``task`` names a TASKS entry; ``objects`` the N objects; ``values`` the N attributes
    (attribute tasks) or the N-1 relations chaining the objects in order (relational tasks)."""

    task: str
    objects: tuple[str, ...]
    values: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "objects", _as_words("objects", self.objects))
        object.__setattr__(self, "values", _as_words("values", self.values))
        spec = task_spec(self.task)
        n = len(self.objects)
        if not MIN_OBJECTS <= n <= MAX_OBJECTS:
            raise ConceptError(
                f"a {self.task} concept holds {MIN_OBJECTS} to {MAX_OBJECTS} objects, "
                f"got {n}: {list(self.objects)}"
            )
        want = n if spec.binds == "attribute" else n - 1
        if len(self.values) != want:
            what = "attributes (one per object)" if spec.binds == "attribute" else (
                "relations (one between each consecutive pair of objects)")
            raise ConceptError(
                f"a {self.task} concept with {n} object(s) needs {want} {what}, "
                f"got {len(self.values)}: {list(self.values)}"
            )
        if spec.allowed_values is not None:
            for value in self.values:
                if " ".join(value.lower().split()) not in spec.allowed_values:
                    raise ConceptError(
                        f"unknown relation {value!r} for task {self.task!r}; "
                        f"possible: {', '.join(spec.allowed_values)}"
                    )

    @property
    def n(self) -> int:
        return len(self.objects)

    @property
    def spec(self) -> TaskSpec:
        return TASKS[self.task]


class NegativeReport(NamedTuple):
    """Both negative sets plus how many duplicates were removed from each."""

    swap: list[str]
    confusion: list[str]
    removed: dict[str, int]  # {"swap": k, "confusion": m}


def task_spec(task: str) -> TaskSpec:
    if task not in TASKS:
        raise ConceptError(f"unknown Auto-Comp task {task!r}; possible: {', '.join(TASKS)}")
    return TASKS[task]


def _as_words(field: str, seq: Iterable[str]) -> tuple[str, ...]:
    if isinstance(seq, str):
        raise ConceptError(f"{field} must be a list of words, got the single string {seq!r}")
    words = tuple(seq)
    for w in words:
        if not isinstance(w, str) or not w.strip():
            raise ConceptError(f"{field} must be non-empty strings, got {w!r} in {list(words)}")
    return words


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _noun_phrase(*words: str) -> str:
    text = " ".join(words)
    return f"{_article(text)} {text}"


def _join_list(phrases: Sequence[str]) -> str:
    if len(phrases) <= 2:
        return " and ".join(phrases)
    return ", ".join(phrases[:-1]) + " and " + phrases[-1]


def render_attribute(objects: Sequence[str], values: Sequence[str]) -> str:
    """"a red cube", "a red cube and a blue sphere", "a red cube, a blue sphere and a cone"."""
    return _join_list([_noun_phrase(v, o) for o, v in zip(objects, values, strict=True)])


def render_relation(objects: Sequence[str], relations: Sequence[str]) -> str:
    """"a cube", "a cube left of a sphere",
    "a cube left of a sphere, and the sphere above a cone"."""
    text = _noun_phrase(objects[0])
    for i, rel in enumerate(relations):
        subject = "" if i == 0 else f", and the {objects[i]}"
        text += f"{subject} {rel} {_noun_phrase(objects[i + 1])}"
    return text


def _render(concept: Concept, objects: Sequence[str], values: Sequence[str]) -> str:
    if concept.spec.binds == "attribute":
        return render_attribute(objects, values)
    return render_relation(objects, values)


def caption(concept: Concept) -> str:
    """The positive caption of ``concept`` (deterministic template)."""
    return _render(concept, concept.objects, concept.values)


Arrangement = tuple[tuple[str, ...], tuple[str, ...]]  # (objects, values) of one caption


def swap_arrangements(concept: Concept) -> list[Arrangement]:
    """N! - 1 arrangements: permutations of values (attribute) or objects (relation), identity
    out, in itertools order. A pipeline that words captions its own way (Auto-Comp's
    Contextual captions) substitutes these into its text; :func:`swap_negatives` renders them
    with the template."""
    if concept.spec.binds == "attribute":
        return [(concept.objects, tuple(p)) for p in
                list(itertools.permutations(concept.values))[1:]]
    return [(tuple(p), concept.values) for p in list(itertools.permutations(concept.objects))[1:]]


def confusion_arrangements(concept: Concept) -> list[Arrangement]:
    """All object x value arrangements with repetition, the positive arrangement out.

    Arrangements are drawn over positions (indices), so the count is exactly the closed form
    even when a concept repeats a word; equal texts are removed after wording."""
    n, k = concept.n, len(concept.values)
    identity = (tuple(range(n)), tuple(range(k)))
    out: list[Arrangement] = []
    for obj_idx in itertools.product(range(n), repeat=n):
        objs = tuple(concept.objects[i] for i in obj_idx)
        for val_idx in itertools.product(range(k), repeat=k):
            if (obj_idx, val_idx) == identity:
                continue
            out.append((objs, tuple(concept.values[j] for j in val_idx)))
    return out


def _swap_candidates(concept: Concept) -> list[str]:
    return [_render(concept, o, v) for o, v in swap_arrangements(concept)]


def _confusion_candidates(concept: Concept) -> list[str]:
    return [_render(concept, o, v) for o, v in confusion_arrangements(concept)]


def dedupe(texts: list[str], positive: str) -> tuple[list[str], int]:
    """Keep the first of each text and drop any equal to the positive; count removals."""
    seen = {positive}
    kept: list[str] = []
    for t in texts:
        if t not in seen:
            seen.add(t)
            kept.append(t)
    return kept, len(texts) - len(kept)


def expected_counts(task: str, n: int) -> dict[str, int]:
    """Auto-Comp's closed-form counts before duplicate removal."""
    swap = 1
    for k in range(2, n + 1):
        swap *= k
    if task_spec(task).binds == "attribute":
        confusion = n ** (2 * n) - 1
    else:
        confusion = n**n * (n - 1) ** (n - 1) - 1  # Python: 0 ** 0 == 1
    return {"swap": swap - 1, "confusion": confusion}


def negatives_with_report(concept: Concept) -> NegativeReport:
    """Swap and Confusion negatives, duplicates removed, with the removal counts."""
    positive = caption(concept)
    swap, removed_swap = dedupe(_swap_candidates(concept), positive)
    confusion, removed_confusion = dedupe(_confusion_candidates(concept), positive)
    return NegativeReport(swap, confusion, {"swap": removed_swap, "confusion": removed_confusion})


def swap_negatives(concept: Concept) -> list[str]:
    """N! - 1 Swap negatives (fewer only when texts coincide; see negatives_with_report)."""
    return negatives_with_report(concept).swap


def confusion_negatives(concept: Concept) -> list[str]:
    """Confusion negatives: N^(2N) - 1 (attributes) or N^N (N-1)^(N-1) - 1 (relations)."""
    return negatives_with_report(concept).confusion
