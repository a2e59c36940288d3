"""Scenes cast with particular objects: a bottle (for poses), an object with states (box, lamp,
book), a geometric solid (for shapes), an agent (for actions) or two agents, one acting on the other (for role swaps).

CompoSET notes that "swap_role requires at least two distinct agents in a scene" and that
"forcing more swap_role cases would require biasing scene generation toward multi-agent
interactions" (§6); it keeps 45 per tier. foilbench's suite needs at least 60 items per edit
type and tier for usable intervals, so the pair plan (:mod:`foilbench.construct.composet.pair_plan`) casts
scenes with what the rare edit types need until each has its quota, and draws the rest of each
scene as usual. The bias is stated here and in the benchmark's manifest, not hidden.

A cast scene draws, from one generator: the backdrop seed, the cast objects, the other objects
(default categories), then places the cast first (an acting pair side by side, the actor
pointing at its partner) and the others after, shrinking an object that does not fit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from foilbench.world.phrases import acted_on
from foilbench.world.sample import (
    N_BACKDROPS,
    SIZE_ORDER,
    edit_fits,
    place_object,
    random_object,
    scene_with_id,
)
from foilbench.world.scene import Obj, Scene
from foilbench.world.vocab import ACTIONS, AGENTS, COLORS, CONDITIONS, STATES, check_choice

# cast name -> the categories its one object is drawn from ("acting pair" is two agents)
CAST_CATEGORIES: dict[str, tuple[str, ...]] = {
    "bottle": ("bottle",), "agent": AGENTS, "stateful": ("box", "lamp", "book"),
    "solid": ("cube", "sphere", "cylinder", "cone", "pyramid"),
}
CASTS: tuple[str, ...] = (*CAST_CATEGORIES, "acting pair")
PAIR_DX = (0.3, 0.65)  # partner's distance in x from the actor (stage fractions)
PAIR_DY = 0.12  # partner's depth stays this close to the actor's


def _place_shrinking(rng: np.random.Generator, obj: Obj, placed: Sequence[Obj],
                     within=None, accept=None) -> Obj | None:
    """``obj`` at a free spot, at its size or smaller; ``None`` when even small fails."""
    for size in SIZE_ORDER[: SIZE_ORDER.index(obj.size) + 1][::-1]:
        spot = place_object(rng, obj.with_(size=size), placed, within=within, accept=accept)
        if spot is not None:
            return spot
    return None


def _outlines(obj: Obj) -> list[Obj]:
    """The other outlines the cast object's edit may give it (shapes, states, actions)."""
    if obj.category in AGENTS:
        return [obj.with_(state=a) for a in (*ACTIONS, "pointing left", "pointing right")
                if a != obj.state]
    if obj.category in CAST_CATEGORIES["solid"]:
        return [obj.with_(category=c) for c in CAST_CATEGORIES["solid"] if c != obj.category]
    return [obj.with_(state=st) for st in STATES.get(obj.category, ()) if st != obj.state]


def _keeps_cast_editable(placed: Sequence[Obj], n_cast: int, pairs: Sequence[int],
                         own: bool = False):
    """A placement test for the objects drawn after the cast: the candidate must leave every
    cast object room for each outline its edit may give it (:func:`edit_fits`), so that the
    edit the scene was cast for stays possible with objects that overlap, and must not step
    between an actor (index in ``pairs``) and the partner it points at. With ``own`` the
    candidate is itself a cast object whose outlines must fit too."""
    def accept(cand: Obj) -> bool:
        objects = [*placed, cand]
        scene = Scene(tuple(objects))
        if any(acted_on(scene, a) != a + 1 for a in pairs):
            return False
        for k in [*range(n_cast), *([len(placed)] if own else [])]:
            for alt in _outlines(objects[k]):
                trial = objects[:k] + [alt] + objects[k + 1:]
                if not edit_fits(trial, (k,)):
                    return False
        for a in pairs:
            trial = list(objects)
            trial[a], trial[a + 1] = _role_swapped(objects[a], objects[a + 1])
            if not edit_fits(trial, (a, a + 1)):
                return False
        return True
    return accept


