"""A deliberately crude stand-in world (flat coloured shapes) for developing the trainer.

Used only when asked for by name (``world="standin"``) - in unit tests of the training
machinery and while the real renderer is unavailable. It shares the real ``Scene``/``Obj``
contract, so everything downstream is exercised; the shipped weights never use it.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from foilbench.hashing import sha256_text
from foilbench.world.scene import Obj, Scene
from foilbench.world.vocab import COLORS, CONDITIONS

_SHAPES = ("cube", "sphere", "cone", "cylinder")


def sample_scene(rng: np.random.Generator, n_objects: int | None = None,
                 condition: str = "minimal") -> Scene:
    n = int(rng.integers(1, 4)) if n_objects is None else n_objects
    colors = list(COLORS)
    objects = []
    for k in range(n):
        x = (k + 0.5) / n
        objects.append(Obj(category=_SHAPES[int(rng.integers(len(_SHAPES)))],
                           color=colors[int(rng.integers(len(colors)))],
                           x=float(x), y=float(rng.uniform(0.3, 0.7))))
    return Scene(tuple(objects), condition=condition, background_seed=int(rng.integers(1 << 30)))


def render(scene: Scene, size: int = 64) -> Image.Image:
    bg = (255, 255, 255) if scene.condition == CONDITIONS[0] else (200, 190, 170)
    image = Image.new("RGB", (size, size), bg)
    draw = ImageDraw.Draw(image)
    r = size / (2.5 * max(2, len(scene.objects)))
    for obj in scene.objects:
        cx, cy = obj.x * size, obj.y * size
        box = (cx - r, cy - r, cx + r, cy + r)
        fill = COLORS[obj.color]
        if obj.category == "sphere":
            draw.ellipse(box, fill=fill)
        elif obj.category == "cone":
            draw.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=fill)
        elif obj.category == "cylinder":
            draw.rectangle((cx - r / 2, cy - r, cx + r / 2, cy + r), fill=fill)
        else:
            draw.rectangle(box, fill=fill)
    return image


def describe_scene(scene: Scene) -> str:
    return " and ".join(f"a {o.color} {o.category}" for o in scene.objects)


def scene_signature(scene: Scene) -> str:
    text = repr([(o.category, o.color, round(o.x, 3), round(o.y, 3)) for o in scene.objects])
    return sha256_text(text)[:16]


def benchmark_scene_signatures() -> set[str]:
    """The stand-in has no benchmark: nothing to collide with."""
    return set()



def make_twin(scene: Scene, rng: np.random.Generator, counts):
    """The stand-in's only edit: the first object changes colour (short captions only)."""
    obj = scene.objects[0]
    colors = [c for c in COLORS if c != obj.color]
    new = colors[int(rng.integers(len(colors)))]
    counts["modify_color"] += 1
    foil = scene.with_objects((obj.with_(color=new), *scene.objects[1:]))
    return foil, "modify_color", [(f"a {obj.color} {obj.category}",
                                   f"a {new} {obj.category}")]
