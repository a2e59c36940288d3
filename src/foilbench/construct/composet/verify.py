"""``composet``: automatic verification of foils, step 7 (verbosity tiers), and the items.

Verification, before human QC (CompoSET App. B.4 and App. C):

- *visible change*: a foil identical to its base (no pixel changed beyond 10/255 after blur)
  carries no edit and is dropped;
- *pixel drift* outside the edit region (App. C's drift audit, measured as in
  :func:`foilbench.construct.validators.image_checks.pixel_drift`): the region is the editor's
  exact mask when it reports one (the world editor), else the detector boxes of the edited
  object in base and foil; drift above ``max_drift`` drops the foil (:func:`drifted`; the
  default 0.01 is foilbench's, CompoSET gives no pixel threshold: see
  :data:`foilbench.construct.composet.spec.MAX_DRIFT` for App. C's words and our reasons);
- *detector counts* (B.4 criteria (i) "the count of the named object is preserved" and (ii)
  "no other object is added, removed"): every spec object's count must match between base
  and foil, except what the edit itself changes (:func:`.composet_taxonomy.check_counts`).

Step 7 and QC Phase 3 ("The edit phrase must appear unchanged across the three tiers;
surrounding context grows around it without rewording"): the medium and long captions must
contain the short base/foil phrase verbatim (case aside), base and foil must read the same
once the edit phrase is masked, and the long tier must fit 77 CLIP BPE tokens ("The long
tier is constrained to 77 BPE tokens (the CLIP text-encoder cap)", App. B.3), counted by
:func:`foilbench.world.token_budget.long_tier_counter`: CLIP's real BPE (open_clip's packaged
vocabulary) when open_clip_torch is installed, else a stated upper bound; the counter used is
logged with the stage and recorded in the manifest (``long_tier_token_counter``).
"""

from __future__ import annotations

import json
import re

import numpy as np
from PIL import Image

from foilbench.construct.composet.spec import (
    MAX_DRIFT,
    ComposetConfig,
    count_labels,
    spec_labels,
    spec_text,
    write_png,
)
from foilbench.construct.composet.taxonomy import (
    TAXONOMY,
    check_counts,
    edited_labels,
)
from foilbench.construct.engine.export import ConstructResult
from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.replies import ReplyError, parse_json, require
from foilbench.construct.engine.stages import Context, Failure, drop_failed
from foilbench.construct.validators.image_checks import boxes_mask, changed_pixels, pixel_drift

TIERS = ("short", "medium", "long")
MAX_TOKENS = 77
EDIT_MARK = "<edit>"


def _labels(c: Candidate) -> list[str]:
    foil = c.data["foil"]
    labels = set(spec_labels(c.data["scene"].data["spec"]))
    labels.add(foil.target_object.lower())
    if foil.edit_type in ("modify_object", "modify_shape"):
        labels.update({foil.base_attribute.lower(), foil.foil_attribute.lower()})
    return sorted(labels - {""})


def _box_region(dets_base, dets_foil, labels: set[str], size: int, threshold: float):
    m = int(0.04 * size)
    boxes = [(d.box[0] - m, d.box[1] - m, d.box[2] + m, d.box[3] + m)
             for d in (*dets_base, *dets_foil) if d.score >= threshold
             and d.label.lower() in labels]
    return boxes_mask((size, size), boxes) if boxes else None


def drifted(drift: float, max_drift: float = MAX_DRIFT) -> bool:
    """The pixel-drift gate: strictly above ``max_drift`` drops the foil (a drift equal to the
    threshold passes)."""
    return drift > max_drift


def stage_verify(ctx: Context, instances: list[Candidate],
                 config: ComposetConfig) -> list[Candidate]:
    th = config.detector_threshold
    with ctx.log.stage("verify: drift and counts", instances) as st:
        dets: dict = {}
        if ctx.has("detector"):
            jobs = []
            for c in instances:
                labels = _labels(c)
                jobs.append((f"{c.id}/base", (c.data["scene"].data["base_image"], labels, th)))
                jobs.append((f"{c.id}/foil", (c.data["foil_image"], labels, th)))
            dets = ctx.call_many(st, "detector", jobs)
        for c in ctx.track(instances, f"{st.name} (pixels)", unit="foil"):
            base, foil_img = c.data["scene"].data["base_image"], c.data["foil_image"]
            if not changed_pixels(base, foil_img).any():
                st.drop(c, "no visible change")
                continue
            verdict: dict = {}
            db, df = dets.get(f"{c.id}/base"), dets.get(f"{c.id}/foil")
            if isinstance(db, Failure) or isinstance(df, Failure):
                drop_failed(st, c, db if isinstance(db, Failure) else df)
                continue
            foil = c.data["foil"]
            region = c.data["edit_mask"]
            if region is None and db is not None:
                edited = edited_labels(foil, _labels(c))
                region = _box_region(db.value, df.value, edited, base.size[0], th)
            if region is not None:
                verdict["pixel_drift"] = round(pixel_drift(base, foil_img, region), 6)
                verdict["mask_source"] = "editor" if c.data["edit_mask"] is not None else "boxes"
                c.data["mask_path"] = write_png(
                    ctx, f"masks/{c.data['scene'].id}/{c.id}.png",
                    Image.fromarray(np.asarray(region, bool).astype(np.uint8) * 255, "L"))
            else:
                verdict["pixel_drift"] = None
                verdict["mask_source"] = "none (no mask from the editor and no --detector)"
            if db is not None:
                verdict["counts_base"] = count_labels(db.value, th)
                verdict["counts_foil"] = count_labels(df.value, th)
                verdict["count_check"] = check_counts(foil, verdict["counts_base"],
                                                      verdict["counts_foil"]) or "ok"
            c.data["verdict"] = verdict
            drift = verdict["pixel_drift"]
            if drift is not None and drifted(drift, config.max_drift):
                st.drop(c, "pixel drift outside the edit region", verdicts=verdict)
            elif verdict.get("count_check", "ok") != "ok":
                st.drop(c, "detector count check", verdicts=verdict)
            elif drift is None and db is None:
                st.unchecked(c, "no --detector, no edit mask", verdicts=verdict)
            elif db is None:
                st.unchecked(c, "no --detector", part="count check", verdicts=verdict)
            else:
                st.passed(c, verdicts=verdict)
    return st.survivors


