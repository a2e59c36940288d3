"""Template answers for the ``composet`` pipeline's text steps, from the procedural world.

Each function answers one step's task in the JSON the step's prompt asks for (see
``prompts/composet.*.txt``), so the pipeline reads template and model replies alike:

- ``base_spec`` (step 1): scene parameters -> a sampled world scene, its base caption, one
  detail sentence per object, and the scene itself (``world_scene``) for the world renderer;
  a draw repeating a recent scene's caption is redrawn.
- ``caption_qc`` (after step 2): the spec rewritten to the scene the world renderer drew.
- ``instance_captions`` (step 3): one caption per object, anchored on it (its full
  description and where it stands).
- ``foils`` (step 4): a careful proposer. It walks the 16 edit types in a seeded order and
  proposes a target and a new value, keeping only proposals the world can make and that are
  not already proposed (the self-check's own rules), as a model that reads the scene would;
  so the offline build reaches §3's "at least 15 foils" per scene. Its captions stay naive
  (the self-check corrects them to the world's phrases). A scene too small for ``n_foils``
  distinct edits gets fewer proposals, never a repeated one.
- ``self_check`` (step 5): the exact check. It applies each proposal with the world's edit
  functions and rejects what cannot be made (no agent for actions and roles, a value the
  object already has, a state the object cannot take, a target no caption can single out, a
  duplicate foil); kept proposals get the world's contrasting, disambiguated phrases.
- ``verbosity`` (step 7): the world's medium and long tiers around the unchanged edit phrase.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from foilbench.construct.backends.world import scene_from_dict, scene_to_dict
from foilbench.construct.composet.taxonomy import TAXONOMY
from foilbench.world import edit_attribute as attr
from foilbench.world.phrases import full_phrase, location_bin, plural
from foilbench.world.scene import Scene
from foilbench.world.vocab import COLORS, MATERIALS, PATTERNS, STATES, TRANSPARENCIES

SCENE_STREAM = 0xC0_5E7  # keeps composet scenes apart from other users of a seed
AGENT_TYPES = ("modify_action", "swap_role")
PAIR_TYPES = ("swap_color", "swap_material", "modify_spatial", "swap_spatial")
ALL_STATES = tuple(sorted({s for c, ss in STATES.items() if c != "bottle" for s in ss}))
VALUES = {
    "modify_color": ("color", tuple(COLORS)),
    "modify_pattern": ("pattern", PATTERNS),
    "modify_material": ("material", MATERIALS),
    "modify_transparency": ("transparency", TRANSPARENCIES),
    "modify_shape": ("category", attr.SHAPE_CATEGORIES),
    "modify_object": ("category", attr.OBJECT_CATEGORIES),
    "modify_state": ("state", ALL_STATES),
    "modify_pose": ("state", STATES["bottle"]),
}
# which objects each attribute edit can apply to (the world's own rules)
APPLIES = {
    "modify_shape": lambda o: o.category in attr.SHAPE_CATEGORIES,
    "modify_object": lambda o: o.category in attr.OBJECT_CATEGORIES,
    "modify_state": lambda o: o.category in attr.STATE_CATEGORIES,
    "modify_pose": lambda o: o.category in attr.POSE_CATEGORIES,
}


def _json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True)


def world_scene(spec: dict) -> Scene:
    return scene_from_dict(spec["world_scene"])


def _spec_of(scene: Scene) -> dict:
    """The spec fields a scene is described by (what the world renderer draws)."""
    from foilbench.world.captions import describe_scene

    objects = [{"id": f"o{i + 1}", "name": o.category, "description": full_phrase(o).text(),
                "location": location_bin(o.x)} for i, o in enumerate(scene.objects)]
    details = {f"o{i + 1}": f"There is {full_phrase(o).text()} {_where(o)}."
               for i, o in enumerate(scene.objects)}
    return {"base_caption": describe_scene(scene), "details": details, "objects": objects}


def base_spec(task: dict, request) -> str:
    """A sampled world scene; a draw whose caption repeats one of ``task["recent"]`` (the
    diversity block of step 1) is redrawn, up to 20 times, from the same seeded stream."""
    from foilbench.world.captions import describe_scene
    from foilbench.world.sample import sample_scene

    p = task["params"]
    rng = np.random.default_rng([SCENE_STREAM, int(p["seed"])])
    setting = str(p.get("setting", "")).lower()
    condition = "minimal" if ("studio" in setting or "white" in setting) else "contextual"
    recent = set(task.get("recent") or ())
    for _ in range(20):
        scene = sample_scene(rng, int(p["n_subjects"]), condition, scene_id_prefix="")
        if describe_scene(scene) not in recent:
            break
    scene = Scene(scene.objects, scene.condition, scene.background_seed, str(p["scene_id"]))
    return _json({**_spec_of(scene), "world_scene": scene_to_dict(scene)})


def caption_qc(task: dict, request) -> str:
    """The spec rewritten to the drawn world scene, with one edit per disagreement (an
    unchanged spec gives no edits and the same fields back)."""
    spec = task["spec"]
    truth = _spec_of(world_scene(spec))
    edits = []
    if spec.get("base_caption") != truth["base_caption"]:
        edits.append({"where": "base_caption", "field": "caption", "target": "scene",
                      "from": spec.get("base_caption"), "to": truth["base_caption"]})
    given = {str(o.get("id")): o for o in spec.get("objects") or []}
    shown = {o["id"] for o in truth["objects"]}
    for o in truth["objects"]:
        g = given.get(o["id"])
        if g is None:
            edits.append({"where": o["id"], "field": "presence", "target": o["name"],
                          "from": "absent", "to": "present"})
        elif g.get("description") != o["description"] or g.get("name") != o["name"]:
            edits.append({"where": o["id"], "field": "description", "target": o["name"],
                          "from": g.get("description"), "to": o["description"]})
    for oid, g in given.items():
        if oid not in shown:
            edits.append({"where": oid, "field": "presence", "target": g.get("name"),
                          "from": "present", "to": "absent"})
    return _json({"edits": edits, **truth})


def _where(obj) -> str:
    return {"left": "on the left", "middle": "in the middle", "right": "on the right"}[
        location_bin(obj.x)]


def instance_captions(task: dict, request) -> str:
    scene = world_scene(task["spec"])
    out = [{"object": f"o{i + 1}", "caption": f"{full_phrase(o).text()} {_where(o)}"}
           for i, o in enumerate(scene.objects)]
    return _json({"instances": out})


def _current(obj, attribute: str) -> str:
    from foilbench.world.phrases import effective_state

    return str(effective_state(obj) if attribute == "state" else getattr(obj, attribute))


def _propose(scene: Scene, edit_type: str, rng: np.random.Generator, seed: list[int]) -> dict:
    objs = scene.objects
    n = len(objs)
    if edit_type in AGENT_TYPES:
        return _propose_agent(scene, edit_type, rng, seed)
    i = int(rng.integers(n))
    base_np = full_phrase(objs[i]).text()
    world: dict = {"edit_type": edit_type, "seed": seed, "choice": {"target": i}}
    if edit_type in VALUES:
        attribute, pool = VALUES[edit_type]
        value = str(pool[int(rng.integers(len(pool)))])
        before = _current(objs[i], attribute)
        world["choice"]["value"] = value
        swapped = base_np.replace(before, value) if before in base_np else base_np
        return {"edit_type": edit_type, "target_object": objs[i].category,
                "base_attribute": before, "foil_attribute": value, "base_caption": base_np,
                "foil_caption": swapped if swapped != base_np else f"{base_np} ({value})",
                "world": world}
    if edit_type in PAIR_TYPES:
        j = int(rng.integers(n - 1)) if n > 1 else 0
        j = j + 1 if n > 1 and j >= i else j  # a different object when there is one
        world["choice"] = {"targets": [i, j]}
        other = full_phrase(objs[j]).text()
        return {"edit_type": edit_type, "target_object": objs[i].category,
                "base_attribute": objs[i].category, "foil_attribute": objs[j].category,
                "base_caption": f"{base_np} and {other}", "foil_caption": f"{other} and {base_np}",
                "world": world}
    direction = ("add", "remove")[int(rng.integers(2))]
    world["choice"]["direction"] = direction
    more = direction == "add"
    return {"edit_type": edit_type, "target_object": objs[i].category,
            "base_attribute": "present", "foil_attribute": "more" if more else "fewer",
            "base_caption": base_np,
            "foil_caption": f"two {plural(objs[i].category)}" if more else f"no {objs[i].category}",
            "world": world}


def _propose_agent(scene: Scene, edit_type: str, rng: np.random.Generator,
                   seed: list[int]) -> dict:
    """An action or role edit on an agent the scene has (``world`` None when it has none)."""
    from foilbench.world.edit_agent import role_pairs
    from foilbench.world.vocab import AGENTS

    agents = [i for i, o in enumerate(scene.objects) if o.category in AGENTS]
    pairs = role_pairs(scene)
    if edit_type == "modify_action" and agents:
        i = agents[int(rng.integers(len(agents)))]
        choice: dict = {"target": i}
    elif edit_type == "swap_role" and pairs:
        i, j = pairs[int(rng.integers(len(pairs)))]
        choice = {"targets": [i, j]}
    else:
        return {"edit_type": edit_type, "target_object": "person", "base_attribute": "reading",
                "foil_attribute": "waving", "base_caption": "a person reading",
                "foil_caption": "a person waving", "world": None}
    obj = scene.objects[i]
    phrase = full_phrase(obj).text()
    return {"edit_type": edit_type, "target_object": obj.category,
            "base_attribute": _current(obj, "state"), "foil_attribute": "another action",
            "base_caption": phrase, "foil_caption": f"{phrase} (another action)",
            "world": {"edit_type": edit_type, "seed": seed, "choice": choice}}


#: draws per requested foil before the proposer gives up on a scene that cannot take more
DRAWS_PER_FOIL = 12


def foils(task: dict, request) -> str:
    """Up to ``n_foils`` proposals the world can make, none repeating another (module doc)."""
    scene = world_scene(task["spec"])
    seed = int(task["seed"])
    wanted = int(task["n_foils"])
    rng = np.random.default_rng([SCENE_STREAM, seed, 1])
    types = list(TAXONOMY)
    order = [types[int(k)] for k in rng.permutation(len(types))]
    out: list[dict] = []
    seen: dict = {}
    for k in range(wanted * DRAWS_PER_FOIL):
        if len(out) == wanted:
            break
        proposal = _propose(scene, order[k % len(order)], rng, [seed, k])
        if _verdict(scene, len(out), proposal, seen)["keep"]:
            out.append(proposal)
    return _json({"foils": out})


def realise_world_edit(scene: Scene, world: dict):
    """The world ``Edit`` a proposal names (raises EditImpossible when it cannot be made)."""
    from foilbench.world.edits import apply_edit

    choice = dict(world.get("choice") or {})
    if "targets" in choice:
        choice["targets"] = tuple(int(t) for t in choice["targets"])
    if "target" in choice:
        choice["target"] = int(choice["target"])
    rng = np.random.default_rng([SCENE_STREAM, *[int(s) for s in world["seed"]], 2])
    return apply_edit(scene, world["edit_type"], rng, **choice)


def _precheck(scene: Scene, world: dict) -> tuple[str, str] | None:
    """(issue, why) for what the world rejects before trying the edit, else None."""
    edit_type, choice = world["edit_type"], world.get("choice") or {}
    if "targets" in choice:
        i, j = choice["targets"]
        return ("not_applicable", "the edit needs two different objects") if i == j else None
    obj = scene.objects[int(choice["target"])]
    if edit_type in APPLIES and not APPLIES[edit_type](obj):
        return "not_applicable", f"a {obj.category} cannot take a {edit_type[7:]} edit"
    if edit_type in VALUES:
        attribute = VALUES[edit_type][0]
        if _current(obj, attribute) == choice["value"]:
            return "implausible", f"the {obj.category} is already {choice['value']}"
        if attribute == "state" and choice["value"] not in STATES.get(obj.category, ()):
            return "not_applicable", f"a {obj.category} cannot be {choice['value']}"
    return None


def _verdict(scene: Scene, index: int, foil: dict, seen: dict) -> dict:
    from foilbench.world.edit_core import EditImpossible
    from foilbench.world.sample import scene_signature

    world = foil.get("world")
    if not world:
        return {"index": index, "keep": False, "issue": "not_applicable",
                "reason": "no agent in the scene to carry an action or a role"}
    pre = _precheck(scene, world)
    if pre is not None:
        return {"index": index, "keep": False, "issue": pre[0], "reason": pre[1]}
    try:
        edit = realise_world_edit(scene, world)
    except EditImpossible as e:
        issue = "ambiguous" if "tells base from foil" in str(e) else "not_applicable"
        return {"index": index, "keep": False, "issue": issue, "reason": str(e)}
    sig = scene_signature(edit.foil)
    if sig in seen:
        return {"index": index, "keep": False, "issue": "duplicate",
                "reason": f"same foil as proposal {seen[sig]}"}
    seen[sig] = index
    return {"index": index, "keep": True, "issue": "", "reason": "",
            **edit_fields(edit)}


def edit_fields(edit) -> dict:
    """The foil tuple's fields from an exact world edit (what the self-check corrects to)."""
    objs = [edit.base.objects[i] for i in edit.base_indices] or \
        [edit.foil.objects[i] for i in edit.foil_indices]
    params = edit.params or {}
    base_attr, foil_attr = str(params.get("from", "")), str(params.get("to", ""))
    if edit.edit_type in ("modify_count", "modify_presence"):
        cat = (edit.foil.objects[edit.foil_indices[0]] if edit.foil_indices else objs[0]).category
        before = sum(o.category == cat for o in edit.base.objects)
        after = sum(o.category == cat for o in edit.foil.objects)
        target, base_attr, foil_attr = cat, str(before), str(after)
    else:
        target = objs[0].category
        if "values" in params:
            base_attr, foil_attr = (str(v) for v in params["values"])
    return {"target_object": target, "base_attribute": base_attr, "foil_attribute": foil_attr,
            "base_caption": edit.base_phrase.text(), "foil_caption": edit.foil_phrase.text(),
            "operation": edit.operation}


def self_check(task: dict, request) -> str:
    scene = world_scene(task["spec"])
    seen: dict = {}
    return _json({"verdicts": [_verdict(scene, k, f, seen)
                               for k, f in enumerate(task["foils"])]})


def verbosity(task: dict, request) -> str:
    from foilbench.world.captions import edit_captions

    edit = realise_world_edit(world_scene(task["spec"]), task["foil"]["world"])
    tiers = edit_captions(edit)
    return _json({"medium": {"base": tiers["medium"][0], "foil": tiers["medium"][1]},
                  "long": {"base": tiers["long"][0], "foil": tiers["long"][1]}})
