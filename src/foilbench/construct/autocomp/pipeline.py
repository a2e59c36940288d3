"""The ``autocomp`` pipeline: Auto-Comp §3, from concepts to paired Minimal/Contextual sets.

Auto-Comp §3: "A concept C is formally defined as a tuple C = (O_C, A_C) ... for attribute
binding, A_C contains N attributes with a one-to-one mapping to O_C; for Position Binding and
Relative Size, it contains N-1 binary relations that chain the objects in sequence."

- Stage 1, captions. Minimal: "a template-based approach ... adding the suffix 'on a white
  background'". Contextual: an LLM rewrite, then "an automated semantic preservation check ...
  If the LLM's output fails to match these patterns for all required bindings after several
  retries, the entire concept is discarded" (:mod:`.autocomp_checks`; retries use new seeds).
- Stage 2, per track ("the Minimal and Contextual tracks are processed independently"):
  text-to-image, then "Object Presence and Count Check ... passes only if the detected objects
  perfectly match the concept's objects in both class and cardinality"; for Minimal images the
  "Background Check ... to verify the background is uniformly white" (App. A.6: grayscale 190,
  70% of non-object pixels); then the "Semantic Correctness Check": direct questions answered
  by a VQA model constrained to the vocabularies, all of which must come back right.
- Stage 3, negatives (:mod:`foilbench.construct.autocomp.negatives`): Swap (N! - 1) and
  Confusion (N^(2N) - 1 or N^N (N-1)^(N-1) - 1) arrangements, worded by substituting the
  concept's words at the spans the preservation check found, so a Contextual negative differs
  from its positive only in the swapped elements; duplicate texts removed.
- "Paired Comparison Set ... the intersection of these two sets based on their source
  concepts": column ``paired``. Survival per stage and track is the Table 3 analogue.

Settings of App. A.6: "We used nucleus sampling with temperature=0.7 and top_p=0.9. For all
tasks, max_new_tokens was set to 150" (temperature is the prompt's, top_p and max_new_tokens
the Contextual request's: ``hf-lm:`` samples with them, OpenAI chat models and Gemini get
``top_p``, Anthropic and OpenAI reasoning models refuse it and sample at their default,
:func:`foilbench.models.api.wire.sends_top_p`); "box_threshold=0.4
and text_threshold=0.3" (a detector backend whose text threshold differs is refused unless
``text_threshold`` is set to accept it). The Contextual prompt is App. A.2's system prompt as
printed, plain-text reply (``contextual_prompt="paper"``; relational tasks use the same prompt
with "relations" for "colors"); foilbench's JSON-reply prompt stays as ``"json"``. Retries
change the seed. ``vocab="paper"`` draws relations from §4's words ("above", "under", "to the
left of", "to the right of"; "larger than", "smaller than", "bigger than").
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from foilbench.construct.autocomp.checks import preserved_spans
from foilbench.construct.autocomp.negatives import TASKS, Concept, caption
from foilbench.construct.autocomp.vocab import (
    canonical_relation,
    default_vocab,
    paper_vocab,
    task_words,
)
from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.replies import ReplyError, clean_sentence, parse_json, require
from foilbench.construct.engine.stages import ConstructError, Context, Failure

ROLES = {"text": True, "image": True, "detector": True, "vqa": True}
MINIMAL_SUFFIX = " on a white background"
TRACKS = ("minimal", "contextual")
SEED_STREAM = 0xA5C1


@dataclass(frozen=True)
class AutocompConfig:
    tasks: tuple[str, ...] = tuple(TASKS)
    ns: tuple[int, ...] = (2, 3)
    n_concepts: int = 4
    vocab: Path | None = None
    size: int = 256
    seed: int = 0
    contextual_tries: int = 3
    detector_threshold: float = 0.4  # App. A.6 box_threshold
    text_threshold: float = 0.3  # App. A.6 text_threshold (checked against the detector)
    contextual_prompt: str = "paper"  # "paper" (App. A.2, plain text) or "json"
    white_level: int = 190
    white_share: float = 0.70
    extra: dict = field(default_factory=dict)

    def options(self) -> dict:
        out = asdict(self)
        out["vocab"] = str(self.vocab) if self.vocab else None
        return out

    def words(self) -> dict:
        if self.vocab is None:
            return default_vocab()
        if str(self.vocab) == "paper":
            return paper_vocab()
        try:
            data = json.loads(Path(self.vocab).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise ConstructError(f"{self.vocab}: cannot read the vocabulary JSON ({e})") from None
        base = default_vocab()
        return {**base, **{k: tuple(str(w) for w in v) for k, v in data.items()}}


MAX_NEW_TOKENS = 150  # App. A.6: "For all tasks, max_new_tokens was set to 150"
TOP_P = 0.9  # App. A.6: "We used nucleus sampling with temperature=0.7 and top_p=0.9"
CONTEXTUAL_PROMPTS = ("paper", "json")


def contextual_prompt_name(config: AutocompConfig, concept: Concept) -> str:
    """App. A.2's prompt (its relational twin for relation tasks), or the JSON variant."""
    if config.contextual_prompt == "json":
        return "autocomp.contextual-json"
    return ("autocomp.contextual" if TASKS[concept.task].binds == "attribute"
            else "autocomp.contextual-relation")