def _masked(text: str, phrase: str) -> str | None:
    low, p = " ".join(text.lower().split()), " ".join(phrase.lower().split())
    if p not in low:
        return None
    return re.sub(r"[\s.]+$", "", low.replace(p, EDIT_MARK, 1))


def check_tiers(short: tuple[str, str], tiers: dict[str, tuple[str, str]],
                count=None) -> str | None:
    """None when the tiers keep the edit phrase and the context (module docstring);
    ``count`` counts CLIP tokens (default: the ``auto`` long-tier counter)."""
    from foilbench.world.token_budget import long_tier_counter

    count = count or long_tier_counter().count
    for tier in ("medium", "long"):
        base, foil = tiers[tier]
        mb, mf = _masked(base, short[0]), _masked(foil, short[1])
        if mb is None or mf is None:
            return "verbosity: edit phrase reworded"
        if mb != mf:
            return "verbosity: context differs between base and foil"
    if max(count(t) for t in tiers["long"]) > MAX_TOKENS:
        return "verbosity: long tier over 77 tokens"
    return None


def _read_tiers(res) -> tuple[str | None, dict | None]:
    if isinstance(res, Failure):
        return f"call failed: {res.error}"[:200], None
    try:
        got = parse_json(res.value)
        return None, {t: (str(require(got, {t: dict}, "verbosity")[t]["base"]),
                          str(got[t]["foil"])) for t in ("medium", "long")}
    except (ReplyError, KeyError, TypeError) as e:
        return f"unreadable reply: {e}"[:200], None


def stage_verbosity(ctx: Context, instances: list[Candidate],
                    config: ComposetConfig | None = None) -> list[Candidate]:
    """Step 7 and the tier checks; the long tier is counted by the config's token counter
    (recorded in the log and ``ctx.notes``); with ``bias_variants`` both prompt variants
    write tiers and the checks reconcile them (:func:`.variants.reconcile`)."""
    from foilbench.construct.composet.variants import MAIN, reconcile, variants
    from foilbench.world.token_budget import long_tier_counter

    config = config or ComposetConfig()
    counter = long_tier_counter(config.token_counter)
    ctx.notes["long_tier_token_counter"] = counter.name
    with ctx.log.stage("verbosity (step 7)", instances) as st:
        ctx.log.write({"event": "token_counter", "stage": st.name, "counter": counter.name,
                       "exact": counter.exact, "limit": MAX_TOKENS})
        results: dict[str, dict] = {}
        for prompt, tag in variants("composet.verbosity", config.bias_variants):
            jobs = []
            for c in instances:
                foil, spec = c.data["foil"], c.data["scene"].data["spec"]
                jobs.append((c.id, (ctx.text_request(
                    prompt, {"kind": "composet.verbosity", "spec": spec,
                             "foil": foil.to_dict()},
                    max_tokens=800, spec=spec_text(spec), base_caption=foil.base_caption,
                    foil_caption=foil.foil_caption),)))
            results[tag] = ctx.call_many(st, "text", jobs)
        for c in instances:
            if len(results) == 1 and drop_failed(st, c, results[MAIN][c.id]):
                continue
            short = (c.data["foil"].base_caption, c.data["foil"].foil_caption)
            checked = {}
            for tag, by_id in results.items():
                problem, tiers = _read_tiers(by_id[c.id])
                checked[tag] = (problem or check_tiers(short, tiers, counter.count), tiers)
            kept, verdicts = reconcile(checked)
            main_tiers = checked[MAIN][1]
            outputs = {t: list(v) for t, v in (main_tiers or {}).items()}
            if kept is None:
                problem = checked[MAIN][0]
                reason = problem if problem.startswith("verbosity:") else (
                    "unreadable reply" if problem.startswith("unreadable") else "call failed")
                fields = {"outputs": outputs}
                if len(results) > 1:
                    fields["verdicts"] = verdicts
                else:
                    fields["error"] = problem
                st.drop(c, reason, **fields)
                continue
            tiers = checked[kept][1]
            c.data["tiers"] = {"short": short, **tiers}
            c.data["tier_variant"] = kept
            extra = {"verdicts": verdicts} if len(results) > 1 else {}
            st.passed(c, **results[kept][c.id].describe(),
                      outputs={t: list(v) for t, v in tiers.items()}, **extra)
    return st.survivors


