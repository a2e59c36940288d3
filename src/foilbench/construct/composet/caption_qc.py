"""``composet`` caption QC: the base caption is rewritten to what the rendered base image shows.

CompoSET App. B.4, Phase 1: "The base caption is reviewed before any foil is generated;
ambiguous anchors and missing-object captions are corrected at this point." The released
generation scripts (github laure-delisle/CompoSET, ``data_generation``) automate a first pass
of this between the base render and the foil captions: a vision-language model gets the base
image and the caption it was rendered from, lists each disagreement as one edit, and returns the
corrected caption, which replaces the original ("the image is the ground truth from this point
on"). Ours does the same with our own prompt (``prompts/composet.caption_qc.txt``) and JSON
reply: the corrected ``base_caption``, ``details`` and ``objects`` replace the spec's before
any foil is enumerated. A correction is logged as a *rewrite* (the scene passes, with the
edits and the before/after captions), never as a drop; an unreadable reply or a correction
that names no object drops the scene.

Which model: the ``--text`` backend when it ``accepts_images`` (API models; the offline
``template`` backend answers from the world scene the renderer drew, so it is deterministic and
rewrites only where the spec and the drawn scene disagree). A text-only backend (``hf-lm:``)
cannot see the image: the stage then passes every scene unchecked and says so in the log.
"""

from __future__ import annotations

from foilbench.construct.composet.spec import spec_text
from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.replies import ReplyError, parse_json, require
from foilbench.construct.engine.stages import Context, answered

STAGE = "caption QC vs base image"
REPLACED = ("base_caption", "details", "objects")


def corrected_spec(spec: dict, reply: dict) -> dict:
    """``spec`` with the reply's base caption, details and objects (the world scene kept)."""
    got = require(reply, {"edits": list, "base_caption": str, "objects": list}, "caption QC")
    objects = [require(o, {"name": str}, "caption QC object") for o in got["objects"]]
    if not objects:
        raise ReplyError("caption QC: the corrected specification names no object")
    details = got.get("details", spec.get("details") or {})
    if not isinstance(details, dict):
        raise ReplyError("caption QC: 'details' must be an object of sentences")
    return {**spec, "base_caption": got["base_caption"], "details": details,
            "objects": objects}


def stage_caption_qc(ctx: Context, scenes: list[Candidate]) -> list[Candidate]:
    """The QC step (module docstring); counts go to ``ctx.notes["caption_qc"]``."""
    counts = {"rewritten": 0, "unchanged": 0, "not_checked": 0}
    ctx.notes["caption_qc"] = counts
    with ctx.log.stage(STAGE, scenes) as st:
        if not getattr(ctx.backend("text"), "accepts_images", False):
            for s in scenes:
                counts["not_checked"] += 1
                st.passed(s, verdicts={"caption_qc": "not checked (the text backend reads no "
                                                     "images)"})
            return st.survivors
        jobs = [(s.id, (ctx.text_request(
            "composet.caption_qc", {"kind": "composet.caption_qc", "spec": s.data["spec"]},
            seed=s.data["params"]["seed"], max_tokens=2000, spec=spec_text(s.data["spec"]),
            images=(s.data["base_image"],)),)) for s in scenes]
        results = ctx.call_many(st, "text", jobs)
        for s, res in answered(st, scenes, results):
            before = s.data["spec"]
            try:
                reply = parse_json(res.value)
                after = corrected_spec(before, reply)
            except ReplyError as e:
                st.drop(s, "unreadable reply", error=str(e))
                continue
            changed = any(after.get(k) != before.get(k) for k in REPLACED)
            verdict = "rewritten" if changed else "unchanged"
            counts[verdict] += 1
            s.data["spec"] = after
            fields = {"verdicts": {"caption_qc": verdict}, "outputs": {"edits": reply["edits"]}}
            if changed:
                fields["outputs"].update(before={k: before.get(k) for k in REPLACED},
                                         after={k: after[k] for k in REPLACED})
            st.passed(s, backend=ctx.backend("text").fingerprint, **res.describe(),
                      inputs={"base_image_shown": True, "image": s.data["base_path"]},
                      **fields)
    return st.survivors
