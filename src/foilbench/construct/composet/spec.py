"""What the CompoSET stages share: the run's config, the scene spec as prompts show it, the
spec's object counts, the base image given to text steps, and image writes."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.stages import Context

#: Largest share of changed pixels outside the edit region a foil may have
#: (:func:`foilbench.construct.validators.image_checks.pixel_drift`); above it the foil is
#: dropped before human QC. Where it comes from: CompoSET gives no pixel threshold. Its App. C
#: drift audit is a judge plus a person, not a pixel count: "we sampled N=300 short-tier
#: (base, foil) pairs and asked Gemini 2.5 Flash to flag any change beyond the labeled
#: compositional edit. We manually verified every flag. Only 2/300 instances retained genuine
#: multi-edit drift after verification: 0.67% [...] The remaining flagged cases were either
#: disocclusion (newly visible background where an object was removed) or below-threshold
#: lighting and blur differences." (0.67% is a rate of *pairs*, not of pixels.) The only pixel
#: numbers it reports are whole-pair footprints (§4, App. F.1: "fraction of pixels with
#: channel-max difference above 10/255 after sigma=1.0 Gaussian blur", mean 0.083;
#: "modify_color and modify_pattern have the smallest fraction-affected (~3-5%)"). Our 0.01 is
#: foilbench's choice, set from those: an unintended change outside the edit covering 1% of
#: the rest of the image is a fifth to a third of the smallest edit types' whole footprint, so
#: a second edit the size of a real one is caught, while blur and resampling noise at the
#: mask's rim (the mask is grown by 4 sigma first) and the "below-threshold lighting and blur
#: differences" the paper discounts stay under it. The paper's own setting, no automatic pixel
#: gate (the audit and review decide), is ``max_drift=1.0`` (``--max-drift 1``); the App. C
#: audit itself is ``foilbench audit drift``.
MAX_DRIFT = 0.01

DEFAULT_SETTINGS = (
    ("photo studio with a plain white backdrop", "indoor"),
    ("living room", "indoor"),
    ("white tabletop studio shot", "indoor"),
    ("kitchen counter", "indoor"),
)


@dataclass(frozen=True)
class ComposetConfig:
    n_scenes: int = 6
    foils_per_scene: int = 22
    size: int = 256
    seed: int = 0
    scenes_csv: Path | None = None
    subjects: tuple[int, int] = (3, 6)
    framing: str = "eye-level, whole scene in view"
    max_drift: float = MAX_DRIFT  # see MAX_DRIFT: where 0.01 comes from
    detector_threshold: float = 0.3
    #: long-tier counter: "auto" (CLIP BPE if open_clip is installed, else a stated bound),
    #: "bpe" or "bound" (:func:`foilbench.world.token_budget.long_tier_counter`)
    token_counter: str = "auto"
    #: §3 "each scene contributes at least 15 foils": scenes with fewer kept foils are dropped
    #: (0 keeps every scene)
    min_foils_per_scene: int = 15
    #: the released scripts' caption-vs-image QC after the base render (:mod:`.caption_qc`)
    caption_qc: bool = True
    #: recent scene captions shown to step 1 so scenes do not repeat (0: none)
    recent_scenes: int = 5
    #: App. B.3: run the ``*.bias.txt`` prompt variants too, reconciled by verification
    bias_variants: bool = False

    def options(self) -> dict:
        out = asdict(self)
        out["scenes_csv"] = str(self.scenes_csv) if self.scenes_csv else None
        return out


def write_png(ctx: Context, rel: str, image) -> str:
    from foilbench.world.render import png_bytes

    path = ctx.out / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(image.convert("RGB") if image.mode != "L" else image))
    return rel


def count_labels(detections, threshold: float) -> dict[str, int]:
    counts: dict[str, int] = {}
    for d in detections:
        if d.score >= threshold:
            counts[d.label.lower()] = counts.get(d.label.lower(), 0) + 1
    return counts


def spec_labels(spec: dict) -> dict[str, int]:
    """Expected count of each object name in the spec."""
    out: dict[str, int] = {}
    for o in spec["objects"]:
        name = str(o["name"]).lower()
        out[name] = out.get(name, 0) + 1
    return out


IMAGE_NOTE = ("The attached photograph is the rendered base image of this scene. Write about "
              "what it shows; where it disagrees with the specification below, follow the "
              "image.\n\n")


def base_image_input(ctx: Context, scene: Candidate) -> dict:
    """``images`` and ``image_note`` for steps 3-4: the rendered base image and a line saying
    so, for a text backend that reads images; nothing otherwise (module docstring)."""
    if getattr(ctx.backend("text"), "accepts_images", False):
        return {"images": (scene.data["base_image"],), "image_note": IMAGE_NOTE}
    return {"images": (), "image_note": ""}


def spec_text(spec: dict) -> str:
    """The spec as the prompts show it (without the world's internal scene)."""
    shown = {k: v for k, v in spec.items() if k != "world_scene"}
    return json.dumps(shown, indent=1, sort_keys=True)
