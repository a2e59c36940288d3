"""Caption phrases as small structures that can be both *spoken* and *checked* against a scene.

A foil is valid only if each caption is true of its own image and false of the other one. Rather
than trusting templates, every edit builds its base and foil phrases from these structures and
checks that four-way condition with :func:`holds` (see ``edits._check_contrast``). The same check
drives disambiguation: when two objects could match, extra descriptors (appearance, then location)
are added until the phrase picks out the edited object only.

Semantics (``x`` is left to right, in [0, 1]):
- ``NounPhrase`` with determiner "a": some object matches; "no": no object matches; an int n:
  exactly n objects match.
- ``Conjunction(a, b)``: two *distinct* objects match ``a`` and ``b``.
- ``Relation(a, rel, b)``: distinct objects p ~ a, q ~ b with p.x < q.x ("to the left of") or
  p.x > q.x ("to the right of").
- ``Action(a, b)``: an agent p ~ a points towards q ~ b: p's action is "pointing left" or
  "pointing right" and q is, on that side and in line (depth ``y`` within ``ACTION_DY`` of
  p's), the object whose centre is nearest to p's in ``x`` (the first thing along the arm). An agent's action is said after its noun ("a red robot
  sitting"), as a person would.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from itertools import permutations

from foilbench.world.scene import Obj, Scene
from foilbench.world.vocab import AGENTS, DIRECTED_ACTIONS, STATES

# Word order of descriptors inside a noun phrase ("a small open translucent red striped metal box").
DESCRIPTOR_ORDER: tuple[str, ...] = (
    "size", "state", "transparency", "color", "pattern", "material",
)
MATERIAL_WORDS = {"matte": "matte", "metal": "metal", "glass": "glass", "wood": "wooden"}
LOCATION_WORDS = {"left": "on the left", "middle": "in the middle", "right": "on the right"}
RELATION_WORDS = {"left": "to the left of", "right": "to the right of"}
# How an agent's action reads after its noun ("a red robot pointing to the right").
ACTION_WORDS = {"pointing left": "pointing to the left", "pointing right": "pointing to the right"}
ACTION_VERB = "pointing at"
ACTION_DY = 0.2  # depth band (stage fraction) of what an agent's level arm can point at
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight")


def effective_state(obj: Obj) -> str | None:
    """The state an object shows: its own, or its category's default (the first listed)."""
    if obj.state is not None:
        return obj.state
    states = STATES.get(obj.category)
    return states[0] if states else None


def location_bin(x: float) -> str:
    """Thirds of the frame: left (< 1/3), middle, right (> 2/3)."""
    return "left" if x < 1 / 3 else ("right" if x > 2 / 3 else "middle")


def plural(category: str) -> str:
    return category + ("es" if category.endswith(("x", "s", "ch", "sh")) else "s")


def with_article(words: str) -> str:
    return ("an " if words[:1] in "aeiou" else "a ") + words


@dataclass(frozen=True)
class NounPhrase:
    """An object description; ``None`` fields are not mentioned (and not constrained)."""

    category: str
    determiner: str | int = "a"  # "a", "no", or an exact count
    size: str | None = None
    state: str | None = None
    transparency: str | None = None
    color: str | None = None
    pattern: str | None = None
    material: str | None = None
    location: str | None = None  # a location_bin value

    def matches(self, obj: Obj) -> bool:
        if obj.category != self.category:
            return False
        for name in DESCRIPTOR_ORDER:
            want = getattr(self, name)
            have = effective_state(obj) if name == "state" else getattr(obj, name)
            if want is not None and want != have:
                return False
        return self.location is None or location_bin(obj.x) == self.location

    def text(self) -> str:
        words = []
        agent = self.category in AGENTS
        for name in DESCRIPTOR_ORDER:
            value = getattr(self, name)
            if value is not None and not (agent and name == "state"):
                words.append(MATERIAL_WORDS[value] if name == "material" else value)
        det = self.determiner
        noun = self.category if det in ("a", "no", 1) else plural(self.category)
        body = " ".join([*words, noun])
        if agent and self.state is not None:
            body += " " + ACTION_WORDS.get(self.state, self.state)
        if self.location is not None:
            body += " " + LOCATION_WORDS[self.location]
        if det == "a":
            return with_article(body)
        if det == "no":
            return "no " + body
        return f"{NUMBER_WORDS[det]} {body}"


@dataclass(frozen=True)
class Conjunction:
    parts: tuple[NounPhrase, ...]

    def text(self) -> str:
        texts = [p.text() for p in self.parts]
        return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


