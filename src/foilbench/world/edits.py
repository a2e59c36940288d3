"""Single edits from the CompoSET taxonomy, by name: the registry and :func:`apply_edit`.

Categories and operations follow the CompoSET taxonomy file: ``identity_appearance`` (what),
``quantity`` (how many), ``spatial_relations`` (where), ``activity_state`` (how); operations
modify / swap / replace, plus add / remove for presence. ``modify_cardinality`` (the name in the
released taxonomy file) is an alias of ``modify_count`` (the paper's name).

Example::

    >>> import numpy as np
    >>> from foilbench.world.scene import Obj, Scene
    >>> scene = Scene((Obj("cube", "red", x=0.3), Obj("sphere", "blue", x=0.7)))
    >>> e = apply_edit(scene, "swap_color", np.random.default_rng(0))
    >>> e.base_phrase.text(), e.foil_phrase.text()
    ('a red cube and a blue sphere', 'a blue cube and a red sphere')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from foilbench.errors import UnknownNameError
from foilbench.registry import unknown_message
from foilbench.world import edit_agent as agent
from foilbench.world import edit_attribute as attr
from foilbench.world import edit_layout as layout
from foilbench.world.edit_core import Edit, EditImpossible
from foilbench.world.scene import Scene

__all__ = ["EDIT_TYPES", "ALIASES", "Edit", "EditImpossible", "EditSpec", "apply_edit",
           "edit_spec", "resolve_edit_name"]


@dataclass(frozen=True)
class EditSpec:
    name: str
    category: str
    operation: str  # the usual operation; presence edits report add or remove per edit
    function: Callable[..., Edit]


EDIT_TYPES: dict[str, EditSpec] = {
    spec.name: spec for spec in (
        EditSpec("modify_color", "identity_appearance", "modify", attr.modify_color),
        EditSpec("modify_pattern", "identity_appearance", "modify", attr.modify_pattern),
        EditSpec("modify_material", "identity_appearance", "modify", attr.modify_material),
        EditSpec("modify_shape", "identity_appearance", "modify", attr.modify_shape),
        EditSpec("modify_transparency", "identity_appearance", "modify",
                 attr.modify_transparency),
        EditSpec("modify_object", "identity_appearance", "replace", attr.modify_object),
        EditSpec("swap_color", "identity_appearance", "swap", attr.swap_color),
        EditSpec("swap_material", "identity_appearance", "swap", attr.swap_material),
        EditSpec("modify_count", "quantity", "modify", layout.modify_count),
        EditSpec("modify_presence", "quantity", "add", layout.modify_presence),
        EditSpec("modify_spatial", "spatial_relations", "modify", layout.modify_spatial),
        EditSpec("swap_spatial", "spatial_relations", "swap", layout.swap_spatial),
        EditSpec("modify_state", "activity_state", "modify", attr.modify_state),
        EditSpec("modify_pose", "activity_state", "modify", attr.modify_pose),
        EditSpec("modify_action", "activity_state", "modify", agent.modify_action),
        EditSpec("swap_role", "activity_state", "swap", agent.swap_role),
    )
}
ALIASES: dict[str, str] = {"modify_cardinality": "modify_count"}


def resolve_edit_name(name: str) -> str:
    """The canonical edit name; unknown names raise with the list of possible ones."""
    name = ALIASES.get(name, name)
    if name not in EDIT_TYPES:
        raise UnknownNameError(unknown_message("edit", name, [*EDIT_TYPES, *ALIASES]))
    return name


def edit_spec(name: str) -> EditSpec:
    return EDIT_TYPES[resolve_edit_name(name)]


def apply_edit(scene: Scene, edit_type: str, rng: np.random.Generator | int, **choice) -> Edit:
    """Apply one edit to ``scene``; ``choice`` may pin ``target``/``targets``, ``value`` or
    ``direction`` (see each edit function). Raises :class:`EditImpossible` with the reason."""
    spec = edit_spec(edit_type)
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    return spec.function(scene, rng, **choice)
