"""CompoSET's 16-type edit taxonomy and the foil tuple the ``composet`` pipeline passes along.

CompoSET §3, Table 2: "Foils are drawn from a taxonomy of 16 edit types grouped into four
semantic categories: Identity & Appearance, Quantity, Spatial Relations, and Activity & State
... A modify edit changes one property of one entity ... A swap edit exchanges a property or
role between two entities." App. B, step 4: "Each foil is a (edit_type, base_attribute,
foil_attribute, target_object, base_caption, foil_caption) tuple."

Category names follow the released taxonomy (``identity_appearance``, ``quantity``,
``spatial_relations``, ``activity_state``), as :mod:`foilbench.world.edits` does. The
procedural world realises 14 of the 16 types: it has no agents, so ``modify_action`` and
``swap_role`` always fail its self-check ("no agent in the scene").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from foilbench.construct.engine.replies import ReplyError, require

TAXONOMY: dict[str, tuple[str, str, str]] = {
    # edit type: (category, operation, what changes, for prompts)
    "modify_color": ("identity_appearance", "modify", "the colour of one object"),
    "modify_pattern": ("identity_appearance", "modify", "the surface pattern of one object"),
    "modify_material": ("identity_appearance", "modify", "the material of one object"),
    "modify_shape": ("identity_appearance", "modify",
                     "the shape of one object (same kind of object)"),
    "modify_transparency": ("identity_appearance", "modify", "how see-through one object is"),
    "modify_object": ("identity_appearance", "replace", "one object becomes another kind"),
    "swap_color": ("identity_appearance", "swap", "two objects exchange colours"),
    "swap_material": ("identity_appearance", "swap", "two objects exchange materials"),
    "modify_count": ("quantity", "modify", "how many instances of one object there are"),
    "modify_presence": ("quantity", "add", "one object is added or removed"),
    "modify_spatial": ("spatial_relations", "modify",
                       "one object moves relative to a fixed anchor"),
    "swap_spatial": ("spatial_relations", "swap", "two objects exchange places"),
    "modify_action": ("activity_state", "modify", "what an agent is doing"),
    "modify_pose": ("activity_state", "modify", "the pose or orientation of one object"),
    "modify_state": ("activity_state", "modify", "the state of one object (open, lit, ...)"),
    "swap_role": ("activity_state", "swap", "two agents exchange roles in an action"),
}
ALIASES = {"modify_cardinality": "modify_count"}
COUNT_EDITS = ("modify_count", "modify_presence")
IDENTITY_EDITS = ("modify_object", "modify_shape")


def canonical_edit_type(name: str) -> str:
    name = ALIASES.get(str(name).strip(), str(name).strip())
    if name not in TAXONOMY:
        raise ReplyError(f"unknown edit type {name!r}; the taxonomy has {', '.join(TAXONOMY)}")
    return name


def taxonomy_text() -> str:
    """The taxonomy as prompt lines: ``- modify_color (identity_appearance): ...``."""
    return "\n".join(f"- {name} ({cat}, {op}): {what}"
                     for name, (cat, op, what) in TAXONOMY.items())


@dataclass(frozen=True)
class Foil:
    """One proposed single edit (CompoSET App. B step 4), plus ``world``: the structured edit
    the procedural world can apply (``{"edit_type", "choice", "seed"}``), None otherwise."""

    edit_type: str
    target_object: str
    base_attribute: str
    foil_attribute: str
    base_caption: str
    foil_caption: str
    world: dict | None = None

    @property
    def category(self) -> str:
        return TAXONOMY[self.edit_type][0]

    @property
    def operation(self) -> str:
        return TAXONOMY[self.edit_type][1]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_reply(cls, entry: object, where: str) -> Foil:
        fields = {k: str for k in ("edit_type", "target_object", "base_attribute",
                                   "foil_attribute", "base_caption", "foil_caption")}
        data = require(entry, fields, where)
        base, foil = " ".join(data["base_caption"].split()), " ".join(data["foil_caption"].split())
        if not base or not foil or base.lower() == foil.lower():
            raise ReplyError(f"{where}: base and foil captions must be non-empty and differ")
        world = data.get("world")
        return cls(canonical_edit_type(data["edit_type"]), data["target_object"].strip(),
                   data["base_attribute"].strip(), data["foil_attribute"].strip(), base, foil,
                   world if isinstance(world, dict) else None)


def count_rule(foil: Foil) -> tuple[str, set[str]]:
    """How detector counts may differ between base and foil (CompoSET B.4 criteria (i)-(ii):
    "the count of the named object is preserved"; "no other object is added, removed ...").

    Returns ``(rule, exempt labels)``: ``"change"`` (count and presence edits: the target's
    count must differ), ``"identity"`` (object or shape replacement: the new kind must gain),
    ``"same"`` (every other edit: all counts equal). Exempt labels are not compared.
    """
    target = foil.target_object.lower()
    if foil.edit_type in COUNT_EDITS:
        return "change", {target}
    if foil.edit_type in IDENTITY_EDITS:
        return "identity", {foil.base_attribute.lower(), foil.foil_attribute.lower(), target}
    return "same", set()


def check_counts(foil: Foil, base_counts: dict[str, int],
                 foil_counts: dict[str, int]) -> str | None:
    """None when detector counts agree with the edit, else what disagrees."""
    rule, exempt = count_rule(foil)
    for label in sorted(set(base_counts) | set(foil_counts)):
        if label in exempt:
            continue
        if base_counts.get(label, 0) != foil_counts.get(label, 0):
            return (f"{label}: {base_counts.get(label, 0)} in base, "
                    f"{foil_counts.get(label, 0)} in foil")
    target = foil.target_object.lower()
    if rule == "change" and base_counts.get(target, 0) == foil_counts.get(target, 0):
        return f"{target}: count unchanged ({base_counts.get(target, 0)}) by a count edit"
    new = foil.foil_attribute.lower()
    if rule == "identity" and foil_counts.get(new, 0) <= base_counts.get(new, 0):
        return f"{new}: no new instance in the foil"
    return None


def edited_labels(foil: Foil, labels: Iterable[str]) -> set[str]:
    """Detector labels an edit touches: the target, the attributes that are object kinds
    (identity edits), and every label the short captions name (a swap names two objects)."""
    text = f"{foil.base_caption} {foil.foil_caption}".lower()
    named = {lab.lower() for lab in labels
             if re.search(rf"\b{re.escape(lab.lower())}(?:s|es)?\b", text)}
    return (named | {foil.target_object.lower(), foil.base_attribute.lower(),
                     foil.foil_attribute.lower()}) - {""}