def _role_swapped(actor: Obj, partner: Obj) -> tuple[Obj, Obj]:
    """The two agents' outlines after swap_role: the partner points back at the actor."""
    back = "pointing left" if actor.x < partner.x else "pointing right"
    return actor.with_(state=partner.state), partner.with_(state=back)


def _acting_pair(rng: np.random.Generator, placed: list[Obj]) -> list[Obj] | None:
    """Two agents of different colours, side by side; the first points at the second."""
    actor = random_object(rng, AGENTS)
    others = tuple(c for c in COLORS if c != actor.color)
    partner = random_object(rng, AGENTS, others)
    actor = _place_shrinking(rng, actor, placed)
    if actor is None:
        return None
    side = 1.0 if actor.x < 0.5 else -1.0
    lo, hi = sorted((actor.x + side * PAIR_DX[0], actor.x + side * PAIR_DX[1]))
    window = ((max(lo, 0.0), min(hi, 1.0)),
              (max(actor.y - PAIR_DY, 0.0), min(actor.y + PAIR_DY, 1.0)))
    actor = actor.with_(state="pointing right" if side > 0 else "pointing left")

    def swappable(cand: Obj) -> bool:  # the role swap's outlines fit too (swap_role)
        swapped = [*placed, *_role_swapped(actor, cand)]
        return edit_fits(swapped, (len(placed), len(placed) + 1))

    partner = _place_shrinking(rng, partner, [*placed, actor], within=window, accept=swappable)
    if partner is None:
        return None
    return [actor, partner]


def sample_cast_scene(rng: np.random.Generator, n_objects: int, condition: str,
                      cast: Sequence[str], scene_id_prefix: str = "sc-") -> Scene | None:
    """A scene of ``n_objects`` (at least the cast's size) holding the ``cast`` (names from
    :data:`CASTS`), or ``None`` when the cast or the other objects cannot be placed (the caller
    draws again)."""
    check_choice("condition", condition, CONDITIONS)
    for kind in cast:
        check_choice("cast", kind, CASTS)
    n_cast = sum(2 if kind == "acting pair" else 1 for kind in cast)
    if n_cast > 8:
        raise ValueError(f"a cast of {n_cast} objects ({', '.join(cast)}) is more than a scene "
                         "holds (8)")
    background_seed = int(rng.integers(N_BACKDROPS))
    placed: list[Obj] = []
    actors: list[int] = []  # index of each acting pair's actor; its partner follows it
    for kind in cast:
        if kind == "acting pair":
            pair = _acting_pair(rng, placed)
            if pair is None:
                return None
            actors.append(len(placed))
            placed.extend(pair)
            continue
        obj = random_object(rng, CAST_CATEGORIES[kind])
        spot = _place_shrinking(rng, obj, placed,
                                accept=_keeps_cast_editable(placed, len(placed), actors, own=True))
        if spot is None:
            return None
        placed.append(spot)
    accept = _keeps_cast_editable(placed, len(placed), actors)
    for _ in range(n_objects - n_cast):
        spot = _place_shrinking(rng, random_object(rng), placed, accept=accept)
        if spot is None:
            return None
        placed.append(spot)
    return scene_with_id(Scene(tuple(placed), condition, background_seed), scene_id_prefix)


TRAINING_CAST_P = {"acting pair": 0.2, "agent": 0.1}  # the rest: sample_scene as usual


def sample_training_scene(rng: np.random.Generator, n_objects: int | None = None,
                          condition: str = "minimal") -> Scene:
    """A training scene: with probability 0.2 cast with an acting pair, 0.1 with an agent,
    otherwise :func:`foilbench.world.sample.sample_scene`; so models meet agents, their
    actions and who points at whom (default categories hold no agents)."""
    from foilbench.world.sample import sample_scene

    u = float(rng.random())
    n = int(rng.integers(1, 7)) if n_objects is None else n_objects
    cast: tuple[str, ...] = ()
    if u < TRAINING_CAST_P["acting pair"]:
        cast, n = ("acting pair",), max(n, 2)
    elif u < TRAINING_CAST_P["acting pair"] + TRAINING_CAST_P["agent"]:
        cast = ("agent",)
    if cast:
        scene = sample_cast_scene(rng, n, condition, cast)
        if scene is not None:
            return scene
    return sample_scene(rng, n, condition)