def bias_variants_note(on: bool) -> dict:
    """Whether App. B.3's bias-mitigation variants ran; off is a stated departure."""
    from foilbench.construct.composet.variants import PAPER_B3, departure

    return {"run": bool(on), "paper": PAPER_B3, **({} if on else {"departure": departure()})}


def stage_scene_floor(ctx: Context, instances: list[Candidate], min_foils: int,
                      ) -> list[Candidate]:
    """CompoSET §3: "each scene contributes at least 15 foils" (App. A: "at least 15 and on
    average ~22 foils per base"). A scene with fewer than ``min_foils`` foils left after the
    automatic checks is dropped whole; the scenes dropped are counted in ``ctx.notes``.
    ``min_foils=0`` keeps every scene (human review may still drop foils afterwards)."""
    by_scene: dict[str, list[Candidate]] = {}
    for c in instances:
        by_scene.setdefault(c.data["scene"].id, []).append(c)
    short = {sid: len(cs) for sid, cs in by_scene.items() if len(cs) < min_foils}
    ctx.notes["scene_floor"] = {"min_foils": int(min_foils), "scenes_in": len(by_scene),
                                "scenes_dropped": len(short), "foils_by_dropped_scene": short}
    with ctx.log.stage(f"scene floor (>= {min_foils} foils)", instances) as st:
        for c in instances:
            sid = c.data["scene"].id
            if sid in short:
                st.drop(c, f"scene has fewer than {min_foils} foils (lower --min-foils or "
                           "propose more with --foils-per-scene)",
                        verdicts={"scene_foils": short[sid]})
            else:
                st.passed(c)
        ctx.log.write({"event": "scene_floor", "stage": st.name, **ctx.notes["scene_floor"]})
    return st.survivors


def _rows(c: Candidate) -> list[dict]:
    scene, foil = c.data["scene"], c.data["foil"]
    spec = scene.data["spec"]
    world = spec.get("world_scene") or {}
    verdict = c.data.get("verdict", {})
    obj_for = {str(o.get("name", "")).lower(): str(o.get("id", ""))
               for o in spec["objects"]}
    return [{
        "item_id": f"{c.id}-{tier}",
        "image_base": scene.data["base_path"],
        "image_foil": c.data["foil_path"],
        "caption_base": c.data["tiers"][tier][0],
        "caption_foil": c.data["tiers"][tier][1],
        "scene_id": scene.id,
        "edit_type": foil.edit_type,
        "category": TAXONOMY[foil.edit_type][0],
        "operation": c.data.get("operation", foil.operation),
        "tier": tier,
        "n_objects": len(spec["objects"]),
        "condition": world.get("condition", ""),
        "split": "test",
        "foil_id": c.id,
        "mask_path": c.data.get("mask_path", ""),
        "scene_caption": spec["base_caption"],
        "instance_caption": scene.data["instances"].get(obj_for.get(
            foil.target_object.lower(), ""), ""),
        "target_object": foil.target_object,
        "base_attribute": foil.base_attribute,
        "foil_attribute": foil.foil_attribute,
        "setting": scene.data["params"].get("setting", ""),
        "pixel_drift": verdict.get("pixel_drift"),
        "count_check": verdict.get("count_check", "not checked"),
        "qc_status": "pending",
    } for tier in TIERS]


def result_for(ctx: Context, instances: list[Candidate], config: ComposetConfig):
    rows = [row for c in instances for row in _rows(c)]
    scenes = sorted({c.data["scene"].id for c in instances})
    return ConstructResult(
        name="composet-construct", kind="pair", rows=rows, root=ctx.out,
        description=("CompoSET-style same-scene single-edit pairs built by `foilbench construct "
                     "composet` (App. B steps 1-7 plus automatic verification); three caption "
                     "tiers per foil; `mask_path` is the edit region; `qc_status` is pending "
                     "until `foilbench review`."),
        extras={"scenes": scenes, "n_foils": len(instances),
                "long_tier_token_counter": ctx.notes.get("long_tier_token_counter"),
                "scene_floor": ctx.notes.get("scene_floor"),
                "caption_qc": ctx.notes.get("caption_qc"),
                "bias_variants": bias_variants_note(config.bias_variants),
                "config": json.loads(json.dumps(config.options(), default=str))})
