"""Scripted answers for whole pipelines on the strict provider fake: CompoSET (the step is read
from the system prompt, as tests/_construct_fake_api.py does), Auto-Comp (a contextual
caption that keeps the concept word for word; VQA answered from the rendered world scene),
SugarCrepe and COMPASS; and the readers of the dry run's bound and estimate lines."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
from PIL import Image

from _construct_fake_api import OBJECTS, STEPS, ComposetResponder, scene_image
from foilbench.construct.backends.world import SCENE_KEY


def composet_answer(provider, model, system, prompt, images) -> str:
    step = next(v for k, v in STEPS.items() if k in system)
    return json.dumps(getattr(ComposetResponder(), step)(prompt))


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
    """Text: "In a bright room, <concept>." (plain text, or ``{"caption": ...}`` for the JSON
    prompt). VQA: the true answer, read from
    the world scene the image was rendered from (``record`` wraps the world renderer's tagging
    so that each rendered image's pixels name their scene; the API request carries only
    pixels), so the API validator agrees with the world."""

    def __init__(self) -> None:
        self.scenes: dict[str, str] = {}
        self.vqa = None

    def record(self, tag):
        def wrapped(image, scene):
            out = tag(image, scene)
            self.scenes[self._key(out)] = out.info[SCENE_KEY]
            return out
        return wrapped

    @staticmethod
    def _key(image: Image.Image) -> str:
        return hashlib.sha256(np.asarray(image.convert("RGB")).tobytes()).hexdigest()

    def __call__(self, provider, model, system, prompt, images) -> str:
        if "Choose the answer from this list" in prompt:
            from foilbench.construct.backends.registry import resolve_backend

            self.vqa = self.vqa or resolve_backend("vqa", "world")
            image = images[-1].copy()
            image.info[SCENE_KEY] = self.scenes[self._key(image)]
            question = prompt.split("\n", 1)[0]
            return self.vqa.answer(image, question, re.findall(r"^- (.+)$", prompt, re.M))
        if "Concept:" in prompt:  # the JSON variant (--contextual-prompt json)
            concept = prompt.rsplit("Concept:", 1)[1].strip()
            return json.dumps({"caption": f"In a bright room, {concept}."})
        # App. A.2's prompt as printed: the last "Objects and ...:" line, a plain-text reply
        concept = re.findall(r"^Objects and [a-z]+: (.+)$", prompt, re.M)[-1].strip()
        return f"In a bright room, {concept}."


def dry_bound(output: str) -> tuple[int, float]:
    line = next(x for x in output.splitlines() if x.strip().startswith("total"))
    parts = line.split()
    return int(parts[3]), float(parts[7].lstrip("$"))


def dry_estimate(output: str) -> float:
    return float(re.search(r"^  estimate  about \$([\d.]+): a guide, not a bound", output,
                           re.M).group(1))


def sugarcrepe_answer(provider, model, system, prompt, images) -> str:
    """SugarCrepe's four steps, told apart by the prompt's last lines."""
    caption = re.findall(r"^Caption: (.*)$", prompt, re.M)[-1].strip()
    tail = prompt[prompt.rfind("Caption:"):]
    if "Old:" in tail:
        old, new = re.search(r"Old: (.*), new: (.*)$", tail, re.M).groups()
        return json.dumps({"caption": caption.replace(old.strip(), new.strip())})
    if "Given:" in tail:
        return json.dumps({"new": "zebra"})
    if "Concept:" in tail:
        return json.dumps({"concepts": [caption.rstrip(".").split()[-1]]})
    return json.dumps({"possible": False})


def compass_answer(provider, model, system, prompt, images) -> str:
    return json.dumps({"caption": "A plain picture of some things."})
