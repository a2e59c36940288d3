"""Template answers for the ``autocomp`` pipeline: Contextual captions without a model.

Auto-Comp writes its Contextual captions with an LLM from a few-shot prompt (App. A.2). The
template words the concept into one of a few everyday settings chosen by the request's seed
(the paper samples at temperature 0.7), keeping each object next to its attribute, or each
relation between its two objects, so the semantic-preservation check reads it back.
"""

from __future__ import annotations

import json

import numpy as np

from foilbench.construct.autocomp.negatives import Concept, render_attribute

SETTINGS = ("On a sunlit kitchen counter", "In a cozy living room", "On a cluttered wooden desk",
            "In a quiet workshop", "On a shelf in a bright hallway", "On a picnic blanket")
ATTRIBUTE_FRAMES = ("{setting}, there is {things}.", "{setting}, {things} sit side by side.",
                    "{setting}, someone has left {things}.")
RELATION_VERBS = ("sits", "stands", "rests", "is placed")


def _concept(task: dict) -> Concept:
    c = task["concept"]
    return Concept(c["task"], c["objects"], c["values"])


def contextual(task: dict, request) -> str:
    concept = _concept(task)
    rng = np.random.default_rng([int(request.seed), 0xC7])
    setting = SETTINGS[int(rng.integers(len(SETTINGS)))]
    if concept.spec.binds == "attribute":
        frame = ATTRIBUTE_FRAMES[int(rng.integers(len(ATTRIBUTE_FRAMES)))]
        things = render_attribute(concept.objects, concept.values)
        text = frame.format(setting=setting, things=things)
    else:
        verb = RELATION_VERBS[int(rng.integers(len(RELATION_VERBS)))]
        obj = concept.objects
        art = "an" if obj[0][:1] in "aeiou" else "a"
        text = f"{setting}, {art} {obj[0]} {verb} {concept.values[0]} " + \
            f"{'an' if obj[1][:1] in 'aeiou' else 'a'} {obj[1]}"
        for i in range(1, len(concept.values)):
            nxt = obj[i + 1]
            text += (f", and the {obj[i]} is {concept.values[i]} "
                     f"{'an' if nxt[:1] in 'aeiou' else 'a'} {nxt}")
        text += "."
    text = text[0].upper() + text[1:]
    if task.get("reply") == "text":  # App. A.2: "Generate ONLY the caption text"
        return text
    return json.dumps({"caption": text})
