"""Template answers for the ``sugarcrepe`` pipeline: deterministic rule-based hard negatives.

SugarCrepe generates its negatives with ChatGPT (App. D.2); offline, these rules answer the
same prompts in the same JSON: they find concepts by word lists (COCO-style nouns,
attribute adjectives, relation phrases), draw a new concept with the request's seed from the
same list (the paper samples at temperature 1.5 to diversify; a seed does that here), and
compose by word substitution or insertion with the article fixed. Rule-based negatives are
exactly what SugarCrepe shows to be hackable (ARO/CREPE-style artifacts), so the blind audit
and Algorithm 1 refinement that follow matter even more for them.
"""

from __future__ import annotations

import json
import re

import numpy as np

OBJECTS = (
    "person", "man", "woman", "boy", "girl", "child", "people", "bicycle", "car", "motorcycle",
    "airplane", "bus", "train", "truck", "boat", "traffic light", "fire hydrant", "stop sign",
    "bench", "bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra",
    "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee", "skis",
    "snowboard", "kite", "skateboard", "surfboard", "bottle", "cup", "fork", "knife", "spoon",
    "bowl", "banana", "apple", "sandwich", "orange", "broccoli", "carrot", "pizza", "donut",
    "cake", "chair", "couch", "bed", "table", "toilet", "laptop", "mouse", "keyboard", "phone",
    "microwave", "oven", "sink", "refrigerator", "book", "clock", "vase", "scissors",
    "teddy bear", "plate", "street", "field", "beach", "building", "tree", "window", "wall",
    "road", "hat", "shirt", "ball", "box", "mug", "lamp", "cube", "sphere", "cylinder", "cone",
)
ATTRIBUTE_GROUPS = {
    "color": ("red", "blue", "green", "yellow", "white", "black", "brown", "orange", "pink",
              "purple", "gray", "silver", "gold", "teal", "navy", "crimson"),
    "size": ("large", "small", "big", "little", "tall", "short", "long"),
    "material": ("wooden", "metal", "plastic", "glass", "stone", "leather"),
    "state": ("old", "young", "empty", "open", "closed", "wet", "dry", "striped", "dirty",
              "clean", "broken"),
}
ATTRIBUTES = tuple(w for group in ATTRIBUTE_GROUPS.values() for w in group)
RELATIONS = ("on top of", "next to", "in front of", "sitting on", "standing on", "walking on",
             "playing with", "looking at", "left of", "right of", "on", "in", "under",
             "behind", "near", "beside", "above", "below", "holding", "riding", "eating",
             "carrying", "wearing")
VOCAB = {"object": OBJECTS, "attribute": ATTRIBUTES, "relation": RELATIONS}


def _json(obj) -> str:
    return json.dumps(obj, sort_keys=True)


def find(caption: str, kind: str) -> list[tuple[int, int, str]]:
    """(start, end, word) of each vocabulary item in ``caption``, longest match first, in
    caption order, non-overlapping; plurals ("dogs") match their noun for objects."""
    low = caption.lower()
    spans: list[tuple[int, int, str]] = []
    for word in sorted(VOCAB[kind], key=len, reverse=True):
        tail = "(?:s|es)?" if kind == "object" else ""
        for m in re.finditer(rf"\b{re.escape(word)}{tail}\b", low):
            if all(m.end() <= s or m.start() >= e for s, e, _ in spans):
                spans.append((m.start(), m.start() + len(word), word))
    return sorted(spans)


def locate(task: dict, request) -> str:
    return _json({"concepts": [w for _, _, w in find(task["caption"], task["concept"])]})


def _group_of(word: str) -> tuple[str, ...]:
    for group in ATTRIBUTE_GROUPS.values():
        if word in group:
            return group
    return ATTRIBUTES


def new_concept(task: dict, request) -> str:
    kind, old, caption = task["concept"], task["old"], task["caption"].lower()
    pool = _group_of(old) if kind == "attribute" and task.get("mode") == "replace" else VOCAB[kind]
    options = [w for w in pool if w != old and not re.search(rf"\b{re.escape(w)}\b", caption)]
    if not options:
        return _json({"new": ""})
    rng = np.random.default_rng([int(request.seed), len(options)])
    return _json({"new": options[int(rng.integers(len(options)))]})


def article_fix(text: str) -> str:
    """"a apple" -> "an apple", "an red" -> "a red" (by first letter, a rule of thumb)."""
    def fix(m: re.Match) -> str:
        art, word = m.group(1), m.group(2)
        want = "an" if word[0].lower() in "aeiou" else "a"
        if art[0].isupper():
            want = want.capitalize()
        return f"{want} {word}"

    return re.sub(r"\b([Aa]n?) ([A-Za-z]+)", fix, text)


def _first_span(caption: str, word: str, kind: str) -> tuple[int, int] | None:
    for s, e, w in find(caption, kind):
        if w == word:
            return s, e
    return None


def compose_replace(task: dict, request) -> str:
    caption, old, new = task["caption"], task["old"], task["new"]
    span = _first_span(caption, old, task["concept"])
    if span is None:
        return _json({"caption": caption})
    s, e = span
    return _json({"caption": article_fix(caption[:s] + new + caption[e:])})


def compose_add(task: dict, request) -> str:
    """Add-Obj: " and a NEW" after the anchor object; Add-Att: "NEW " before it."""
    caption, anchor, new = task["caption"], task["old"], task["new"]
    span = _first_span(caption, anchor, "object")
    if span is None:
        return _json({"caption": caption})
    s, e = span
    while e < len(caption) and caption[e].isalpha():  # keep a plural ending with its noun
        e += 1
    if task["concept"] == "attribute":
        text = caption[:s] + new + " " + caption[s:]
    else:
        text = caption[:e] + f" and a {new}" + caption[e:]
    return _json({"caption": article_fix(text)})


def _swap_spans(caption: str, a: tuple[int, int], b: tuple[int, int]) -> str:
    (s1, e1), (s2, e2) = sorted([a, b])
    return caption[:s1] + caption[s2:e2] + caption[e1:s2] + caption[s1:e1] + caption[e2:]


def swap(task: dict, request) -> str:
    """Swap-Obj: the first two different objects; Swap-Att: the adjectives of the first two
    (adjective, object) pairs with different adjectives. Else not possible."""
    caption, kind = task["caption"], task["concept"]
    objects = find(caption, "object")
    if kind == "object":
        pairs = [(x, y) for i, x in enumerate(objects) for y in objects[i + 1:] if x[2] != y[2]]
        if not pairs:
            return _json({"possible": False, "concepts": [], "caption": ""})
        x, y = pairs[0]
        return _json({"possible": True, "concepts": [x[2], y[2]],
                      "caption": article_fix(_swap_spans(caption, x[:2], y[:2]))})
    bound = []
    for s, e, word in find(caption, "attribute"):
        rest = caption[e:].lstrip()
        if any(o[0] == e + (len(caption[e:]) - len(rest)) for o in objects):
            bound.append((s, e, word))
    pairs = [(x, y) for i, x in enumerate(bound) for y in bound[i + 1:] if x[2] != y[2]]
    if not pairs:
        return _json({"possible": False, "concepts": [], "caption": ""})
    x, y = pairs[0]
    return _json({"possible": True, "concepts": [x[2], y[2]],
                  "caption": article_fix(_swap_spans(caption, x[:2], y[:2]))})
