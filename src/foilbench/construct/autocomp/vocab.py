"""The words an Auto-Comp run draws its concepts from (objects, shapes, colours, relations)."""

from __future__ import annotations

VOCAB_KEYS = ("objects", "shapes", "colors", "relations", "size_relations")


def default_vocab() -> dict[str, tuple[str, ...]]:
    """The procedural world's words (what ``--image world`` can draw)."""
    from foilbench.world.autocomp import TASK_OBJECTS, TASK_VALUES

    return {"objects": TASK_OBJECTS["color"], "shapes": TASK_OBJECTS["shape_color"],
            "colors": TASK_VALUES["color"], "relations": TASK_VALUES["position"],
            "size_relations": TASK_VALUES["relative_size"],
            "position_objects": TASK_OBJECTS["position"],
            "size_objects": TASK_OBJECTS["relative_size"]}


def task_words(vocab: dict, task: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    objects = {"color": vocab["objects"], "shape_color": vocab["shapes"],
               "position": vocab.get("position_objects", vocab["objects"]),
               "relative_size": vocab.get("size_objects", vocab["objects"])}[task]
    values = {"color": vocab["colors"], "shape_color": vocab["colors"],
              "position": vocab["relations"], "relative_size": vocab["size_relations"]}[task]
    return tuple(objects), tuple(values)
