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
rewrites only where the spec and the drawn scene disagree). Else a ``--vqa`` backend
(``hf-vlm:DIR``, ``api:...``, ``world``), which answers constrained questions and cannot write:
it is asked how many of each spec object the image holds (choices 0-9), objects it does not
find are removed from ``objects`` and their detail sentences (a *presence* or *cardinality*
rewrite), a count above the spec's is logged as an edit not applied (no words for the extra
instances), and the base caption sentence is kept as written (we choose so; a free-text
rewrite needs a model that writes). With neither, the stage passes every scene unchecked and
says so in the log.
"""

from __future__ import annotations

from foilbench.construct.composet.plan import too_long
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


def stage_caption_qc(ctx: Context, scenes: list[Candidate],
                     most_names: int | None = None) -> list[Candidate]:
    """The QC step (module docstring); counts go to ``ctx.notes["caption_qc"]``. With a VQA
    backend at most ``most_names`` distinct object names a scene are counted, in the spec's
    order (the plan's count, :func:`.plan.qc_names`; the others are kept as stated and
    listed as not counted)."""
    counts = {"rewritten": 0, "unchanged": 0, "not_checked": 0}
    ctx.notes["caption_qc"] = counts
    with ctx.log.stage(STAGE, scenes) as st:
        if not getattr(ctx.backend("text"), "accepts_images", False) and ctx.has("vqa"):
            return _vqa_qc(ctx, st, scenes, counts, most_names)
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
            if (why := too_long(spec=after)) is not None:
                st.drop(s, f"caption QC: rewritten {why}")
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


COUNT_CHOICES = tuple(str(n) for n in range(10))


def count_rewrite(spec: dict, found: dict[str, int]) -> tuple[dict, list[dict]]:
    """``spec`` without the instances the image does not hold (``found``: name -> count seen;
    the first ones of a name are kept), and one edit per disagreement."""
    want: dict[str, int] = {}
    for o in spec["objects"]:
        want[str(o["name"]).lower()] = want.get(str(o["name"]).lower(), 0) + 1
    edits, seen, kept, removed = [], {}, [], set()
    for name, n in want.items():
        got = found[name]
        if got != n:
            edits.append({"where": "objects", "field": "presence" if got == 0 else "cardinality",
                          "target": name, "from": str(n), "to": str(got),
                          "applied": got < n})
    for o in spec["objects"]:
        name = str(o["name"]).lower()
        seen[name] = seen.get(name, 0) + 1
        if seen[name] <= found[name]:
            kept.append(o)
        else:
            removed.add(str(o.get("id", "")))
    details = {k: v for k, v in (spec.get("details") or {}).items() if k not in removed}
    return {**spec, "objects": kept, "details": details}, edits


def counted_names(spec: dict, most: int | None) -> tuple[list[str], list[str]]:
    """(the distinct object names the VQA QC counts, in the spec's order; the rest, not
    counted): at most ``most`` (issue 40: a stage asks no more than the plan counts).

    >>> counted_names({"objects": [{"name": "Mug"}, {"name": "cup"}, {"name": "mug"}]}, 1)
    (['mug'], ['cup'])
    """
    names = list(dict.fromkeys(str(o["name"]).lower() for o in spec["objects"]))
    cut = len(names) if most is None else max(int(most), 0)
    return names[:cut], names[cut:]


def _vqa_qc(ctx: Context, st, scenes: list[Candidate], counts: dict,
            most_names: int | None = None) -> list[Candidate]:
    from foilbench.construct.backends.world_questions import count_question

    jobs = []
    for s in scenes:
        for name in counted_names(s.data["spec"], most_names)[0]:
            jobs.append((f"{s.id}/{name}", (s.data["base_image"], count_question(name),
                                            COUNT_CHOICES)))
    results = ctx.call_many(st, "vqa", jobs)
    for s in scenes:
        before = s.data["spec"]
        names, unchecked = counted_names(before, most_names)
        failed = next((results[f"{s.id}/{n}"] for n in names
                       if not hasattr(results[f"{s.id}/{n}"], "value")), None)
        if failed is not None:
            st.drop(s, "call failed", error=failed.error, attempts=failed.attempts)
            continue
        found = {n: int(results[f"{s.id}/{n}"].value) for n in names}
        stated = {n: sum(1 for o in before["objects"] if str(o["name"]).lower() == n)
                  for n in unchecked}  # not counted: kept as the spec states them
        after, edits = count_rewrite(before, {**found, **stated})
        if not after["objects"]:
            st.drop(s, "caption QC: no object of the spec is in the image",
                    verdicts={"counts_found": found})
            continue
        verdict = "rewritten" if after != before else "unchanged"
        counts[verdict] += 1
        s.data["spec"] = after
        outputs = {"edits": edits, "counts_found": found,
                   **({"not_counted": unchecked} if unchecked else {})}
        if after != before:
            outputs.update(before={k: before.get(k) for k in REPLACED},
                           after={k: after[k] for k in REPLACED})
        st.passed(s, backend=ctx.backend("vqa").fingerprint,
                  inputs={"base_image_shown": True, "image": s.data["base_path"],
                          "via": "vqa counts"},
                  verdicts={"caption_qc": verdict}, outputs=outputs)
    return st.survivors
