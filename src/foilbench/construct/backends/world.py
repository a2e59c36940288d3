"""The ``world`` backends: the procedural renderer as image generator, editor and validators.

- :class:`WorldImages` renders ``ImageRequest.scene`` (a world ``Scene`` or its JSON dict)
  exactly; the prompt is not read.
- :class:`WorldEdits` applies ``EditRequest.edit`` (a world single ``Edit``) to the base image:
  it checks the input image *is* the render of the edit's base scene, renders the foil and
  returns the exact edit mask (union of the edited objects' footprints in base and foil).
- :class:`WorldDetector` and :class:`WorldVQA` are offline validators. They answer from the
  scene an image shows, which the world backends store in the image's PNG text chunk
  (``foilbench.world_scene``), so an image from any other generator is refused rather than
  judged. Boxes are the objects' footprint boxes (object and shadow) in pixels.

These make every pipeline run end to end with no model; the validators then pass by
construction unless a stage disagrees with the scene, which is the point of a check.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from functools import lru_cache
from importlib.resources import files
from typing import Any

import numpy as np
from PIL import Image

from foilbench.construct.backends.base import (
    Detection,
    DetectorBackend,
    EditBackend,
    EditRequest,
    EditResult,
    ImageBackend,
    ImageRequest,
    VQABackend,
)
from foilbench.construct.backends.world_questions import NONE_OF_THESE, parse_question
from foilbench.errors import FoilbenchError
from foilbench.world.scene import Obj, Scene

SCENE_KEY = "foilbench.world_scene"


class WorldBackendError(FoilbenchError, ValueError):
    """The world backend was given something it cannot render or read."""


def scene_to_dict(scene: Scene) -> dict:
    return {"objects": [asdict(o) for o in scene.objects], "condition": scene.condition,
            "background_seed": scene.background_seed, "scene_id": scene.scene_id}


def scene_from_dict(data: dict) -> Scene:
    try:
        objects = tuple(Obj(**o) for o in data["objects"])
        return Scene(objects, data.get("condition", "minimal"),
                     int(data.get("background_seed", 0)), data.get("scene_id", ""))
    except (KeyError, TypeError, ValueError) as e:
        raise WorldBackendError(f"not a world scene: {e}") from None


def as_scene(value: Any) -> Scene:
    if isinstance(value, Scene):
        return value
    if isinstance(value, dict):
        return scene_from_dict(value)
    raise WorldBackendError("the world backend renders structured scenes only; this request "
                            "carries none (use a generative backend for free-text prompts)")


def tag(image: Image.Image, scene: Scene) -> Image.Image:
    """Store ``scene`` in the image's metadata (kept through the stage cache)."""
    image.info[SCENE_KEY] = json.dumps(scene_to_dict(scene), sort_keys=True)
    return image


def scene_of_image(image: Image.Image) -> Scene:
    raw = image.info.get(SCENE_KEY)
    if not raw:
        raise WorldBackendError("this image was not rendered by the world backend, so the "
                                "world validators cannot read it (use hf-det: / hf-vlm:)")
    return scene_from_dict(json.loads(raw))


@lru_cache(maxsize=1)
def world_source_hash() -> str:
    """Hash of the world package's sources: a renderer change is a new fingerprint."""
    h = hashlib.sha256()
    root = files("foilbench.world")
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if entry.name.endswith((".py", ".json")):
            h.update(entry.name.encode())
            h.update(entry.read_bytes())
    return h.hexdigest()[:16]


def _square(size: Sequence[int]) -> int:
    w, h = int(size[0]), int(size[1])
    if w != h:
        raise WorldBackendError(f"the world renders square images; asked for {w}x{h}")
    return w


class _World:
    reads_structure = True  # pipelines pass structured scenes/edits to these backends

    def __init__(self, rest: str = "", **options: Any) -> None:
        if rest:
            raise WorldBackendError(f"the world backend takes no argument, got {rest!r}")
        self.options = options

    @property
    def fingerprint(self) -> str:
        return f"world-{self.role}:{world_source_hash()}"