def sample_concepts(config: AutocompConfig, vocab: dict) -> list[Concept]:
    """``n_concepts`` distinct concepts per (task, N): distinct objects, distinct colours,
    relations with repetition; seeded per (task, N, draw)."""
    out: list[Concept] = []
    for t_index, task in enumerate(config.tasks):
        if task not in TASKS:
            raise ConstructError(f"unknown Auto-Comp task {task!r}; possible: {', '.join(TASKS)}")
        objects, values = task_words(vocab, task)
        for n in config.ns:
            if n > len(objects) or (TASKS[task].binds == "attribute" and n > len(values)):
                raise ConstructError(f"{task}, N={n}: the vocabulary has too few words")
            seen: set = set()
            for draw in range(50 * config.n_concepts):
                if len(seen) == config.n_concepts:
                    break
                rng = np.random.default_rng([config.seed, SEED_STREAM, t_index, n, draw])
                objs = tuple(objects[i] for i in rng.choice(len(objects), n, replace=False))
                if TASKS[task].binds == "attribute":
                    vals = tuple(values[i] for i in rng.choice(len(values), n, replace=False))
                else:
                    vals = tuple(values[i] for i in rng.integers(len(values), size=n - 1))
                key = (task, objs, vals)
                if key not in seen:
                    seen.add(key)
                    out.append(Concept(task, objs, vals))
    return out


