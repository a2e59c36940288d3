"""Local diffusion backends: ``diffusers:/local/dir[?options]`` for generation and editing.

Any pipeline diffusers can load from a folder with ``DiffusionPipeline.from_pretrained(dir)``
(Stable Diffusion 1.x/2.x/XL/3.x, FLUX, ...). The folder's ``model_index.json`` names the
pipeline class, which decides how an edit is made:

- ``...Inpaint...`` (e.g. ``StableDiffusionInpaintPipeline``): the edit's mask is the inpainting
  mask (white = repaint); an edit without a mask is refused. With ``paste=1`` (default) the
  input's pixels are pasted back outside the mask, so nothing outside the edit region drifts
  (the VAE round trip otherwise perturbs every pixel; CompoSET App. C measures exactly that).
- any other pipeline whose ``__call__`` takes an ``image`` (``StableDiffusionInstructPix2Pix
  Pipeline``, FLUX Kontext, img2img): instruction editing, ``prompt=instruction, image=input``.
- a text-to-image pipeline cannot edit; using it as an editor raises.

Options: ``steps=N`` (``num_inference_steps``), ``guidance=F`` (``guidance_scale``),
``image_guidance=F`` (InstructPix2Pix ``image_guidance_scale``), ``strength=F`` (inpaint /
img2img), ``paste=1|0``; an option not given leaves the pipeline's own default (50 steps for SD,
4 for FLUX-schnell...). Seeds: a CPU ``torch.Generator`` seeded with the request's seed (CPU
noise, so a seed gives the same image on any device). Sizes are rounded down to a multiple of
8 for the pipeline and the output is resized back (Lanczos) to the wanted size.

Fingerprint: spec options, pipeline class, dtype and the folder identity (:mod:`.local_dir`).
"""

from __future__ import annotations

import inspect
import json
import threading
from typing import Any

import numpy as np
from PIL import Image

from foilbench.construct.backends.api_common import check_options
from foilbench.construct.backends.base import (
    EditBackend,
    EditRequest,
    EditResult,
    ImageBackend,
    ImageRequest,
)
from foilbench.construct.backends.local_dir import dir_identity, require_dir
from foilbench.errors import ModelError
from foilbench.models.device import select_device, select_dtype
from foilbench.models.fingerprint import make_fingerprint
from foilbench.models.spec_options import int_option, split_options

OPTIONS = {"steps": None, "guidance": None, "image_guidance": None, "strength": None,
           "paste": ("1", "0")}


def _floats(opts: dict, spec: str) -> dict[str, float]:
    out = {}
    for name, arg in (("guidance", "guidance_scale"), ("image_guidance", "image_guidance_scale"),
                      ("strength", "strength")):
        if name in opts:
            try:
                out[arg] = float(opts[name])
            except ValueError:
                raise ModelError(f"{spec}: option {name}={opts[name]!r} must be a number"
                                 ) from None
    return out