class WorldImages(_World, ImageBackend):
    def generate(self, request: ImageRequest) -> Image.Image:
        from foilbench.world.render import render

        scene = as_scene(request.scene)
        return tag(render(scene, _square(request.size)), scene)


class WorldEdits(_World, EditBackend):
    def edit(self, request: EditRequest) -> EditResult:
        from foilbench.construct.composet.pairs import edit_mask
        from foilbench.world.edit_core import Edit
        from foilbench.world.render import render_layers

        edit = request.edit
        if not isinstance(edit, Edit):
            raise WorldBackendError("the world editor applies structured world edits only "
                                    "(EditRequest.edit is not a foilbench.world Edit)")
        size = _square(request.image.size)
        base = render_layers(edit.base, size)
        if not np.array_equal(np.asarray(base.image), np.asarray(request.image.convert("RGB"))):
            raise WorldBackendError("the input image is not the render of the edit's base scene")
        foil = render_layers(edit.foil, size)
        return EditResult(tag(foil.image, edit.foil), edit_mask(edit, base, foil))


def label_matches(label: str, category: str) -> bool:
    """A detector label names a world category by its last word, singular or plural."""
    from foilbench.world.phrases import plural

    words = label.lower().split()
    return bool(words) and words[-1] in (category, plural(category))


def object_boxes(scene: Scene, size: int) -> list[tuple[float, float, float, float] | None]:
    """Footprint box (x0, y0, x1, y1) of each object in a ``size`` render (None if unseen)."""
    return list(_boxes(json.dumps(scene_to_dict(scene), sort_keys=True), int(size)))


@lru_cache(maxsize=256)
def _boxes(scene_json: str, size: int) -> tuple:
    from foilbench.world.render import render_layers

    scene = scene_from_dict(json.loads(scene_json))
    boxes: list[tuple[float, float, float, float] | None] = []
    for mask in render_layers(scene, size).masks:
        ys, xs = np.nonzero(mask)
        boxes.append(None if not len(xs) else
                     (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)))
    return tuple(boxes)


class WorldDetector(_World, DetectorBackend):
    def detect(self, image: Image.Image, labels: Sequence[str],
               threshold: float = 0.1) -> list[Detection]:
        scene = scene_of_image(image)
        boxes = object_boxes(scene, image.size[0])
        out = []
        for label in labels:
            for obj, box in zip(scene.objects, boxes, strict=True):
                if box is not None and label_matches(label, obj.category):
                    out.append(Detection(label, 1.0, box))
        return out


class WorldVQA(_World, VQABackend):
    def answer(self, image: Image.Image, question: str, choices: Sequence[str]) -> str:
        from foilbench.world.autocomp import relation_holds

        scene = scene_of_image(image)
        q = parse_question(question)

        def find(name: str) -> list[Obj]:
            return [o for o in scene.objects if label_matches(name, o.category)]

        subject = find(q.subject)
        if q.kind == "presence":
            truth = "yes" if subject else "no"
        elif q.kind == "count":
            truth = str(len(subject))
        else:
            other = find(q.other) if q.kind == "relation" else []
            if len(subject) != 1 or (q.kind == "relation" and len(other) != 1):
                raise WorldBackendError(f"{question!r}: the scene does not hold exactly one of "
                                        "each object asked about")
            if q.kind == "color":
                truth = subject[0].color
            else:
                holding = [c for c in choices if c != NONE_OF_THESE
                           and _safe_holds(relation_holds, subject[0], other[0], c)]
                truth = holding[0] if len(holding) == 1 else NONE_OF_THESE
        if truth not in choices:
            raise WorldBackendError(f"{question!r}: the true answer {truth!r} is not among the "
                                    f"choices {list(choices)}")
        return truth


def _safe_holds(fn, a: Obj, b: Obj, relation: str) -> bool:
    try:
        return bool(fn(a, b, relation))
    except ValueError:  # a choice that is not a world relation word
        return False
