"""Scripted answers for whole pipelines on the strict provider fake: CompoSET (the step is read
from the system prompt, as tests/_construct_fake_api.py does) and Auto-Comp (a contextual
caption that keeps the concept word for word; colour questions answered from the pixels)."""

from __future__ import annotations

import json
import re

import numpy as np
from PIL import Image

from _construct_fake_api import OBJECTS, STEPS, ComposetResponder, scene_image
from foilbench.world.vocab import COLORS


def composet_answer(provider, model, system, prompt, images) -> str:
    step = next(v for k, v in STEPS.items() if k in system)
    return json.dumps(getattr(ComposetResponder, step)(prompt))


def composet_image(prompt: str, src: Image.Image | None, seed: int) -> Image.Image:
    if src is None:
        return scene_image(seed)
    target = re.search(r"Target caption: a (\w+) (\w+)", prompt)
    arr = np.asarray(src).copy()
    if target and target.group(2) in OBJECTS and target.group(1) != "glass":
        x0, y0, x1, y1 = OBJECTS[target.group(2)][2]
        arr[y0:y1, x0:x1] = OBJECTS[target.group(2)][1]
    return Image.fromarray(arr)


class AutocompAnswers:
    """Text: ``{"caption": "In a bright room, <concept>."}``; VQA: the listed colour that
    covers the most pixels of the image (white background aside)."""

    def __call__(self, provider, model, system, prompt, images) -> str:
        if "Choose the answer from this list" in prompt:
            return self.colour(images[-1], re.findall(r"^- (.+)$", prompt, re.M))
        concept = prompt.rsplit("Concept:", 1)[1].strip()
        return json.dumps({"caption": f"In a bright room, {concept}."})

    @staticmethod
    def colour(image: Image.Image, choices: list[str]) -> str:
        arr = np.asarray(image, dtype=float).reshape(-1, 3)
        best, score = choices[0], -1
        for c in choices:
            if c not in COLORS:
                continue
            near = np.abs(arr - np.array(COLORS[c], float)).sum(axis=1) < 60
            if near.sum() > score:
                best, score = c, int(near.sum())
        return best