def plan(config: AutocompConfig) -> dict[str, dict[str, int]]:
    """Per concept ``contextual_tries`` caption calls; per concept and track one image, one
    detector call and the questions :func:`.checks.questions` asks: one per object of an
    attribute task, one per relation (N - 1) of a relation task. The concepts are the run's
    own (:func:`sample_concepts`, seeded), so each call is bounded by its own request
    (:class:`~foilbench.construct.engine.budget.Calls`, issue 40): the largest contextual
    prompt with its concept's caption and its ``MAX_NEW_TOKENS`` answer; the largest VQA
    prompt (question and choices, as :class:`~foilbench.construct.backends.vqa.APIVQA`
    words it) with one image at ``--size`` and the largest answer budget of its questions
    (:func:`~foilbench.construct.backends.vqa.answer_tokens`); an image prompt of the contextual caption at 4
    bytes a token (a planning assumption: images are priced per image). With
    ``--count-tokens`` the prompts' fixed parts are counted, and so are their fields, all
    known here: each concept's caption (sent in at most ``contextual_tries`` calls) and each
    question and its choices (asked at most once a track, :func:`vqa_fixed`)."""
    from foilbench.construct.autocomp.checks import questions
    from foilbench.construct.backends.vqa import API_PROMPT, answer_tokens, choice_lines
    from foilbench.construct.engine.budget import BYTES_PER_TOKEN, Calls, fixed_prompt
    from foilbench.construct.engine.prompts import template_bytes

    def nbytes(text: str) -> int:
        return len(text.encode("utf-8"))

    vocab = config.words()
    concepts = sample_concepts(config, vocab)
    n = len(concepts)
    asked = [q for c in concepts for q in questions(c, task_words(vocab, c.task)[1])]
    prompt = max((template_bytes(contextual_prompt_name(config, c)) + nbytes(caption(c))
                  for c in concepts), default=0)
    vqa = max((nbytes(API_PROMPT.format(question=q, choices=choice_lines(ch)))
               for q, ch, _ in asked), default=0)
    written = MAX_NEW_TOKENS * BYTES_PER_TOKEN
    texts = tuple(caption(c) for c in concepts)
    most = {"concept": max((nbytes(t) for t in texts), default=0)}
    names = sorted({contextual_prompt_name(config, c) for c in concepts})
    out = {"captions + semantic preservation": {"text": Calls(
        n * config.contextual_tries, max_tokens=MAX_NEW_TOKENS, prompt_bytes=prompt,
        fixed=tuple(fixed_prompt(p, most, known="concept") for p in names), known=texts,
        known_uses=config.contextual_tries)}}
    fields = tuple(t for q, ch, _ in asked for t in (q, choice_lines(ch)))
    for track in TRACKS:
        out[f"text-to-image [{track}]"] = {"image": Calls(n, prompt_bytes=written + 200,
                                                          image_side=config.size)}
        out[f"object presence and count [{track}]"] = {"detector": n}
        out[f"attribute/relation check [{track}]"] = {"vqa": Calls(
            len(asked), max_tokens=max((answer_tokens(q, ch) for q, ch, _ in asked), default=0),
            prompt_bytes=vqa, images=1, image_side=config.size, fixed=(vqa_fixed(asked),) if asked else (),
            known=fields, known_uses=1)}
    return out


def vqa_fixed(asked: list):
    """The VQA prompt with its two fields empty, for ``--count-tokens``
    (:class:`~foilbench.construct.engine.budget.FixedPrompt`): both fields are known texts
    (each question and each choice list, :func:`plan`), and each of them is sent once in
    the one request that asks it, so one occurrence a text (``known=1``) and all the fields'
    bytes known (``known_bytes``): the stage's sum is then counted from the texts
    themselves, with the joint margin at each end of each."""
    from foilbench.construct.backends.vqa import API_PROMPT, choice_lines
    from foilbench.construct.engine.budget import FixedPrompt

    def nbytes(text: str) -> int:
        return len(text.encode("utf-8"))

    most = (max(nbytes(q) for q, _, _ in asked)
            + max(nbytes(choice_lines(ch)) for _, ch, _ in asked))
    return FixedPrompt("", API_PROMPT.format(question="", choices=""), most, 2, 1, most)


def _concept_dict(c: Concept) -> dict:
    return {"task": c.task, "objects": list(c.objects), "values": list(c.values)}


