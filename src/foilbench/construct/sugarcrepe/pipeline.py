"""The ``sugarcrepe`` pipeline: hard negatives of seven types for a caption set (SugarCrepe
§4 and App. D.2), then the blind audit and Algorithm 1 refinement.

SugarCrepe App. D.2, Replace: "we devise a three-step workflow ...: (1) We prompt ChatGPT in
locating the desired atomic concepts (e.g., objects) in the sentence; (2) We prompt ChatGPT to
generate a new concept to replace a randomly selected old concept; (3) We let ChatGPT compose a
new sentence by replacing the old concept with the new one. For steps (1) and (3), we prompt
ChatGPT with a temperature of 0.0 ... For step (2), however, we diversify the outputs by
prompting ChatGPT with a higher temperature of 1.5." Swap: "we simply prompt ChatGPT once with
a temperature of 0.0 ... our prompt first queries ChatGPT whether it is possible to swap two
atomic concepts in the input sentence ... Only if the answer is yes, will ChatGPT then proceed
to identify two swappable concepts and compose the corresponding new sentence". Add: "a
three-step prompting procedure ... we prompt ChatGPT to add the generated new concept to the
original caption, instead of using it to replace an old concept."

Then §4.1 Stage 2, "Filtering false negatives" by human validation, and Stage 3, adversarial
refinement (Alg. 1), in the paper's order: build with ``--no-refine``, validate the negatives in
``foilbench review OUT`` (image, positive, negative; :mod:`foilbench.review.choice`), export
them (``foilbench review export OUT --out VALIDATED``), then ``construct sugarcrepe VALIDATED``:
given a folder exported by the validation instead of a caption file, the pipeline makes no
call and runs Algorithm 1 on the validated items (``validated = True``), and its manifest
reports the discard rates per type of both stages (``qc_report``). Run on a caption file with
refinement on, Algorithm 1 runs on unvalidated items (``validated = False``; the manifest says
the order is not the paper's). Refinement uses the cross-fitted blind scorers
(:mod:`foilbench.audit.blind`, ``length`` and ``ngram`` by default, labelled as foilbench's
offline stand-ins) and :func:`foilbench.audit.refinement.refine` per type.

What Add-Att locates in step (1) the paper leaves open; we locate the objects the new
attribute can attach to. The "randomly selected old concept" is drawn with a seed per
candidate. Prompts are ours (``prompts/sugarcrepe.*.txt``), with our own demonstrations.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from foilbench.construct.engine.export import ConstructResult
from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.replies import (
    ReplyError,
    clean_sentence,
    is_ascii,
    parse_json,
    require,
)
from foilbench.construct.engine.stages import ConstructError, Context, Failure
from foilbench.construct.sugarcrepe.plan import (
    CONCEPT_BYTES,
    answer_tokens,
    nbytes,
    sugarcrepe_plan,
)
from foilbench.construct.sugarcrepe.spec import (
    TYPES,
    SugarcrepeConfig,
    prompt_name,
    read_captions,
)
from foilbench.world.token_budget import PAST_CONTEXT, same_in_context

ROLES = {"text": True}


def plan(config: SugarcrepeConfig) -> dict[str, dict[str, int]]:
    """The most calls per stage, each bounded by its own request (:mod:`.plan`)."""
    return sugarcrepe_plan(config)


def _dropped_call(st, c: Candidate, res) -> bool:
    if isinstance(res, Failure):
        st.drop(c, "call failed", error=res.error, attempts=res.attempts)
        return True
    return False


def _reply(st, c: Candidate, res, fields: dict) -> dict | None:
    if _dropped_call(st, c, res):
        return None
    try:
        return require(parse_json(res.value), fields, st.name)
    except ReplyError as e:
        st.drop(c, "unreadable reply", error=str(e))
        return None


def _task(c: Candidate, step: str, **extra) -> dict:
    form, located, generated = TYPES[c.data["type"]]
    return {"kind": f"sugarcrepe.{step}", "caption": c.data["caption"],
            "concept": generated if step in ("new_concept", "compose_replace", "compose_add")
            else located, "mode": form, **extra}


def _ask_caption_concept(ctx: Context, st, cands: list[Candidate], step: str) -> dict:
    """The locate and swap steps (both T=0) send one prompt per candidate with the same
    inputs: the caption and the kind of concept its type edits."""
    def budget(caption: str) -> int:
        return answer_tokens(step, nbytes(caption), ascii=is_ascii(caption))

    jobs = [(c.id, (ctx.text_request(prompt_name(step, c.data["type"]), _task(c, step),
                                     caption=c.data["caption"],
                                     concept=TYPES[c.data["type"]][1],
                                     max_tokens=budget(c.data["caption"])),))
            for c in cands]
    return ctx.call_many(st, "text", jobs)


def stage_locate(ctx: Context, cands: list[Candidate]) -> list[Candidate]:
    with ctx.log.stage("locate concept (T=0)", cands, unit="caption x type") as st:
        results = _ask_caption_concept(ctx, st, cands, "locate")
        for c in cands:
            got = _reply(st, c, results[c.id], {"concepts": list})
            if got is None:
                continue
            # a concept is copied from the caption: one longer than it is not (and would
            # make the next prompts longer than the plan bounds)
            found = [str(x).strip() for x in got["concepts"]
                     if str(x).strip() and nbytes(str(x).strip()) <= nbytes(c.data["caption"])]
            if not found:
                st.drop(c, f"no {TYPES[c.data['type']][1]} in the caption")
                continue
            rng = np.random.default_rng([c.data["seed"], 1])
            c.data["old"] = found[int(rng.integers(len(found)))]
            st.passed(c, **results[c.id].describe(), outputs={"concepts": found,
                                                              "chosen": c.data["old"]})
    return st.survivors


def stage_new_concept(ctx: Context, cands: list[Candidate]) -> list[Candidate]:
    with ctx.log.stage("new concept (T=1.5)", cands, unit="caption x type") as st:
        jobs = [(c.id, (ctx.text_request(
            prompt_name("new_concept", c.data["type"]),
            _task(c, "new_concept", old=c.data["old"]), seed=c.data["seed"],
            caption=c.data["caption"], old=c.data["old"],
            max_tokens=answer_tokens("new_concept", nbytes(c.data["caption"]),
                                     ascii=is_ascii(c.data["caption"]))),))
            for c in cands]
        results = ctx.call_many(st, "text", jobs)
        for c in cands:
            got = _reply(st, c, results[c.id], {"new": str})
            if got is None:
                continue
            new = clean_sentence(got["new"]).lower()
            if not new or new == c.data["old"].lower() or new in c.data["caption"].lower():
                st.drop(c, "new concept empty or already in the caption", outputs={"new": new})
                continue
            if nbytes(new) > CONCEPT_BYTES:
                st.drop(c, f"new concept longer than {CONCEPT_BYTES} bytes",
                        outputs={"new": new[:CONCEPT_BYTES]})
                continue
            c.data["new"] = new
            st.passed(c, **results[c.id].describe(), outputs={"new": new})
    return st.survivors


def stage_compose(ctx: Context, cands: list[Candidate]) -> list[Candidate]:
    with ctx.log.stage("compose (T=0)", cands, unit="caption x type") as st:
        jobs = []
        for c in cands:
            step = "compose_replace" if TYPES[c.data["type"]][0] == "replace" else "compose_add"
            jobs.append((c.id, (ctx.text_request(
                f"sugarcrepe.{step}", _task(c, step, old=c.data["old"], new=c.data["new"]),
                caption=c.data["caption"], old=c.data["old"], new=c.data["new"],
                concept=TYPES[c.data["type"]][2],
                max_tokens=answer_tokens("compose", nbytes(c.data["caption"]),
                                         nbytes(c.data["new"]), is_ascii(c.data["caption"]),
                                         is_ascii(c.data["new"]))),)))
        results = ctx.call_many(st, "text", jobs)
        for c in cands:
            got = _reply(st, c, results[c.id], {"caption": str})
            if got is not None:
                _accept_negative(st, c, clean_sentence(got["caption"]), results[c.id],
                                 must_contain=c.data["new"])
    return st.survivors


def _accept_negative(st, c: Candidate, negative: str, res, must_contain: str = "") -> None:
    if not negative or negative.lower().rstrip(".") == c.data["caption"].lower().rstrip("."):
        st.drop(c, "negative equals the positive", outputs={"negative": negative})
    elif must_contain and must_contain.lower() not in negative.lower():
        st.drop(c, "new concept missing from the negative", outputs={"negative": negative})
    elif same_in_context(c.data["caption"], negative) is not False:
        st.drop(c, PAST_CONTEXT, outputs={"negative": negative})
    else:
        c.data["negative"] = negative
        st.passed(c, **res.describe(), outputs={"negative": negative})


def stage_swap(ctx: Context, cands: list[Candidate]) -> list[Candidate]:
    with ctx.log.stage("swap, one step (T=0)", cands, unit="caption x type") as st:
        results = _ask_caption_concept(ctx, st, cands, "swap")
        for c in cands:
            got = _reply(st, c, results[c.id], {"possible": bool})
            if got is None:
                continue
            if not got["possible"]:
                st.drop(c, "no swappable pair (the model says no)")
                continue
            c.data["old"] = " <-> ".join(str(x) for x in got.get("concepts") or [])
            c.data["new"] = ""
            _accept_negative(st, c, clean_sentence(got.get("caption", "")), results[c.id])
    return st.survivors


def _from_validated(ctx: Context, config: SugarcrepeConfig) -> tuple[list[Candidate], dict]:
    """Candidates from a folder exported by the negative validation (all ``validated``)."""
    from foilbench.data.format import load_benchmark

    bench = load_benchmark(config.captions)
    items = bench.items
    human = bench.manifest.extras.get("human_validation")
    if not bench.item_kind.has_caption_candidates or human is None or "validated" not in items.columns \
            or not items["validated"].all():
        raise ConstructError(f"{config.captions}: not a validated negative set; export one "
                             "with `foilbench review export DIR --out VALIDATED` after "
                             "validating the negatives in `foilbench review DIR`")
    cands = []
    for k, row in enumerate(items.itertuples(index=False)):
        t = str(row.edit_type)
        if t not in TYPES:
            raise ConstructError(f"{config.captions}: item {row.item_id!r} has edit_type "
                                 f"{t!r}; expected one of {', '.join(TYPES)}")
        c = Candidate(str(row.item_id), "negative", {
            "image": str(row.image), "caption": str(row.captions[0]),
            "negative": str(row.captions[1]), "type": t, "seed": config.seed * 1_000_003 + k,
            "old": str(getattr(row, "old_concept", "")), "new": str(getattr(row, "new_concept",
                                                                              ""))})
        ctx.log.created(c, stage="validated negatives", inputs={"caption": c.data["caption"],
                                                               "negative": c.data["negative"]})
        cands.append(c)
    return cands, human


def _qc_report(human: dict | None, refinement: dict | None) -> dict:
    """Discard rates per type: human validation (Stage 2), then Algorithm 1 (Stage 3)."""
    out: dict = {}
    by_type = (refinement or {}).get("by_type", {})
    for t in TYPES:
        entry: dict = {}
        if human is not None and t in human.get("discard_rate_by_type", {}):
            entry["human_discard_rate"] = human["discard_rate_by_type"][t]
        if t in by_type:
            r = by_type[t]
            entry.update(refinement_in=r["n"], refinement_kept=r["kept"],
                         refinement_discard_rate=1 - r["kept"] / r["n"] if r["n"] else None,
                         grid=r["grid"])
        if entry:
            out[t] = entry
    return out


def build(ctx: Context, config: SugarcrepeConfig) -> ConstructResult:
    from foilbench.construct.sugarcrepe.refine import stage_refine

    unknown = [t for t in config.types if t not in TYPES]
    if unknown:
        raise ConstructError(f"unknown SugarCrepe type(s) {unknown}; possible: {', '.join(TYPES)}")
    human = None
    if Path(config.captions).is_dir():
        done, human = _from_validated(ctx, config)
        images = Path(config.captions)
    else:
        images = Path(config.images) if config.images else Path(config.captions).parent
        done = _generate(ctx, config, images)
    if config.refine:
        done = stage_refine(ctx, done, config)
    ctx.log.keep_all(done, stage="export")
    validated = human is not None
    rows = [{"item_id": c.id, "image": c.data["image"],
             "captions": [c.data["caption"], c.data["negative"]],
             "edit_type": c.data["type"], "operation": TYPES[c.data["type"]][0],
             "category": TYPES[c.data["type"]][2], "scene_id": c.data["image"],
             "old_concept": c.data["old"], "new_concept": c.data["new"],
             "validated": validated} for c in done]
    order = ("generation, human validation (§4.1 Stage 2), then Algorithm 1 (Stage 3): the "
             "paper's order" if validated else
             "generation then Algorithm 1 on unvalidated items (not the paper's order: build "
             "with --no-refine, validate in `foilbench review`, then construct on the export)"
             if config.refine else "generation only; validate in `foilbench review OUT`")
    return ConstructResult(
        name="sugarcrepe-construct", kind="choice", rows=rows, root=images,
        description=("SugarCrepe-style hard negatives (App. D.2 procedure) for a user caption "
                     "set; " + order + "."),
        extras={"human_validation": human or "not done (SugarCrepe §4.1 Stage 2)",
                "order": order, "refinement": ctx.notes.get("refinement"),
                "qc_report": _qc_report(human, ctx.notes.get("refinement"))})


def _generate(ctx: Context, config: SugarcrepeConfig, images: Path) -> list[Candidate]:
    """Stage 1: the App. D.2 procedure over the caption file, in caption order."""
    cands: list[Candidate] = []
    for k, rec in enumerate(read_captions(config)):
        if not (images / rec["image"]).is_file():
            raise ConstructError(f"image {rec['image']} of caption {rec['key']} not found "
                                 f"under {images} (give --images DIR)")
        for t in config.types:
            c = Candidate(f"{rec['key']}/{t}", "negative",
                          {**rec, "type": t, "seed": config.seed * 1_000_003 + k * 7
                           + list(TYPES).index(t)})
            ctx.log.created(c, stage="captions", inputs={"caption": rec["caption"],
                                                           "image": rec["image"], "type": t})
            cands.append(c)
    three_step = [c for c in cands if TYPES[c.data["type"]][0] != "swap"]
    swaps = [c for c in cands if TYPES[c.data["type"]][0] == "swap"]
    done = stage_compose(ctx, stage_new_concept(ctx, stage_locate(ctx, three_step)))
    done += stage_swap(ctx, swaps)
    order = {c.id: k for k, c in enumerate(cands)}
    done.sort(key=lambda c: order[c.id])
    return done