@dataclass(frozen=True)
class Relation:
    subject: NounPhrase
    relation: str  # key of RELATION_WORDS
    anchor: NounPhrase

    def text(self) -> str:
        return f"{self.subject.text()} {RELATION_WORDS[self.relation]} {self.anchor.text()}"


@dataclass(frozen=True)
class Action:
    """An agent acting on another object: "a red robot pointing at a blue robot"."""

    subject: NounPhrase
    anchor: NounPhrase
    verb: str = ACTION_VERB

    def text(self) -> str:
        return f"{self.subject.text()} {self.verb} {self.anchor.text()}"


Phrase = NounPhrase | Conjunction | Relation | Action


def acted_on(scene: Scene, i: int) -> int | None:
    """Index of the object agent ``i`` points at (see :class:`Action`), or ``None`` when it
    does not point or nothing lies in line on that side (ties in ``x`` count as no target)."""
    objs = scene.objects
    side = DIRECTED_ACTIONS.get(effective_state(objs[i]) or "")
    if side is None or objs[i].category not in AGENTS:
        return None
    sign = 1.0 if side == "right" else -1.0
    me = objs[i]
    ahead = [(sign * (o.x - me.x), j) for j, o in enumerate(objs)
             if j != i and sign * (o.x - me.x) > 0 and abs(o.y - me.y) <= ACTION_DY]
    if not ahead:
        return None
    ahead.sort()
    if len(ahead) > 1 and ahead[0][0] == ahead[1][0]:
        return None
    return ahead[0][1]


def _count(np: NounPhrase, scene: Scene) -> int:
    return sum(np.matches(o) for o in scene.objects)


def holds(phrase: Phrase, scene: Scene) -> bool:
    """Whether ``phrase`` is true of ``scene`` (semantics in the module docstring)."""
    objs = scene.objects
    if isinstance(phrase, NounPhrase):
        n = _count(phrase, scene)
        if phrase.determiner == "a":
            return n >= 1
        if phrase.determiner == "no":
            return n == 0
        return n == phrase.determiner
    if isinstance(phrase, Conjunction):
        k = len(phrase.parts)
        return any(all(p.matches(objs[i]) for p, i in zip(phrase.parts, idx, strict=True))
                   for idx in permutations(range(len(objs)), k))
    if isinstance(phrase, Action):
        for i, o in enumerate(objs):
            j = acted_on(scene, i) if phrase.subject.matches(o) else None
            if j is not None and phrase.anchor.matches(objs[j]):
                return True
        return False
    if isinstance(phrase, Relation):
        for i, j in permutations(range(len(objs)), 2):
            a, b = objs[i], objs[j]
            if phrase.subject.matches(a) and phrase.anchor.matches(b):
                if (a.x < b.x) if phrase.relation == "left" else (a.x > b.x):
                    return True
        return False
    raise TypeError(f"not a phrase: {phrase!r}")


def describe(obj: Obj, names, determiner: str | int = "a", location: bool = False) -> NounPhrase:
    """A noun phrase for ``obj`` mentioning the descriptors in ``names`` (plus category)."""
    values = {}
    for name in names:
        if name == "location":
            continue
        values[name] = effective_state(obj) if name == "state" else getattr(obj, name)
    loc = location_bin(obj.x) if (location or "location" in names) else None
    return NounPhrase(category=obj.category, determiner=determiner, location=loc, **values)


def full_descriptors(obj: Obj) -> tuple[str, ...]:
    """Descriptors worth saying in a whole-scene caption: colour always, others when not default."""
    names = ["color"]
    if obj.size != "medium":
        names.append("size")
    if obj.state is not None and obj.state != STATES[obj.category][0]:
        names.append("state")
    if obj.transparency != "opaque":
        names.append("transparency")
    if obj.pattern != "plain":
        names.append("pattern")
    if obj.material != "matte":
        names.append("material")
    return tuple(names)


def full_phrase(obj: Obj, determiner: str | int = "a") -> NounPhrase:
    return describe(obj, full_descriptors(obj), determiner=determiner)


def with_determiner(np: NounPhrase, determiner: str | int) -> NounPhrase:
    return replace(np, determiner=determiner)


def phrase_nouns(phrase: Phrase) -> tuple[NounPhrase, ...]:
    """The noun phrases a phrase mentions (for choosing anchors that cannot be confused)."""
    if isinstance(phrase, NounPhrase):
        return (phrase,)
    if isinstance(phrase, Conjunction):
        return phrase.parts
    return (phrase.subject, phrase.anchor)


NOUN_FIELDS = tuple(f.name for f in fields(NounPhrase))
