"""The ``composet`` pipeline: CompoSET App. B, steps 1-7, then automatic verification.

CompoSET App. B: "CompoSET pairs are built by interleaving caption generation ... and image
generation". The steps, as the paper states them, and where each lives:

1. "base scene caption. Given scene parameters (setting, number of subjects, framing), the
   captioning model writes a structured base specification -- a one-sentence base caption plus
   per-region detail sentences -- rich in swappable attributes" (:func:`stage_spec`).
2. "base image render. The structured base caption drives a single image-generation call"
   (:func:`stage_base_render`). Then an automatic stand-in for QC Phase 1 ("the base caption is
   reviewed before any foil is generated ... A failure here invalidates the entire scene"): the
   detector must find every object of the spec (:func:`stage_base_check`).
3. "per-instance edits to the base caption ... each one is anchored on the object whose
   attribute the foil edits" (:func:`stage_instance_captions`).
4. "foil-caption enumeration from the edit taxonomy ... ~22 plausible single-edit foils per
   scene" (:mod:`.composet_foils`).
5. "self-check pass ... drops cases where the edit cannot be applied to the scene, the target
   object is ambiguous, or the attribute change is implausible" (:mod:`.composet_foils`).
6. "foil image render. The image model receives the base image plus base/foil captions and is
   instructed to change only the targeted edit while preserving everything else"
   (:mod:`.composet_foils`); then automatic verification: pixel drift outside the edit region
   (App. C) and detector count checks (B.4 criteria (i)-(ii)) (:mod:`.composet_verify`).
7. "expand short to medium and long ... (one object-level anchor added) ... (full-scene
   description with the edit phrase fixed). The long tier is constrained to 77 BPE tokens"
   (:mod:`.composet_verify`), with QC Phase 3's rule checked programmatically: "The edit
   phrase must appear unchanged across the three tiers".

Steps 3-4 send the rendered base image with the spec, as the paper does ("Given the rendered
base image plus the original spec, the captioning model writes per-instance base captions";
"Given the rendered base image and the 16-type edit taxonomy"), to a text backend that
``accepts_images`` (API models; ``template`` accepts and ignores it). Where we differ: a
text-only backend (``hf-lm:``) gets the spec alone, and the log records ``base_image_shown:
false`` for those steps; agreement between spec and image is then only checked by the
detector after step 2.

Added from the released generation scripts and App. B (each an option of ``ComposetConfig``):
the caption-vs-image QC after step 2 (:mod:`.caption_qc`, a rewrite, never a drop); recent
scenes' captions passed back into step 1 (:func:`stage_spec`); the bias-mitigation prompt
variants of steps 4 and 7 (:mod:`.variants`); and §3's floor of "at least 15 foils" per scene
(:func:`.verify.stage_scene_floor`). Human review (B.4) follows with ``foilbench review``.
"""

from __future__ import annotations

import csv
import json

import numpy as np

from foilbench.construct.backends.base import ImageRequest
from foilbench.construct.composet.plan import qc_names, too_long
from foilbench.construct.composet.spec import (
    DEFAULT_SETTINGS,
    ComposetConfig,
    base_image_input,
    count_labels,
    spec_labels,
    spec_text,
    write_png,
)
from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.replies import ReplyError, parse_json, require
from foilbench.construct.engine.stages import ConstructError, Context, answered

ROLES = {"text": True, "image": True, "edit": True, "detector": False, "vqa": False}


def scene_params(config: ComposetConfig) -> list[dict]:
    """Scene parameters: from a CSV like CompoSET's ``scene_settings.csv`` (``id``,
    ``indoor_outdoor``, ``setting``; optional ``n_subjects``, ``framing``) or drawn."""
    rng = np.random.default_rng([config.seed, 0x5CE])
    lo, hi = config.subjects
    rows: list[dict] = []
    if config.scenes_csv is not None:
        with open(config.scenes_csv, newline="", encoding="utf-8") as f:
            for k, row in enumerate(csv.DictReader(f)):
                if "setting" not in row:
                    raise ConstructError(f"{config.scenes_csv}: row {k + 1} has no 'setting' "
                                         "column (expected id,indoor_outdoor,setting)")
                rows.append({"id": row.get("id") or str(k + 1), "setting": row["setting"],
                             "indoor_outdoor": row.get("indoor_outdoor", ""),
                             "n_subjects": int(row.get("n_subjects") or rng.integers(lo, hi + 1)),
                             "framing": row.get("framing") or config.framing})
        rows = rows[: config.n_scenes] if config.n_scenes else rows
    else:
        for k in range(config.n_scenes):
            setting, where = DEFAULT_SETTINGS[k % len(DEFAULT_SETTINGS)]
            rows.append({"id": str(k + 1), "setting": setting, "indoor_outdoor": where,
                         "n_subjects": int(rng.integers(lo, hi + 1)),
                         "framing": config.framing})
    for k, row in enumerate(rows):
        row["scene_id"] = f"s{int(row['id']):03d}" if str(row["id"]).isdigit() else row["id"]
        row["seed"] = int(config.seed) * 100_003 + k
    return rows