def _round8(size: tuple[int, int]) -> tuple[int, int]:
    w, h = (max(8, int(s) // 8 * 8) for s in size)
    return w, h


class DiffusersPipeline:
    """One loaded pipeline shared by the generator and the editor of a spec."""

    def __init__(self, spec: str, target: str, device: str = "auto", dtype: str = "float32"
                 ) -> None:
        body, opts = split_options(target, OPTIONS)
        folder = require_dir(body, "diffusers", marker="model_index.json")
        try:
            self.class_name = json.loads((folder / "model_index.json").read_text())["_class_name"]
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ModelError(f"{folder}/model_index.json: no pipeline _class_name ({e})") from None
        self.spec, self.folder = spec, folder
        self.device = select_device(device)
        self.torch_dtype = select_dtype(dtype, self.device)
        self.call_args: dict[str, Any] = _floats(opts, spec)
        if "steps" in opts:
            self.call_args["num_inference_steps"] = int_option(opts, "steps", 1)
        self.paste = opts.get("paste", "1") == "1"
        self.pipe = self._load()
        self.params = set(inspect.signature(self.pipe.__call__).parameters)
        self.lock = threading.Lock()
        self.fingerprint = make_fingerprint("diffusers", {
            **dir_identity(folder), "pipeline": type(self.pipe).__name__, "dtype": dtype,
            "options": {k: opts[k] for k in sorted(opts)}})

    def _load(self):
        try:
            from diffusers import DiffusionPipeline
        except ImportError as e:
            raise ModelError(f"diffusers is not installed ({e}); pip install "
                             "'foilbench[construct]'") from None
        from diffusers.utils import deprecation_utils

        # diffusers renamed torch_dtype to dtype (the old name warns, then goes away)
        key = "dtype" if hasattr(deprecation_utils, "_resolve_dtype") else "torch_dtype"
        try:
            pipe = DiffusionPipeline.from_pretrained(str(self.folder), **{key: self.torch_dtype})
        except (OSError, ValueError, AttributeError) as e:
            raise ModelError(f"diffusers: could not load {self.folder} "
                             f"({self.class_name}): {e}") from None
        pipe = pipe.to(self.device)
        pipe.set_progress_bar_config(disable=True)
        return pipe

    @property
    def edit_mode(self) -> str | None:
        if "Inpaint" in self.class_name:
            return "inpaint"
        if "image" in self.params:
            return "instruct"
        return None

    def run(self, seed: int, **kwargs: Any) -> Image.Image:
        import torch

        args = {k: v for k, v in self.call_args.items() if k in self.params}
        generator = torch.Generator("cpu").manual_seed(int(seed))
        with self.lock, torch.no_grad():
            out = self.pipe(**kwargs, **args, generator=generator, output_type="pil")
        return out.images[0].convert("RGB")

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "pipeline": type(self.pipe).__name__,
                "call_args": self.call_args}


class DiffusersGenerator(ImageBackend):
    def __init__(self, pipeline: DiffusersPipeline) -> None:
        self.pipeline = pipeline

    @property
    def fingerprint(self) -> str:
        return self.pipeline.fingerprint

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **self.pipeline.describe()}

    def generate(self, request: ImageRequest) -> Image.Image:
        w, h = _round8(request.size)
        image = self.pipeline.run(request.seed, prompt=request.prompt, height=h, width=w)
        if image.size != tuple(request.size):
            image = image.resize(tuple(request.size), Image.Resampling.LANCZOS)
        return image


class DiffusersEditor(EditBackend):
    def __init__(self, pipeline: DiffusersPipeline) -> None:
        if pipeline.edit_mode is None:
            raise ModelError(f"{pipeline.spec}: {pipeline.class_name} is a text-to-image "
                             "pipeline; editing needs an instruction-editing (InstructPix2Pix, "
                             "Kontext, img2img) or inpainting pipeline")
        self.pipeline = pipeline

    @property
    def fingerprint(self) -> str:
        return self.pipeline.fingerprint

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **self.pipeline.describe(),
                "edit_mode": self.pipeline.edit_mode}

    def edit(self, request: EditRequest) -> EditResult:
        image = request.image.convert("RGB")
        w, h = _round8(image.size)
        work = image if image.size == (w, h) else image.resize((w, h), Image.Resampling.LANCZOS)
        kwargs: dict[str, Any] = {"prompt": request.instruction, "image": work}
        mask = None
        if self.pipeline.edit_mode == "inpaint":
            if request.mask is None:
                raise ModelError(f"{self.pipeline.spec}: an inpainting pipeline needs the edit's "
                                 "mask (EditRequest.mask)")
            mask = np.asarray(request.mask, dtype=bool)
            if mask.shape != (image.height, image.width):
                raise ModelError(f"edit mask of shape {mask.shape} does not match the image "
                                 f"({image.height} x {image.width} pixels, H x W)")
            mask_img = Image.fromarray(np.where(mask, 255, 0).astype(np.uint8))
            kwargs["mask_image"] = mask_img.resize((w, h), Image.Resampling.NEAREST)
            kwargs.update(height=h, width=w)
        out = self.pipeline.run(request.seed, **kwargs)
        if out.size != image.size:
            out = out.resize(image.size, Image.Resampling.LANCZOS)
        if mask is not None and self.pipeline.paste:
            arr = np.where(mask[..., None], np.asarray(out), np.asarray(image))
            out = Image.fromarray(arr.astype(np.uint8))
        return EditResult(out, mask=None)


def _pipeline(rest: str, options: dict[str, Any]) -> DiffusersPipeline:
    check_options(f"diffusers:{rest}", options)
    return DiffusersPipeline(f"diffusers:{rest}", rest, device=options.get("device") or "auto",
                             dtype=options.get("dtype") or "float32")


def generator_from_spec(rest: str, **options: Any) -> DiffusersGenerator:
    return DiffusersGenerator(_pipeline(rest, options))


def editor_from_spec(rest: str, **options: Any) -> DiffusersEditor:
    return DiffusersEditor(_pipeline(rest, options))

