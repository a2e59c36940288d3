"""SugarCrepe's spend plan and output budgets: the most calls per stage, each bounded by its
own request (issue 40), and each step's answer sized from what it asks for."""

from __future__ import annotations

from pathlib import Path

from foilbench.construct.engine.replies import (
    content_tokens,
    is_ascii,
    json_reply_tokens,
)
from foilbench.construct.sugarcrepe.spec import (
    TYPES,
    SugarcrepeConfig,
    prompt_name,
    read_captions,
)

#: most UTF-8 bytes of a new concept (step 2's answer): a longer one is dropped, so the
#: compose prompt that carries it has a size the plan can bound
CONCEPT_BYTES = 64
#: what each step's template puts in its fields, at most: the caption, the concept kind,
#: the located concept (copied from the caption, so no longer than it) and the new concept
FIELDS = ("caption", "concept", "old", "new")


def nbytes(text: object) -> int:
    return len(str(text).encode("utf-8"))


def answer_tokens(step: str, caption_bytes: int, new_bytes: int = 0, ascii: bool = False,
                  new_ascii: bool = False) -> int:
    """The output budget of one request of ``step`` (issue 40: from what it asks for,
    :func:`~foilbench.construct.engine.replies.json_reply_tokens`: one token per two bytes
    when the caption is ASCII, ``ascii``, else one a byte): locate lists concepts copied from
    the caption (at most twice its bytes with quotes and commas); a new concept is at most
    :data:`CONCEPT_BYTES`; compose rewrites the caption with the new concept in (plus 32
    bytes of joining words; the new concept's bytes by its own script, ``new_ascii``, since
    the plan cannot know it); swap names two concepts of the caption and rewrites it (twice
    its bytes, plus the ``possible`` flag).

    >>> answer_tokens("compose", 40, 5), answer_tokens("compose", 40, 5, True, True)
    (109, 71)
    >>> answer_tokens("compose", 40, 5, ascii=True)
    73
    """
    content = {"locate": 2 * caption_bytes, "new_concept": CONCEPT_BYTES,
               "compose": caption_bytes + 32, "swap": 2 * caption_bytes + 16}
    new = content_tokens(new_bytes, new_ascii) if step == "compose" else 0
    return json_reply_tokens(content[step], ascii) + new


def sugarcrepe_plan(config: SugarcrepeConfig) -> dict[str, dict[str, int]]:
    """Per (caption, replace/add type) one call in each of locate, new concept and compose;
    per (caption, swap type) one swap call; none on a validated set (a folder). Each call is
    bounded by its own request (:class:`~foilbench.construct.engine.budget.Calls`): the
    longest template of the step with each field at its most (:data:`FIELDS`: the longest
    caption read; the located concept no longer than it; the new concept at most
    :data:`CONCEPT_BYTES`, the stages drop longer ones), and the step's own output budget for
    the longest caption (:func:`answer_tokens`)."""
    from foilbench.construct.engine.budget import Calls, fixed_prompt
    from foilbench.construct.engine.prompts import load_prompt, template_bytes

    if Path(config.captions).is_dir():
        return {}
    captions = read_captions(config)
    n = len(captions)
    longest = max((nbytes(c["caption"]) for c in captions), default=0)
    most = {"caption": longest, "concept": max(len(TYPES[t][k]) for t in TYPES for k in (1, 2)),
            "old": longest, "new": CONCEPT_BYTES}
    three = [t for t in config.types if TYPES[t][0] != "swap"]
    texts = tuple(str(c["caption"]) for c in captions)
    swaps = [t for t in config.types if TYPES[t][0] == "swap"]

    def size(name: str) -> int:
        p = load_prompt(name)
        return template_bytes(name) + sum((p.system + p.user).count(f"${f}") * most[f]
                                          for f in FIELDS)

    ascii = is_ascii(*texts)

    def calls(types: list[str], step: str, prompts: list[str]) -> Calls:
        return Calls(n * len(types), max_tokens=answer_tokens(step, longest, CONCEPT_BYTES,
                                                              ascii),
                     prompt_bytes=max([size(p) for p in prompts] + [0]),
                     fixed=tuple(fixed_prompt(p, most, known="caption") for p in prompts),
                     known=texts, known_uses=len(types))

    return {"locate concept (T=0)": {"text": calls(three, "locate", ["sugarcrepe.locate"])},
            "new concept (T=1.5)": {"text": calls(
                three, "new_concept", [prompt_name("new_concept", t) for t in three])},
            "compose (T=0)": {"text": calls(
                three, "compose", ["sugarcrepe.compose_replace", "sugarcrepe.compose_add"])},
            "swap, one step (T=0)": {"text": calls(
                swaps, "swap", [prompt_name("swap", t) for t in swaps])}}