def plan(config: ComposetConfig) -> dict[str, dict[str, int]]:
    """Most calls per stage and role, each bounded by its own request (:mod:`.plan`)."""
    from foilbench.construct.composet.plan import composet_plan

    return composet_plan(config)


RECENT_NOTE = ("\nRecent scenes of this benchmark are listed below. Do not reuse their "
               "objects, colours, materials, patterns, actions, poses or overall composition: "
               "choose differently on every dimension, not just one.\n{captions}\n")


def recent_block(captions: list[str]) -> str:
    """The diversity block of step 1's prompt ("" when there is no earlier scene)."""
    if not captions:
        return ""
    return RECENT_NOTE.format(captions="\n".join(f"- {c}" for c in captions))


def stage_spec(ctx: Context, scenes: list[Candidate], recent: int = 5) -> list[Candidate]:
    """Step 1, one scene after another: each prompt carries the base captions of the last
    ``recent`` scenes so that scenes do not repeat (the released scripts pass the last five
    scenes' captions back; they pass the QC-corrected caption where one exists, ours passes
    step 1's, as step 1 runs for every scene before any render). ``recent=0`` sends all scenes
    at once with no block."""
    with ctx.log.stage("base spec (step 1)", scenes) as st:
        shown: list[str] = []
        batches = [scenes] if recent <= 0 else [[s] for s in scenes]
        for batch in batches:
            window = shown[-recent:] if recent > 0 else []
            jobs = [(s.id, (ctx.text_request(
                "composet.base_spec", {"kind": "composet.base_spec",
                                       "params": s.data["params"], "recent": window},
                seed=s.data["params"]["seed"], max_tokens=1500,
                params=json.dumps(s.data["params"], indent=1),
                recent=recent_block(window)),)) for s in batch]
            results = ctx.call_many(st, "text", jobs)
            for s, res in answered(st, batch, results):
                spec = _read_spec(ctx, st, s, res)
                if spec is None:
                    continue
                s.data["spec"] = spec
                shown.append(spec["base_caption"])
                st.passed(s, backend=ctx.backend("text").fingerprint, **res.describe(),
                          inputs={"recent_scenes": len(window)},
                          outputs={"base_caption": spec["base_caption"],
                                   "objects": [o["name"] for o in spec["objects"]]})
    return st.survivors


def _read_spec(ctx: Context, st, s: Candidate, res) -> dict | None:
    try:
        spec = require(parse_json(res.value), {"base_caption": str, "objects": list},
                       "base spec")
        names = [require(o, {"name": str}, "spec object")["name"] for o in spec["objects"]]
    except ReplyError as e:
        st.drop(s, "unreadable reply", error=str(e))
        return None
    if not names:
        st.drop(s, "spec names no object")
        return None
    if getattr(ctx.backend("image"), "reads_structure", False) and "world_scene" not in spec:
        st.drop(s, "spec has no world scene for the world renderer")
        return None
    if (why := too_long(spec=spec)) is not None:  # the plan bounds later prompts by it
        st.drop(s, why)
        return None
    return spec


def stage_base_render(ctx: Context, scenes: list[Candidate], size: int) -> list[Candidate]:
    with ctx.log.stage("base render (step 2)", scenes) as st:
        jobs = []
        for s in scenes:
            spec = s.data["spec"]
            details = " ".join(str(v) for v in (spec.get("details") or {}).values())
            prompt = ctx.render_prompt("composet.base_image", caption=spec["base_caption"],
                                       details=details)
            jobs.append((s.id, (ImageRequest(prompt, seed=s.data["params"]["seed"],
                                             size=(size, size),
                                             scene=spec.get("world_scene")),)))
        results = ctx.call_many(st, "image", jobs)
        for s, res in answered(st, scenes, results):
            s.data["base_image"] = res.value.convert("RGB") if res.value.mode != "RGB" \
                else res.value
            rel = write_png(ctx, f"images/{s.id}/base.png", res.value)
            s.data["base_path"] = rel
            st.passed(s, backend=ctx.backend("image").fingerprint, **res.describe(),
                      outputs={"image": rel})
    return st.survivors


