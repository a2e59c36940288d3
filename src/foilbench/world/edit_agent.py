"""Edits of what agents do: CompoSET's ``modify_action`` and ``swap_role``.

CompoSET Table 2 lists both under "Activity & State (how)"; §3 defines the operations: "A modify
edit changes one property of one entity ... A swap edit exchanges a property or role between two
entities, so the same ingredients appear in both base and foil but their assignment changes",
and notes that "swap_role requires at least two distinct agents in a scene". The paper's agents
are people and animals in photographs; ours are robots (:mod:`foilbench.world.shapes_agents`),
whose actions are their states. Roles are directed actions: a robot pointing at the nearest
object on one side (:class:`foilbench.world.phrases.Action`). The role swap exchanges the two
agents' actions, so the former target now points back at the former actor, who takes the
target's old action: the same two actions appear in base and foil, assigned the other way.
"""

from __future__ import annotations

import numpy as np

from foilbench.world.edit_attribute import modify_with
from foilbench.world.edit_core import Edit, disambiguate_two, impossible, shuffled
from foilbench.world.phrases import Action, acted_on, describe, effective_state
from foilbench.world.sample import edit_fits
from foilbench.world.scene import Scene
from foilbench.world.vocab import ACTIONS, AGENTS, check_choice


def _own_actions(obj) -> tuple[str, ...]:
    """An agent doing one of its own (undirected) actions can change to another of them."""
    return ACTIONS if obj.category in AGENTS and effective_state(obj) in ACTIONS else ()


def modify_action(scene: Scene, rng: np.random.Generator, target: int | None = None,
                  value: str | None = None) -> Edit:
    """One agent changes its action ("a red robot sitting" / "a red robot waving")."""
    if value is not None:
        check_choice("action", value, ACTIONS)
    return modify_with("modify_action", "activity_state", "modify", "state", _own_actions,
                       f"an agent ({', '.join(AGENTS)}) doing one of {', '.join(ACTIONS)}",
                       scene, rng, target, value, ("state", "color"))


def role_pairs(scene: Scene) -> list[tuple[int, int]]:
    """(actor, target) index pairs where both are agents and the target acts undirected."""
    objs = scene.objects
    out = []
    for i in range(len(objs)):
        j = acted_on(scene, i)
        if j is not None and objs[j].category in AGENTS and effective_state(objs[j]) in ACTIONS:
            out.append((i, j))
    return out


def swap_role(scene: Scene, rng: np.random.Generator,
              targets: tuple[int, int] | None = None) -> Edit:
    """Who does what to whom: "a red robot pointing at a blue robot" becomes "a blue robot
    pointing at a red robot" (``targets`` = (actor, target) pins the pair)."""
    objs = scene.objects
    pairs = role_pairs(scene)
    if targets is not None:
        pairs = [p for p in pairs if p == tuple(targets)]
    for i, j in shuffled(rng, pairs):
        a, b = objs[i], objs[j]
        new_a = a.with_(state=effective_state(b))
        new_b = b.with_(state="pointing left" if a.x < b.x else "pointing right")
        swapped = list(objs)
        swapped[i], swapped[j] = new_a, new_b
        foil = scene.with_objects(swapped)
        if not edit_fits(foil.objects, (i, j)):  # both agents take new outlines
            continue

        def make(names_a, names_b, a=a, b=b):
            da, db = describe(a, names_a), describe(b, names_b)
            return Action(da, db), Action(db, da)

        # the action is the role itself, so it is never a descriptor of who is who
        found = disambiguate_two(scene, foil, make, ("color",), exclude=("state",))
        if found is not None:
            return Edit("swap_role", "activity_state", "swap", scene, foil, (i, j), (i, j),
                        *found, params={"actor": i, "target": j,
                                        "actions": [effective_state(a), effective_state(b)]})
    asked = "" if targets is None else f" for (actor, target) = {tuple(targets)}"
    raise impossible("swap_role", f"no agent points at another agent whose roles a caption can "
                     f"tell apart{asked} ({len(role_pairs(scene))} acting pair(s))",
                     "needs an agent pointing at a second, distinguishable agent "
                     "(see foilbench.world.cast)")
