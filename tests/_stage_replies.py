"""What a correct model replies to each stage of SugarCrepe and COMPASS, in the stage's
documented JSON shape and at a real reply's length, for the money tests' e2e builds on the
strict provider fake (issue 40: a bill measured from wrong replies is not the bill).

The older scripts in ``_strict_scripts`` answer every COMPASS stage with one fixed caption
(so no proposal is made) and SugarCrepe's attribute and relation steps with an object word;
other tests that only need a reply of the right shape keep them. Nothing here pads a reply:
each holds what its prompt asks for and no more.
"""

from __future__ import annotations

import hashlib
import json
import re

# -- SugarCrepe -------------------------------------------------------------------------
# tests/_construct_helpers.CAPTIONS (a caption not listed is a KeyError: add it), read as a correct model reads them: the concepts of
# each kind in caption order (the locate step), or none ("Two" is a number, not a property)
LOCATED = {
    "A man riding a brown horse next to a red barn.": {
        "object": ["man", "horse", "barn"], "attribute": ["brown", "red"],
        "relation": ["riding", "next to"]},
    "Two dogs playing with a ball on the grass.": {
        "object": ["dogs", "ball", "grass"], "attribute": [],
        "relation": ["playing with", "on"]},
    "A white plate with a sandwich on a wooden table.": {
        "object": ["plate", "sandwich", "table"], "attribute": ["white", "wooden"],
        "relation": ["with", "on"]},
    "A woman holding an umbrella near a bus.": {
        "object": ["woman", "umbrella", "bus"], "attribute": [],
        "relation": ["holding", "near"]},
    "A cat sleeping on a black couch.": {
        "object": ["cat", "couch"], "attribute": ["black"], "relation": ["sleeping on"]},
    "A small boy eating a banana in the kitchen.": {
        "object": ["boy", "banana", "kitchen"], "attribute": ["small"],
        "relation": ["eating", "in"]},
    "A red car parked in front of a tall building.": {
        "object": ["car", "building"], "attribute": ["red", "tall"],
        "relation": ["parked in front of"]},
    "A green bench under a large tree.": {
        "object": ["bench", "tree"], "attribute": ["green", "large"], "relation": ["under"]},
    "A giraffe standing behind a wooden fence.": {
        "object": ["giraffe", "fence"], "attribute": ["wooden"],
        "relation": ["standing behind"]},
    "A laptop and a cup on a desk.": {
        "object": ["laptop", "cup", "desk"], "attribute": [], "relation": ["on"]},
}
# step 2, per type: the new concept for the located (or given) one
REPLACE = {
    "object": {"man": "woman", "horse": "camel", "barn": "house", "dogs": "cats",
               "ball": "frisbee", "grass": "sand", "plate": "bowl", "sandwich": "salad",
               "table": "counter", "woman": "girl", "umbrella": "handbag", "bus": "taxi",
               "cat": "puppy", "couch": "bed", "boy": "girl", "banana": "apple",
               "kitchen": "garden", "car": "truck", "building": "church", "bench": "chair",
               "tree": "lamp post", "giraffe": "zebra", "fence": "wall", "laptop": "book",
               "cup": "phone", "desk": "shelf"},
    "attribute": {"brown": "white", "red": "blue", "white": "blue", "wooden": "glass",
                  "black": "white", "small": "tall", "tall": "short", "green": "red",
                  "large": "small"},
    "relation": {"riding": "leading", "next to": "inside", "playing with": "chasing",
                 "on": "under", "with": "without", "holding": "carrying", "near": "inside",
                 "sleeping on": "sitting on", "eating": "holding", "in": "outside",
                 "parked in front of": "parked behind", "under": "beside",
                 "standing behind": "leaning over"},
}
ADD = {
    "object": {"man": "dog", "horse": "dog", "barn": "tractor", "dogs": "boy",
               "ball": "frisbee", "grass": "frisbee", "plate": "fork", "sandwich": "pickle",
               "table": "glass of water", "woman": "child", "umbrella": "handbag",
               "bus": "bicycle", "cat": "pillow", "couch": "pillow", "boy": "dog",
               "banana": "apple", "kitchen": "dog", "car": "bicycle", "building": "tree",
               "bench": "dog", "tree": "bicycle", "giraffe": "zebra", "fence": "tree",
               "laptop": "mouse", "cup": "saucer", "desk": "lamp"},
    "attribute": {"man": "young", "horse": "tall", "barn": "wooden", "dogs": "black",
                  "ball": "red", "grass": "wet", "plate": "round", "sandwich": "toasted",
                  "table": "round", "woman": "young", "umbrella": "red", "bus": "yellow",
                  "cat": "grey", "couch": "leather", "boy": "happy", "banana": "yellow",
                  "kitchen": "bright", "car": "old", "building": "brick", "bench": "wooden",
                  "tree": "leafy", "giraffe": "tall", "fence": "broken", "laptop": "open",
                  "cup": "white", "desk": "wooden"},
}
# the swap steps: the pairs a correct model finds exchangeable (a sensible other scene)
SWAPS = {
    "attribute": {"A man riding a brown horse next to a red barn.": ("brown", "red"),
                  "A white plate with a sandwich on a wooden table.": ("white", "wooden"),
                  "A red car parked in front of a tall building.": ("red", "tall"),
                  "A green bench under a large tree.": ("green", "large")},
    "object": {"A white plate with a sandwich on a wooden table.": ("plate", "table")},
}
NEW_CONCEPT = {"Give a new object that could take the place": (REPLACE, "object"),
               "Give a new attribute that could take the place": (REPLACE, "attribute"),
               "Give a new relation": (REPLACE, "relation"),
               "Give a new object to add": (ADD, "object"),
               "Give a new attribute to add": (ADD, "attribute")}


