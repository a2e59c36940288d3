"""The closed question forms construction validators ask, and how to read them back.

Auto-Comp §3 (Semantic Correctness Check): "We programmatically generate direct questions
based on the source concept C (e.g., 'What color is the monitor?') ... To prevent ambiguity, we
constrain the VLM's response to our predefined attribute vocabularies." Pipelines build their
questions here; any VQA backend answers them as free text constrained to ``choices``, and the
offline ``world`` VQA parses them back (:func:`parse_question`) to answer from the scene an
image shows. The paper gives one example form; the relation and size forms are ours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NONE_OF_THESE = "none of these"


@dataclass(frozen=True)
class Question:
    kind: str  # "color" | "count" | "relation" | "presence"
    subject: str
    other: str = ""


def color_question(obj: str) -> str:
    return f"What color is the {obj}?"


def count_question(obj: str) -> str:
    return f"How many {obj} objects are there?"


def relation_question(a: str, b: str) -> str:
    """Spatial and size relations alike: the answer is one relation word of the vocabulary."""
    return f"How is the {a} related to the {b}?"


def presence_question(obj: str) -> str:
    return f"Is there a {obj} in the image?"


_FORMS = (
    ("color", re.compile(r"^what colou?r is the (?P<a>.+?)\?$")),
    ("count", re.compile(r"^how many (?P<a>.+?) objects are there\?$")),
    ("relation", re.compile(r"^how is the (?P<a>.+?) related to the (?P<b>.+?)\?$")),
    ("presence", re.compile(r"^is there an? (?P<a>.+?) in the image\?$")),
)


def parse_question(question: str) -> Question:
    """The structured form of a question built here; ValueError for any other text."""
    text = " ".join(question.lower().split())
    for kind, pattern in _FORMS:
        m = pattern.match(text)
        if m:
            return Question(kind, m.group("a"), m.groupdict().get("b") or "")
    raise ValueError(f"not a question form the world VQA reads: {question!r} (see "
                     "foilbench.construct.backends.world_questions)")
