"""CompoSET's spend plan: the most calls per stage and role, each with what bounds one call of
that stage (:class:`~foilbench.construct.engine.budget.Calls`: its own output budget, its
prompt's size, its images), so the dry run bounds each stage by its own requests (issue 40).

Prompt sizes: the packaged prompt (system and user text) plus its fields, each at its most:
the spec, its base caption and the instance captions (:func:`too_long` drops a scene whose
are longer), a proposal's listing line (:data:`FOIL_BYTES`; step 5 drops a longer one, and a
correction that makes one longer). Two remain assumptions: the scene parameters
(:data:`PARAMS_BYTES`; a scenes CSV may hold longer ones) and the VQA caption QC's question
(600 bytes each; at most :func:`qc_names` of them a scene). The
ledger reserves every request at its real prompt size before it is sent in any case, so the
cap holds whatever a reply's length.
"""

from __future__ import annotations

from foilbench.construct.backends.vqa import API_MAX_TOKENS
from foilbench.construct.composet.spec import IMAGE_NOTE, spec_text
from foilbench.construct.composet.taxonomy import taxonomy_text
from foilbench.construct.engine.budget import BYTES_PER_TOKEN, Calls, fixed_prompt
from foilbench.construct.engine.prompts import template_bytes
from foilbench.construct.engine.replies import json_reply_tokens

#: output budgets of the steps (as the stages send them); steps 4 and 5 at most these
SPEC_TOKENS, QC_TOKENS, INSTANCE_TOKENS, FOIL_TOKENS, CHECK_TOKENS = 1500, 2000, 1500, 6000, 6000
VERBOSITY_TOKENS = 800
#: one foil proposal (step 4's JSON object, and its line in step 5's listing) and one
#: verdict (step 5's, corrected captions included), at most, in UTF-8 bytes; the prompts'
#: examples are about 190 and 160. Step 5 drops a proposal whose line is longer.
FOIL_BYTES, VERDICT_BYTES = 400, 500


def foil_tokens(n_foils: int) -> int:
    """Step 4's output budget for ``n_foils`` asked (issue 40: k items need k x per-item, at
    one token a byte, :func:`~foilbench.construct.engine.replies.json_reply_tokens`), never
    above the former flat :data:`FOIL_TOKENS` (a typical 22-foil reply is ~1,100 tokens).

    >>> foil_tokens(1), foil_tokens(22)
    (432, 6000)
    """
    return min(FOIL_TOKENS, json_reply_tokens(FOIL_BYTES * n_foils))


def check_tokens(n_listed: int) -> int:
    """Step 5's output budget for ``n_listed`` proposals: one verdict each, at most
    :data:`CHECK_TOKENS`.

    >>> check_tokens(3)
    1532
    """
    return min(CHECK_TOKENS, json_reply_tokens(VERDICT_BYTES * n_listed))
#: distinct object names the VQA caption QC counts a scene beyond its most subjects (a spec
#: may name scenery besides its subjects); the rest are kept as stated, listed as not counted
QC_EXTRA_NAMES = 4
#: scene parameters, the recent scenes' captions and one foil's captions, at most
PARAMS_BYTES, RECENT_BYTES, CAPTIONS_BYTES = 600, 2400, 1200
#: step 1's spec as the later prompts show it, its base caption, and step 3's instance
#: captions as step 4 lists them, at most: a longer one drops its scene (:func:`too_long`),
#: so the prompts that carry them are no longer than the plan says
SPEC_BYTES = SPEC_TOKENS * BYTES_PER_TOKEN
BASE_CAPTION_BYTES = 400
INSTANCES_BYTES = INSTANCE_TOKENS * BYTES_PER_TOKEN


def qc_names(config) -> int:
    """Most distinct object names the VQA caption QC counts in one scene."""
    return config.subjects[1] + QC_EXTRA_NAMES