def _articles(text: str) -> str:
    """``a``/``an`` agreeing with the next word (what grammar requires after an edit)."""
    def fix(m: re.Match) -> str:
        art = "an" if m.group(2)[0].lower() in "aeiou" else "a"
        return (art.capitalize() if m.group(1)[0].isupper() else art) + " " + m.group(2)
    return re.sub(r"\b([Aa]n?) (\w+)", fix, text)


def _sub(caption: str, old: str, new: str) -> str:
    return _articles(re.sub(rf"\b{re.escape(old)}\b", new, caption, count=1))


def _swap(caption: str, a: str, b: str) -> str:
    marked = re.sub(rf"\b{re.escape(a)}\b", "\0", caption, count=1)
    marked = re.sub(rf"\b{re.escape(b)}\b", a, marked, count=1)
    return _articles(marked.replace("\0", b))


def sugarcrepe_reply(provider, model, system, prompt, images) -> str:
    """SugarCrepe's steps as a correct model answers them (the step told apart by the
    prompt's last lines, the type of step 2 by its instruction)."""
    caption = re.findall(r"^Caption: (.*)$", prompt, re.M)[-1].strip()
    tail = prompt[prompt.rfind("Caption:"):]
    if "Old:" in tail:  # compose, replace
        old, new = re.search(r"Old: (.*), new: (.*)$", tail, re.M).groups()
        return json.dumps({"caption": _sub(caption, old.strip(), new.strip())})
    add = re.search(r"^Add (object|attribute): (.*), at: (.*)$", tail, re.M)
    if add:  # compose, add: an object beside its anchor, an attribute before it
        kind, new, at = (x.strip() for x in add.groups())
        said = f"{at} and a {new}" if kind == "object" else f"{new} {at}"
        return json.dumps({"caption": _sub(caption, at, said)})
    if "Given:" in tail:
        given = re.search(r"^Given: (.*)$", tail, re.M).group(1).strip()
        table, kind = next(v for k, v in NEW_CONCEPT.items() if k in prompt)
        return json.dumps({"new": table[kind][given]})
    concept = re.search(r"^Concept: (\w+)$", tail, re.M)
    if concept:  # locate
        return json.dumps({"concepts": LOCATED[caption][concept.group(1)]})
    kind = "attribute" if "two attributes" in prompt else "object"
    pair = SWAPS[kind].get(caption)
    if pair is None:
        return json.dumps({"possible": False})
    return json.dumps({"possible": True, "concepts": list(pair),
                       "caption": _swap(caption, *pair)})


