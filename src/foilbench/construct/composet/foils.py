"""``composet`` steps 4-6: foil enumeration, the self-check pass, and the foil render.

Step 4 (CompoSET App. B): "Given the rendered base image and the 16-type edit taxonomy, the
captioning model emits a set of ~22 plausible single-edit foils per scene." Each scene fans out
into one candidate per proposal, so every proposal is accounted for from here on.

Step 5: "A second pass over the candidate foils drops cases where the edit cannot be applied
to the scene, the target object is ambiguous, or the attribute change is implausible. Failed
candidates are removed before any image is generated." One call per scene judges all of its
proposals; a verdict may also correct the tuple (the released pipeline's verification step
returns corrected captions, and so does ours).

Step 6: "The image model receives the base image plus base/foil captions and is instructed to
change only the targeted edit while preserving everything else. The aggressive
object-preservation language is the primary lever". Our instruction is
``prompts/composet.foil_edit.txt``. Inpainting editors get the target's detector boxes as the
region they may repaint; the world editor gets the exact structured edit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from foilbench.construct.backends.base import EditRequest
from foilbench.construct.composet.plan import (
    FOIL_BYTES,
    check_tokens,
    foil_tokens,
    instances_text,
)
from foilbench.construct.composet.spec import (
    base_image_input,
    spec_labels,
    spec_text,
    write_png,
)
from foilbench.construct.composet.taxonomy import Foil, edited_labels, taxonomy_text
from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.replies import ReplyError, parse_json, require
from foilbench.construct.engine.stages import Context, answered, drop_failed

ISSUES = ("not_applicable", "ambiguous", "implausible", "duplicate")
REGION_MARGIN = 0.04  # inpainting region: target boxes grown by this share of the image side


def stage_enumerate(ctx: Context, scenes: list[Candidate], n_foils: int,
                    bias_variants: bool = False) -> list[Candidate]:
    """Step 4; with ``bias_variants`` the ``composet.foils.bias`` prompt proposes too and the
    scene's proposals are pooled for the self-check (:mod:`.variants`)."""
    from foilbench.construct.composet.variants import MAIN, variant_seed, variants

    with ctx.log.stage("foil enumeration (step 4)", scenes) as st:
        results: dict[str, dict] = {}
        for prompt, tag in variants("composet.foils", bias_variants):
            jobs = []
            for s in scenes:
                seed = variant_seed(s.data["params"]["seed"], tag)
                jobs.append((s.id, (ctx.text_request(
                    prompt, {"kind": "composet.foils", "spec": s.data["spec"],
                             "n_foils": n_foils, "seed": seed},
                    seed=seed, max_tokens=foil_tokens(n_foils), spec=spec_text(s.data["spec"]),
                    instances=instances_text(s.data["instances"]),
                    taxonomy=taxonomy_text(), n_foils=n_foils, **base_image_input(ctx, s)),)))
            results[tag] = ctx.call_many(st, "text", jobs)
        shown = bool(base_image_input(ctx, scenes[0])["images"]) if scenes else False
        for s, res in answered(st, scenes, results[MAIN]):
            try:
                proposals = [(MAIN, p) for p in require(parse_json(res.value), {"foils": list},
                                                        "foils")["foils"]]
                for tag, more in results.items():
                    if tag != MAIN and not _failed(more[s.id]):
                        proposals += [(tag, p) for p in require(
                            parse_json(more[s.id].value), {"foils": list}, "foils")["foils"]]
            except ReplyError as e:
                st.drop(s, "unreadable reply", error=str(e))
                continue
            if not proposals:
                st.drop(s, "no foil proposed")
                continue
            proposals, cut = keep_asked(proposals, n_foils)
            kids = [Candidate(f"{s.id}-c{k:02d}", "instance",
                              {"scene": s, "proposal": p, "index": k, "variant": tag})
                    for k, (tag, p) in enumerate(proposals)]
            st.expand(s, kids, backend=ctx.backend("text").fingerprint, **res.describe(),
                      inputs={"base_image_shown": shown, "image": s.data["base_path"],
                              "foils_asked": n_foils},
                      outputs={"proposals_by_variant": {t: sum(1 for x, _ in proposals
                                                               if x == t) for t in results},
                               "truncated_by_variant": cut})
    return st.children