def too_long(spec: dict | None = None, instances: dict | None = None) -> str | None:
    """Why a scene's spec or instance captions are longer than the plan counts them (the
    drop reason), or None.

    >>> too_long({"base_caption": "a mug", "objects": []})
    >>> too_long(instances={"mug": "m" * 6000})
    'instance captions longer than 6000 bytes'
    """
    def size(text: str) -> int:
        return len(text.encode("utf-8"))

    if spec is not None and size(spec_text(spec)) > SPEC_BYTES:
        return f"spec longer than {SPEC_BYTES} bytes"
    if spec is not None and size(str(spec.get("base_caption", ""))) > BASE_CAPTION_BYTES:
        return f"base caption longer than {BASE_CAPTION_BYTES} bytes"
    if instances is not None and size(instances_text(instances)) > INSTANCES_BYTES:
        return f"instance captions longer than {INSTANCES_BYTES} bytes"
    return None


def instances_text(instances: dict) -> str:
    """Step 3's captions as step 4's prompt lists them."""
    return "\n".join(f"- {k}: {v}" for k, v in instances.items())


def composet_plan(config) -> dict[str, dict[str, int]]:
    """Per scene one spec, one caption QC (a text call, or with a ``vqa`` QC one count
    question per spec object), one image, one detector check, one instance and one foil call
    per prompt variant and one self-check; per foil one edit, the detector on the edit region
    and on base and foil, one verbosity call per variant. The bias variants double the prompt
    variants, and their proposals double the foils (step 4 keeps at most what it asked)."""
    n, v = config.n_scenes, 2 if config.bias_variants else 1
    f = config.foils_per_scene * v
    spec = SPEC_BYTES
    note = len(IMAGE_NOTE.encode("utf-8"))  # steps 3 and 4 say the base image is attached
    side = config.size

    def text(calls, prompt, most, max_tokens, images=0, fill=None):
        """``most``: each field's most bytes (:func:`~foilbench.construct.engine.budget.
        fixed_prompt`); ``fill``: the fields every request fills alike (counted as sent)."""
        fields = sum(most.values()) + sum(len(v.encode("utf-8")) for v in (fill or {}).values())
        size = max(template_bytes(p) for p in prompt) + fields
        return Calls(calls, max_tokens=max_tokens, prompt_bytes=size, images=images,
                     image_side=side, fixed=tuple(fixed_prompt(p, most, fill=fill)
                                                  for p in prompt))

    bias = ("",) if not config.bias_variants else ("", ".bias")
    qc = ({"text": text(n, ["composet.caption_qc"], {"spec": spec}, QC_TOKENS, images=1),
           "vqa": Calls(n * qc_names(config), max_tokens=API_MAX_TOKENS, prompt_bytes=600,
                        images=1, image_side=side)} if config.caption_qc else {})
    listing = f * (FOIL_BYTES + 1)  # step 5 drops a longer line; one newline each
    return {
        "base spec (step 1)": {"text": text(
            n, ["composet.base_spec"], {"params": PARAMS_BYTES, "recent": RECENT_BYTES},
            SPEC_TOKENS)},
        "base render (step 2)": {"image": Calls(n, prompt_bytes=template_bytes(
            "composet.base_image") + spec, image_side=side)},
        "caption QC vs base image": qc,
        "base check (detector)": {"detector": n},
        "instance captions (step 3)": {"text": text(
            n * v, [f"composet.instance_captions{b}" for b in bias],
            {"spec": spec, "image_note": note}, INSTANCE_TOKENS, images=1)},
        "foil enumeration (step 4)": {"text": text(
            n * v, [f"composet.foils{b}" for b in bias],
            {"spec": spec, "image_note": note, "instances": INSTANCES_BYTES,
             "n_foils": len(str(config.foils_per_scene))},
            foil_tokens(config.foils_per_scene), images=1, fill={"taxonomy": taxonomy_text()})},
        "self-check (step 5)": {"text": text(n, ["composet.self_check"],
                                             {"spec": spec, "foils": listing}, check_tokens(f))},
        "foil render: edit region": {"detector": n * f},
        "foil render (step 6)": {"edit": Calls(n * f, prompt_bytes=template_bytes(
            "composet.foil_edit") + CAPTIONS_BYTES, image_side=side, edit=True)},
        "verify: drift and counts": {"detector": 2 * n * f},
        "verbosity (step 7)": {"text": text(
            n * f * v, [f"composet.verbosity{b}" for b in bias],
            {"spec": spec, "base_caption": BASE_CAPTION_BYTES,
             "foil_caption": CAPTIONS_BYTES - BASE_CAPTION_BYTES}, VERBOSITY_TOKENS)},
    }