# -- COMPASS ----------------------------------------------------------------------------
# what a model lists for a word of each category (compass.propose: "up to 12 other words of
# the same kind and the same semantic category"); its examples list 7 or 8
CATEGORIES = [
    ["red", "blue", "green", "yellow", "white", "black", "purple", "orange", "pink", "brown",
     "gray", "teal", "navy", "gold", "crimson"],
    ["metal", "wooden", "glass", "plastic", "stone", "ceramic", "rubber", "leather", "paper",
     "concrete", "steel", "matte", "cloth"],
    ["small", "large", "tiny", "huge", "big", "little", "giant", "medium", "massive",
     "miniature", "enormous", "compact", "oversized"],
    ["transparent", "translucent", "opaque", "clear", "frosted", "tinted", "cloudy", "shiny",
     "glossy", "reflective", "milky", "smoky", "iridescent"],
    ["striped", "checkered", "dotted", "plaid", "spotted", "floral", "plain", "zigzag",
     "paisley", "polka-dot", "herringbone", "tartan", "camouflage"],
    ["open", "closed", "locked", "sealed", "folded", "broken", "empty", "full", "lit", "unlit",
     "tipped over", "upright", "wrapped"],
    ["cube", "sphere", "cylinder", "cone", "pyramid", "prism", "torus", "disc", "ring",
     "cuboid", "hemisphere", "octahedron", "tetrahedron"],
    ["mug", "bottle", "box", "jar", "vase", "basket", "can", "bucket", "jug", "pitcher", "cup",
     "bowl", "tin"],
    ["ball", "racket", "bat", "frisbee", "kite", "glove", "helmet", "skateboard", "puck",
     "surfboard", "skis", "snowboard", "hockey stick"],
    ["chair", "sofa", "couch", "bench", "stool", "armchair", "table", "bed", "desk", "ottoman",
     "recliner", "loveseat", "rocking chair"],
    ["lamp", "candle", "lantern", "chandelier", "flashlight", "torch", "bulb", "nightlight",
     "sconce", "spotlight", "desk lamp", "floor lamp", "fairy lights"],
    ["left of", "right of", "in front of", "behind", "next to", "far from", "on top of",
     "under", "above", "below", "beside", "inside", "around"],
    ["bigger than", "smaller than", "taller than", "shorter than", "wider than",
     "narrower than", "heavier than", "lighter than", "longer than", "thicker than",
     "thinner than", "older than", "newer than"],
]


def _proposals(word: str) -> list[str]:
    """8 to 12 category-mates of ``word`` (every category above has 13 words), how many
    fixed by the word so that replies vary as a model's do."""
    group = next((g for g in CATEGORIES if word in g), None)
    if group is None:
        raise AssertionError(f"the COMPASS reply table does not know {word!r}: add it")
    n = 8 + int(hashlib.sha256(word.encode()).hexdigest(), 16) % 5
    return [w for w in group if w != word][:n]


def _caption(facts: list[str]) -> str:
    """One caption stating the listed facts, worded as the prompt's examples word them: each
    attribute before its object, each relation between its two objects, the others listed
    in one "There is a ..., a ... and a ..."."""
    objects = [f[len("object: "):] for f in facts if f.startswith("object: ")]
    attrs: dict[str, list[str]] = {}
    rels = []
    for f in facts:
        m = re.match(r"attribute: the (.+?) is (.+)$", f)
        if m:
            attrs.setdefault(m.group(1), []).append(m.group(2))
        m = re.match(r"relation: the (.+?) is (.+) the (.+)$", f)
        if m:
            rels.append(m.groups())

    def phrase(name: str) -> str:  # English adjective order: size, state, ..., material
        order = [2, 5, 4, 3, 0, 1]
        rank = {w: order.index(k) for k in order for w in CATEGORIES[k]}
        return " ".join([*sorted(attrs.pop(name, []), key=lambda a: rank.get(a, 0)), name])

    said: set[str] = set()
    sentences = []
    for s, p, o in rels:
        first = f"the {s}" if s in said else f"a {phrase(s)}"
        second = f"the {o}" if o in said else f"a {phrase(o)}"
        said |= {s, o}
        sentences.append(f"{first} is {p} {second}")
    rest = [f"a {phrase(n)}" for n in objects if n not in said]
    if rest:
        listed = ", ".join(rest[:-1]) + " and " + rest[-1] if len(rest) > 1 else rest[0]
        sentences.append(f"there is {listed}")
    text = ". ".join(x[0].upper() + x[1:] for x in sentences) + "."
    return _articles(text)


def compass_reply(provider, model, system, prompt, images) -> str:
    """compass.propose: ``{"candidates": [...]}`` of the asked word's category;
    compass.realise: ``{"caption": ...}`` stating the listed facts."""
    if "Word:" in prompt[prompt.rfind("Kind:"):] and "candidates" in system:
        word = re.findall(r"^Word: (.*)$", prompt, re.M)[-1].strip()
        return json.dumps({"candidates": _proposals(word)})
    block = prompt[prompt.rfind("Facts:"):]
    facts = re.findall(r"^- (.+)$", block, re.M)
    return json.dumps({"caption": _caption(facts)})
