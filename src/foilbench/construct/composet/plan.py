"""CompoSET's spend plan: the most calls per stage and role, each with what bounds one call of
that stage (:class:`~foilbench.construct.engine.budget.Calls`: its own output budget, its
prompt's size, its images), so the dry run bounds each stage by its own requests (issue 40).

Prompt sizes: the packaged prompt (system and user text) plus its fields, each field bounded
by the output budget of the step that wrote it at ``BYTES_PER_TOKEN`` bytes a token (a spec is
step 1's answer), except the foils listing of step 5, which is a bound (at most
:data:`FOIL_BYTES` a proposal, longer ones dropped). The rest is a planning assumption:
the ledger still reserves every request at its real prompt size before it is sent, so the cap
holds whatever a reply's length.
"""

from __future__ import annotations

from foilbench.construct.backends.vqa import API_MAX_TOKENS
from foilbench.construct.composet.taxonomy import taxonomy_text
from foilbench.construct.engine.budget import BYTES_PER_TOKEN, Calls
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
#: scene parameters, the recent scenes' captions and one foil's captions, at most
PARAMS_BYTES, RECENT_BYTES, CAPTIONS_BYTES = 600, 2000, 1200


def composet_plan(config) -> dict[str, dict[str, int]]:
    """Per scene one spec, one caption QC (a text call, or with a ``vqa`` QC one count
    question per spec object), one image, one detector check, one instance and one foil call
    per prompt variant and one self-check; per foil one edit, the detector on the edit region
    and on base and foil, one verbosity call per variant. The bias variants double the prompt
    variants, and their proposals double the foils (step 4 keeps at most what it asked)."""
    n, v = config.n_scenes, 2 if config.bias_variants else 1
    f = config.foils_per_scene * v
    spec = SPEC_TOKENS * BYTES_PER_TOKEN
    side = config.size

    def text(calls, prompt, fields, max_tokens, images=0):
        size = max(template_bytes(p) for p in prompt) + fields
        return Calls(calls, max_tokens=max_tokens, prompt_bytes=size, images=images,
                     image_side=side)

    bias = ("",) if not config.bias_variants else ("", ".bias")
    qc = ({"text": text(n, ["composet.caption_qc"], spec, QC_TOKENS, images=1),
           "vqa": Calls(n * config.subjects[1], max_tokens=API_MAX_TOKENS, prompt_bytes=600,
                        images=1, image_side=side)} if config.caption_qc else {})
    listing = f * (FOIL_BYTES + 1)  # step 5 drops a longer line; one newline each
    return {
        "base spec (step 1)": {"text": text(n, ["composet.base_spec"],
                                            PARAMS_BYTES + RECENT_BYTES, SPEC_TOKENS)},
        "base render (step 2)": {"image": Calls(n, prompt_bytes=template_bytes(
            "composet.base_image") + spec, image_side=side)},
        "caption QC vs base image": qc,
        "base check (detector)": {"detector": n},
        "instance captions (step 3)": {"text": text(
            n * v, [f"composet.instance_captions{b}" for b in bias], spec, INSTANCE_TOKENS,
            images=1)},
        "foil enumeration (step 4)": {"text": text(
            n * v, [f"composet.foils{b}" for b in bias],
            spec + INSTANCE_TOKENS * BYTES_PER_TOKEN + len(taxonomy_text().encode()),
            foil_tokens(config.foils_per_scene), images=1)},
        "self-check (step 5)": {"text": text(n, ["composet.self_check"], spec + listing,
                                             check_tokens(f))},
        "foil render: edit region": {"detector": n * f},
        "foil render (step 6)": {"edit": Calls(n * f, prompt_bytes=template_bytes(
            "composet.foil_edit") + CAPTIONS_BYTES, image_side=side, edit=True)},
        "verify: drift and counts": {"detector": 2 * n * f},
        "verbosity (step 7)": {"text": text(
            n * f * v, [f"composet.verbosity{b}" for b in bias], spec + CAPTIONS_BYTES,
            VERBOSITY_TOKENS)},
    }