def stage_base_check(ctx: Context, scenes: list[Candidate], threshold: float) -> list[Candidate]:
    with ctx.log.stage("base check (detector)", scenes) as st:
        if not ctx.has("detector"):
            for s in scenes:
                st.unchecked(s, "no --detector",
                             verdicts={"objects_found": "not checked (no --detector)"})
            return st.survivors
        jobs = [(s.id, (s.data["base_image"], sorted(spec_labels(s.data["spec"])), threshold))
                for s in scenes]
        results = ctx.call_many(st, "detector", jobs)
        for s, res in answered(st, scenes, results):
            found = count_labels(res.value, threshold)
            want = spec_labels(s.data["spec"])
            missing = {k: v for k, v in want.items() if found.get(k, 0) < v}
            verdict = {"expected": want, "found": found}
            if missing:
                st.drop(s, "base: spec object missing in the image", verdicts=verdict)
            else:
                st.passed(s, backend=ctx.backend("detector").fingerprint, **res.describe(),
                          verdicts=verdict)
    return st.survivors


def _read_instances(res) -> dict[str, str]:
    got = require(parse_json(res.value), {"instances": list}, "instance captions")
    return {str(i["object"]): str(i["caption"]) for i in got["instances"]}


def stage_instance_captions(ctx: Context, scenes: list[Candidate],
                            bias_variants: bool = False) -> list[Candidate]:
    """Step 3; with ``bias_variants`` the ``.bias`` prompt captions too and each object keeps
    the caption that names it (:func:`.variants.reconcile_instances`)."""
    from foilbench.construct.composet.variants import (
        BIAS,
        MAIN,
        reconcile_instances,
        variant_seed,
        variants,
    )

    with ctx.log.stage("instance captions (step 3)", scenes) as st:
        results: dict[str, dict] = {}
        for prompt, tag in variants("composet.instance_captions", bias_variants):
            jobs = [(s.id, (ctx.text_request(
                prompt, {"kind": "composet.instance_captions", "spec": s.data["spec"]},
                seed=variant_seed(s.data["params"]["seed"], tag), max_tokens=1500,
                spec=spec_text(s.data["spec"]), **base_image_input(ctx, s)),)) for s in scenes]
            results[tag] = ctx.call_many(st, "text", jobs)
        shown = bool(base_image_input(ctx, scenes[0])["images"]) if scenes else False
        for s, res in answered(st, scenes, results[MAIN]):
            try:
                caps = _read_instances(res)
            except (ReplyError, KeyError, TypeError) as e:
                st.drop(s, "unreadable reply", error=str(e))
                continue
            extra = {}
            if BIAS in results:
                try:
                    other = _read_instances(results[BIAS][s.id])
                except (ReplyError, KeyError, TypeError, AttributeError):
                    other = None  # a failed or unreadable bias reply leaves the main captions
                caps, tally = reconcile_instances(s.data["spec"], caps, other)
                extra = {"verdicts": {"variants": tally, "bias_reply": other is not None}}
            if (why := too_long(instances=caps)) is not None:
                st.drop(s, why)
                continue
            s.data["instances"] = caps
            st.passed(s, backend=ctx.backend("text").fingerprint, **res.describe(),
                      inputs={"base_image_shown": shown, "image": s.data["base_path"]},
                      outputs={"instances": caps}, **extra)
    return st.survivors


def build(ctx: Context, config: ComposetConfig):
    from foilbench.construct.composet.caption_qc import stage_caption_qc
    from foilbench.construct.composet.foils import (
        stage_enumerate,
        stage_foil_render,
        stage_self_check,
    )
    from foilbench.construct.composet.verify import (
        result_for,
        stage_scene_floor,
        stage_verbosity,
        stage_verify,
    )

    def structured(role: str) -> bool:
        return getattr(ctx.backend(role), "reads_structure", False)

    for role in ("image", "edit"):
        if structured(role) and not structured("text"):
            raise ConstructError(f"--{role} world draws only scenes and edits the template text "
                                 "backend specifies; use --text template with it, or a "
                                 f"generative --{role} backend with a language model")
    scenes = []
    for p in scene_params(config):
        cand = Candidate(p["scene_id"], "scene", {"params": p})
        ctx.log.created(cand, stage="scene parameters", inputs=p)
        scenes.append(cand)
    scenes = stage_spec(ctx, scenes, config.recent_scenes)
    scenes = stage_base_render(ctx, scenes, config.size)
    if config.caption_qc:
        scenes = stage_caption_qc(ctx, scenes, most_names=qc_names(config))
    scenes = stage_base_check(ctx, scenes, config.detector_threshold)
    scenes = stage_instance_captions(ctx, scenes, config.bias_variants)
    instances = stage_enumerate(ctx, scenes, config.foils_per_scene, config.bias_variants)
    instances = stage_self_check(ctx, instances)
    instances = stage_foil_render(ctx, instances, config)
    instances = stage_verify(ctx, instances, config)
    instances = stage_verbosity(ctx, instances, config)
    if config.min_foils_per_scene > 0:
        instances = stage_scene_floor(ctx, instances, config.min_foils_per_scene)
    ctx.log.keep_all(instances, stage="export")
    return result_for(ctx, instances, config)