def stage_captions(ctx: Context, cands: list[Candidate], config: AutocompConfig):
    """Minimal (template) and Contextual (text backend + preservation check, with retries)."""
    with ctx.log.stage("captions + semantic preservation", cands, unit="concept") as st:
        pending = list(cands)
        for c in cands:
            minimal = caption(c.data["concept"]) + MINIMAL_SUFFIX
            c.data["captions"] = {"minimal": minimal}
            c.data["spans"] = {"minimal": preserved_spans(minimal, c.data["concept"])}
        for attempt in range(config.contextual_tries):
            if not pending:
                break
            jobs = [(c.id, (ctx.text_request(
                contextual_prompt_name(config, c.data["concept"]),
                {"kind": "autocomp.contextual", "concept": _concept_dict(c.data["concept"]),
                 "reply": "json" if config.contextual_prompt == "json" else "text"},
                seed=c.data["seed"] + attempt, max_tokens=MAX_NEW_TOKENS, top_p=TOP_P,
                concept=caption(c.data["concept"])),)) for c in pending]
            results = ctx.call_many(st, "text", jobs)
            still = []
            for c in pending:
                res = results[c.id]
                text, spans = "", None
                if isinstance(res, Failure):
                    c.data.setdefault("call_errors", []).append(res.error)
                else:
                    if config.contextual_prompt == "json":
                        try:
                            text = clean_sentence(require(parse_json(res.value),
                                                          {"caption": str},
                                                          "contextual")["caption"])
                        except ReplyError:
                            text = clean_sentence(res.value)  # a bare sentence is fine too
                    else:  # App. A.2: "Generate ONLY the caption text"
                        text = clean_sentence(res.value)
                    spans = preserved_spans(text, c.data["concept"])
                st.event(c, attempt=attempt, outputs={"contextual": text},
                         verdicts={"preserved": spans is not None},
                         **({"error": res.error, "attempts": res.attempts}
                            if isinstance(res, Failure) else res.describe()))
                if spans is None:
                    still.append(c)
                    continue
                c.data["captions"]["contextual"] = text
                c.data["spans"]["contextual"] = spans
                st.passed(c)
            pending = still
        for c in pending:
            errors = c.data.get("call_errors", [])
            if len(errors) == config.contextual_tries:  # no reply to check at all
                st.drop(c, "call failed", error=errors[-1], attempts=len(errors))
            else:
                st.drop(c, f"semantic preservation failed after {config.contextual_tries} "
                           "tries")
    return st.survivors


def build(ctx: Context, config: AutocompConfig):
    from foilbench.construct.autocomp.bench import concept_id
    from foilbench.construct.autocomp.stages import (
        result_for,
        stage_background,
        stage_images,
        stage_negatives,
        stage_objects,
        stage_vqa,
    )

    if config.contextual_prompt not in CONTEXTUAL_PROMPTS:
        raise ConstructError(f"contextual_prompt must be one of {CONTEXTUAL_PROMPTS}, got "
                             f"{config.contextual_prompt!r}")
    detector = ctx.backend("detector")
    have = getattr(detector, "text_threshold", None)
    if have is not None and abs(float(have) - config.text_threshold) > 1e-9:
        raise ConstructError(
            f"the detector {getattr(detector, 'spec', '')} uses text_threshold={have}, Auto-Comp "
            f"App. A.6 uses {config.text_threshold}: add ',text_threshold="
            f"{config.text_threshold}' to the detector spec, or set text_threshold={have} in "
            "the config to accept it")
    vocab = config.words()
    if getattr(ctx.backend("image"), "reads_structure", False):
        base = default_vocab()
        for task in config.tasks:
            objs, vals = task_words(vocab, task)
            w_objs, w_vals = task_words(base, task)
            vals = tuple(canonical_relation(v) for v in vals) if \
                TASKS[task].binds == "relation" else vals
            odd = sorted(set(objs) - set(w_objs)) + sorted(set(vals) - set(w_vals))
            if odd:
                raise ConstructError(f"--image world cannot draw {odd} for task {task}; use the "
                                     "world vocabulary (no --vocab) or a generative backend")
    cands = []
    for k, concept in enumerate(sample_concepts(config, vocab)):
        c = Candidate(concept_id(concept), "concept", {"concept": concept, "index": k,
                                                       "seed": config.seed * 10_007 + k})
        ctx.log.created(c, stage="concepts", inputs=_concept_dict(concept))
        cands.append(c)
    concepts = stage_captions(ctx, cands, config)
    with ctx.log.stage("split tracks", concepts, unit="concept") as st:
        for c in concepts:
            st.expand(c, [Candidate(f"{c.id}-{t}", "track", {"concept_c": c, "track": t})
                          for t in TRACKS])
    kept = []
    for track in TRACKS:
        tracks = [t for t in st.children if t.data["track"] == track]
        tracks = stage_images(ctx, tracks, config, vocab, track)
        tracks = stage_objects(ctx, tracks, config, track)
        if track == "minimal":
            tracks = stage_background(ctx, tracks, config)
        tracks = stage_vqa(ctx, tracks, config, vocab, track)
        kept += stage_negatives(ctx, tracks, track)
    ctx.log.keep_all(kept, stage="export")
    return result_for(ctx, kept, config)