def keep_asked(proposals: list[tuple[str, dict]], n_foils: int
               ) -> tuple[list[tuple[str, dict]], dict[str, int]]:
    """At most ``n_foils`` proposals per prompt variant, in the reply's order, and how many
    were cut per variant (issue 40: a model that proposes more than asked made every later
    stage, and the bill, grow past the plan; the cut ones are logged with the scene).

    >>> keep_asked([("main", {"a": 1}), ("main", {"a": 2}), ("bias", {"a": 3})], 1)
    ([('main', {'a': 1}), ('bias', {'a': 3})], {'main': 1})
    """
    kept: list[tuple[str, dict]] = []
    seen: dict[str, int] = {}
    cut: dict[str, int] = {}
    for tag, p in proposals:
        seen[tag] = seen.get(tag, 0) + 1
        if seen[tag] <= n_foils:
            kept.append((tag, p))
        else:
            cut[tag] = cut.get(tag, 0) + 1
    return kept, cut


def stage_self_check(ctx: Context, instances: list[Candidate]) -> list[Candidate]:
    with ctx.log.stage("self-check (step 5)", instances) as st:
        by_scene: dict[str, list[Candidate]] = {}
        for c in instances:
            try:
                c.data["foil"] = Foil.from_reply(c.data["proposal"], f"proposal {c.id}")
            except ReplyError as e:
                st.drop(c, "malformed proposal", error=str(e))
                continue
            line = listing_line(c.data["index"], c.data["foil"].to_dict())
            if len(line.encode("utf-8")) > FOIL_BYTES:  # the plan bounds the listing by it
                st.drop(c, f"proposal longer than {FOIL_BYTES} bytes", proposal=line[:200])
                continue
            by_scene.setdefault(c.data["scene"].id, []).append(c)
        jobs = []
        for sid, cands in by_scene.items():
            spec = cands[0].data["scene"].data["spec"]
            foils = [c.data["foil"].to_dict() for c in cands]
            listing = "\n".join(listing_line(k, f) for k, f in enumerate(foils))
            jobs.append((sid, (ctx.text_request(
                "composet.self_check", {"kind": "composet.self_check", "spec": spec,
                                        "foils": foils},
                max_tokens=check_tokens(len(foils)), spec=spec_text(spec), foils=listing),)))
        results = ctx.call_many(st, "text", jobs)
        for sid, cands in by_scene.items():
            res = results[sid]
            if _failed(res):
                for c in cands:
                    drop_failed(st, c, res)
                continue
            try:
                verdicts = {int(v["index"]): v for v in require(
                    parse_json(res.value), {"verdicts": list}, "self-check")["verdicts"]}
            except (ReplyError, KeyError, TypeError, ValueError) as e:
                for c in cands:
                    st.drop(c, "unreadable reply", error=str(e))
                continue
            for k, c in enumerate(cands):
                _apply_verdict(st, c, verdicts.get(k), res)
    return st.survivors


def listing_line(k: int, f: dict) -> str:
    """Proposal ``f``'s line in the self-check's listing, numbered ``k``."""
    return (f"{k}. {f['edit_type']}: {f['target_object']} {f['base_attribute']} -> "
            f"{f['foil_attribute']} | base: {f['base_caption']} | foil: {f['foil_caption']}")


def _failed(res) -> bool:
    from foilbench.construct.engine.stages import Failure

    return isinstance(res, Failure)


