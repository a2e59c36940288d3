"""A fake provider that answers a CompoSET construction run: Anthropic text (steps 1, 3-5, 7),
Gemini image generation (step 2) and OpenAI GPT-image edits (step 6), on the wire formats of
``_api_fake.FakeProvider``.

Its answers are scripted so that the pipeline's real checks drop some candidates, each for a
known reason:

- foil 3 repeats foil 0 (the self-check drops it as ``duplicate``), foil 5 has no foil caption
  (``malformed proposal``);
- the edit of the vase's material returns the base image unchanged (``no visible change``);
- the medium caption of the book foil rewords the edit phrase (``edit phrase reworded``).

The caption QC (the base spec against the rendered image) rewrites one detail sentence ("the
mug is glossy" -> "the mug is matte"), so each scene is logged as rewritten.
So each scene keeps two foils (mug colour, vase colour). Every request is recorded, with the
images the text requests carried, so a test can check that steps 3-4 saw the base image.
"""

from __future__ import annotations

import base64
import io
import json
import re

import numpy as np
from PIL import Image

# name, base colour, foil colour / material, box (x0, y0, x1, y1) in a 64 x 64 image
OBJECTS = {"mug": ((200, 40, 40), (40, 60, 210), (6, 30, 22, 56)),
           "vase": ((40, 160, 60), (140, 50, 170), (26, 14, 38, 56)),
           "book": ((40, 60, 210), (230, 210, 40), (44, 40, 60, 56))}
FOILS = [("modify_color", "mug", "red", "blue"), ("modify_color", "book", "blue", "yellow"),
         ("modify_material", "vase", "ceramic", "glass"), ("modify_color", "mug", "red", "blue"),
         ("modify_color", "vase", "green", "purple"), ("modify_color", "mug", "red", None)]
STEPS = {"precise scene specifications": "spec", "single out one object": "instances",
         "design single-edit foils": "foils", "review proposed single-edit foils": "self_check",
         "expand short image captions": "verbosity",
         "check a scene specification against the photograph": "caption_qc"}


def png_b64(image: Image.Image) -> str:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def decode(b64: str) -> Image.Image:
    with Image.open(io.BytesIO(base64.b64decode(b64))) as im:
        return im.convert("RGB")


def scene_image(seed: int) -> Image.Image:
    arr = np.full((64, 64, 3), 235 - 10 * (seed % 3), np.uint8)
    for colour, _, (x0, y0, x1, y1) in OBJECTS.values():
        arr[y0:y1, x0:x1] = colour
    return Image.fromarray(arr)


def _text_reply(text: str) -> tuple[int, dict, dict]:
    return 200, {}, {"content": [{"type": "text", "text": text}],
                     "usage": {"input_tokens": 400, "output_tokens": 120}}


class ComposetResponder:
    def __init__(self, long_context: str = " on a table in a bright kitchen") -> None:
        self.images_seen: dict[str, int] = {}  # step -> text requests that carried an image
        self.long_context = long_context  # what the long tier adds to the medium one

    def __call__(self, request: dict) -> tuple[int, dict, dict]:
        path, body = request["path"], request["body"]
        if path == "/v1/messages":
            return self.text(body)
        if path.endswith(":generateContent"):
            seed = body["generationConfig"].get("seed", 0)
            return 200, {}, {"candidates": [{"content": {"parts": [
                {"inlineData": {"mimeType": "image/png", "data": png_b64(scene_image(seed))}}]}}]}
        if path == "/v1/images/edits":
            return self.edit(request)
        return 404, {}, {"error": f"no route {path}"}

    def text(self, body: dict) -> tuple[int, dict, dict]:
        step = next(v for k, v in STEPS.items() if k in body.get("system", ""))
        parts = body["messages"][0]["content"]
        prompt = " ".join(p["text"] for p in parts if p["type"] == "text")
        if any(p["type"] == "image" for p in parts):
            self.images_seen[step] = self.images_seen.get(step, 0) + 1
        return _text_reply(json.dumps(getattr(self, step)(prompt)))

    @staticmethod
    def spec(prompt: str) -> dict:
        params = re.search(r"Scene parameters:\n(.*?)\n\n", prompt, re.S).group(1)
        setting = json.loads(params)["setting"]
        return {"base_caption": f"a red mug, a green vase and a blue book in a {setting}",
                "details": {"o1": "the mug is glossy"},
                "objects": [{"id": f"o{k + 1}", "name": name, "description": f"a {name}",
                             "location": "on the table"} for k, name in enumerate(OBJECTS)]}

    @staticmethod
    def instances(prompt: str) -> dict:
        return {"instances": [{"object": f"o{k + 1}", "caption": f"a {name} on the table"}
                              for k, name in enumerate(OBJECTS)]}

    @staticmethod
    def foils(prompt: str) -> dict:
        out = []
        for edit_type, target, before, after in FOILS:
            foil = {"edit_type": edit_type, "target_object": target, "base_attribute": before,
                    "foil_attribute": after or "", "base_caption": f"a {before} {target}"}
            if after:
                foil["foil_caption"] = f"a {after} {target}"
            out.append(foil)
        return {"foils": out}

    @staticmethod
    def self_check(prompt: str) -> dict:
        seen, verdicts = set(), []
        for k, line in enumerate(re.findall(r"^\d+\. (.*)$", prompt, re.M)):
            what = line.split("|")[0].strip()
            verdicts.append({"index": k, "keep": what not in seen,
                             "issue": "" if what not in seen else "duplicate"})
            seen.add(what)
        return {"verdicts": verdicts}

    @staticmethod
    def caption_qc(prompt: str) -> dict:
        spec = json.loads(re.search(r"rendered from this scene specification:\n(.*?)\n\n",
                                    prompt, re.S).group(1))
        details = {**spec.get("details", {}), "o1": "the mug is matte"}
        return {"edits": [{"where": "o1", "field": "material", "target": "mug",
                           "from": "glossy", "to": "matte"}],
                "base_caption": spec["base_caption"], "details": details,
                "objects": spec["objects"]}

    def verbosity(self, prompt: str) -> dict:
        base = re.search(r"Short base caption: (.*)", prompt).group(1).strip()
        foil = re.search(r"Short foil caption: (.*)", prompt).group(1).strip()
        medium = [f"{c} next to a wooden bowl" for c in (base, foil)]
        if "book" in base:
            medium[0] = "a navy book next to a wooden bowl"
        long = [f"{m}{self.long_context}" for m in medium]
        return {"medium": {"base": medium[0], "foil": medium[1]},
                "long": {"base": long[0], "foil": long[1]}}

    @staticmethod
    def edit(request: dict) -> tuple[int, dict, dict]:
        """An edit arrives as multipart/form-data (``image`` and ``mask`` files)."""
        from email.parser import BytesParser
        from email.policy import HTTP

        ctype = {k.lower(): v for k, v in request["headers"].items()}["content-type"]
        msg = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode()
                                                  + request["raw"])
        parts = {p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
                 for p in msg.iter_parts()}
        with Image.open(io.BytesIO(parts["image"])) as im:
            image = im.convert("RGB")
        target = re.search(r"Target caption: a (\w+) (\w+)", parts["prompt"].decode())
        after, name = target.group(1), target.group(2)
        arr = np.asarray(image).copy()
        if name in OBJECTS and after != "glass":  # a glass vase: the editor changes nothing
            x0, y0, x1, y1 = OBJECTS[name][2]
            arr[y0:y1, x0:x1] = OBJECTS[name][1]
        return 200, {}, {"created": 1, "data": [{"b64_json": png_b64(Image.fromarray(arr))}]}
