"""Captions at CompoSET's three verbosity tiers, and whole-scene captions.

- short:  the edit phrase ("a red cube" / "a blue cube").
- medium: the edit phrase plus one local anchor, the nearest object the edit does not touch
  ("a red cube next to a green cone").
- long:   the medium clause plus every other object and the backdrop, within the 77-token CLIP
  context (CLIP BPE, start and end tokens included; see :mod:`token_budget`); the farthest objects are dropped
  first when the budget is exceeded.

The edit phrase is the only part that differs between a pair's base and foil captions, at every
tier: anchors and other objects are unedited, so they are described identically.
"""

from __future__ import annotations

from foilbench.world.edit_core import Edit
from foilbench.world.phrases import (
    NounPhrase,
    full_phrase,
    phrase_nouns,
    with_determiner,
)
from foilbench.world.scene import Obj, Scene
from foilbench.world.token_budget import token_count

TIERS: tuple[str, ...] = ("short", "medium", "long")
MAX_TOKENS = 77  # CLIP's text context, start and end tokens included
BACKGROUND_WORDS = {"minimal": "on a white background", "contextual": "in a cluttered room"}


def join_list(texts: list[str]) -> str:
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


def _grouped(objs: list[Obj]) -> list[tuple[NounPhrase, list[Obj]]]:
    """Identical-looking objects merged into one counted phrase ("two red cubes"), in order."""
    groups: dict[str, list[Obj]] = {}
    for o in objs:
        groups.setdefault(full_phrase(o).text(), []).append(o)
    out = []
    for members in groups.values():
        n = len(members)
        out.append((full_phrase(members[0], "a" if n == 1 else n), members))
    return out


def describe_scene(scene: Scene, max_tokens: int = MAX_TOKENS) -> str:
    """A whole-scene caption, objects left to right, within ``max_tokens`` (rightmost dropped).

    >>> from foilbench.world.scene import Obj, Scene
    >>> describe_scene(Scene((Obj("cube", "red", x=0.2), Obj("cube", "red", x=0.5),
    ...                       Obj("box", "blue", material="wood", x=0.8))))
    'two red cubes and a blue wooden box on a white background'
    """
    groups = _grouped(sorted(scene.objects, key=lambda o: o.x))
    background = BACKGROUND_WORDS[scene.condition]
    while groups:
        text = f"{join_list([np.text() for np, _ in groups])} {background}"
        if token_count(text) <= max_tokens:
            return text
        groups = groups[:-1]
    return background


def _centre(edit: Edit) -> tuple[float, float]:
    objs = ([edit.base.objects[i] for i in edit.base_indices]
            + [edit.foil.objects[i] for i in edit.foil_indices])
    return (sum(o.x for o in objs) / len(objs), sum(o.y for o in objs) / len(objs))


def context_objects(edit: Edit) -> list[Obj]:
    """Unedited objects no edit noun phrase could refer to, nearest to the edit first."""
    nouns = [*phrase_nouns(edit.base_phrase), *phrase_nouns(edit.foil_phrase)]
    nouns = [with_determiner(n, "a") for n in nouns]
    edited = set(edit.base_indices)
    cx, cy = _centre(edit)
    objs = [o for i, o in enumerate(edit.base.objects)
            if i not in edited and not any(n.matches(o) for n in nouns)]
    return sorted(objs, key=lambda o: ((o.x - cx) ** 2 + (o.y - cy) ** 2, o.x, o.y))


def _anchor_form(edit: Edit) -> str:
    """How the anchor attaches: after counts and absences ("a cone and no red cube"), after a
    comma for two-object phrases ("a red cube left of a ball, next to a cone"), else plainly."""
    phrases = (edit.base_phrase, edit.foil_phrase)
    if any(isinstance(p, NounPhrase) and p.determiner != "a" for p in phrases):
        return "and"
    return "plain" if isinstance(edit.base_phrase, NounPhrase) else "comma"


def _clause(edit_text: str, anchor: str | None, background: str, form: str) -> str:
    if anchor is None:
        return f"{edit_text} {background}"
    if form == "and":
        return f"{anchor} and {edit_text}"
    return f"{edit_text}{', ' if form == 'comma' else ' '}next to {anchor}"


def edit_captions(edit: Edit, max_tokens: int = MAX_TOKENS) -> dict[str, tuple[str, str]]:
    """``{tier: (base caption, foil caption)}`` for one edit (see the module docstring)."""
    texts = (edit.base_phrase.text(), edit.foil_phrase.text())
    background = BACKGROUND_WORDS[edit.base.condition]
    form = _anchor_form(edit)
    context = _grouped(context_objects(edit))
    anchor = context[0][0].text() if context else None
    medium = tuple(_clause(t, anchor, background, form) for t in texts)
    others = [np.text() for np, _ in context[1:]]
    long = medium
    if anchor is not None:
        while True:
            tail = f", with {join_list(others)}, {background}" if others else f", {background}"
            long = tuple(m + tail for m in medium)
            if max(token_count(t) for t in long) <= max_tokens or not others:
                break
            others = others[:-1]  # drop the farthest object first
        if max(token_count(t) for t in long) > max_tokens:
            long = medium
    return {"short": texts, "medium": medium, "long": long}