def _apply_verdict(st, c: Candidate, verdict: dict | None, res) -> None:
    if verdict is None:
        st.drop(c, "self-check: no verdict")
        return
    if not verdict.get("keep"):
        issue = str(verdict.get("issue") or "other")
        issue = issue if issue in ISSUES else "other"
        st.drop(c, f"self-check: {issue}", detail=str(verdict.get("reason", ""))[:300],
                proposal=c.data["foil"].to_dict())
        return
    fixes = {k: str(verdict[k]) for k in ("target_object", "base_attribute", "foil_attribute",
                                          "base_caption", "foil_caption") if verdict.get(k)}
    foil = replace(c.data["foil"], **fixes)
    if len(listing_line(c.data["index"], foil.to_dict()).encode("utf-8")) > FOIL_BYTES:
        st.drop(c, f"self-check: corrected proposal longer than {FOIL_BYTES} bytes")
        return
    if foil.base_caption.lower() == foil.foil_caption.lower():
        st.drop(c, "self-check: ambiguous", detail="corrected captions are equal")
        return
    c.data["foil"] = foil
    c.data["operation"] = str(verdict.get("operation") or foil.operation)
    st.passed(c, **res.describe(), outputs=foil.to_dict())


def _world_edit(c: Candidate):
    from foilbench.construct.composet.template import realise_world_edit, world_scene

    return realise_world_edit(world_scene(c.data["scene"].data["spec"]), c.data["foil"].world)


def _regions(ctx: Context, cands: list[Candidate], threshold: float) -> dict[str, np.ndarray]:
    """Per candidate, the boxes of the objects its edit touches (:func:`edited_labels`) in the
    base image, grown by REGION_MARGIN: the region an inpainting editor may repaint."""
    if not ctx.has("detector"):
        return {}
    from foilbench.construct.validators.image_checks import boxes_mask

    def labels(c: Candidate) -> list[str]:
        return sorted(edited_labels(c.data["foil"], spec_labels(c.data["scene"].data["spec"])))

    jobs = [(c.id, (c.data["scene"].data["base_image"], labels(c), threshold)) for c in cands]
    results = ctx.call_many("foil render: edit region", "detector", jobs)
    out = {}
    for c in cands:
        res = results[c.id]
        if _failed(res):
            continue
        size = c.data["scene"].data["base_image"].size[0]
        m = int(REGION_MARGIN * size)
        boxes = [(d.box[0] - m, d.box[1] - m, d.box[2] + m, d.box[3] + m)
                 for d in res.value if d.score >= threshold and d.label.lower() in labels(c)]
        if boxes:
            out[c.id] = boxes_mask((size, size), boxes)
    return out


def stage_foil_render(ctx: Context, instances: list[Candidate], config) -> list[Candidate]:
    structured = getattr(ctx.backend("edit"), "reads_structure", False)
    with ctx.log.stage("foil render (step 6)", instances) as st:
        regions = {} if structured else _regions(ctx, instances, config.detector_threshold)
        jobs = []
        for c in instances:
            foil = c.data["foil"]
            base = c.data["scene"].data["base_image"]
            instruction = ctx.render_prompt(
                "composet.foil_edit", base_caption=foil.base_caption,
                foil_caption=foil.foil_caption, edit_type=foil.edit_type,
                target=foil.target_object)
            if structured:
                if foil.world is None:
                    st.drop(c, "world editor: no structured edit")
                    continue
                req = EditRequest(base, instruction, seed=c.data["index"], edit=_world_edit(c))
            else:
                req = EditRequest(base, instruction, seed=c.data["index"],
                                  mask=regions.get(c.id))
            jobs.append((c.id, (req,)))
        results = ctx.call_many(st, "edit", jobs)
        for c, res in answered(st, [c for c in instances if c.id in results], results):
            sid = c.data["scene"].id
            c.data["foil_image"] = res.value.image.convert("RGB")
            c.data["edit_mask"] = res.value.mask
            c.data["foil_path"] = write_png(ctx, f"images/{sid}/{c.id}.png", c.data["foil_image"])
            st.passed(c, backend=ctx.backend("edit").fingerprint, **res.describe(),
                      inputs={"instruction_prompt": "composet.foil_edit"},
                      outputs={"image": c.data["foil_path"],
                               "exact_mask": res.value.mask is not None})
    return st.survivors


