"""Prompt templates for generative VLM scoring, split at the point the prefix is shared.

Each template has a ``head`` (holds the image placeholder ``{image}``) and a ``tail`` (the
turn marker after which the model answers). Log-likelihood scores ``caption`` after
``head + LOGLIK_PROMPT + tail``; VQAScore shares only ``head`` and appends
``question + tail``, then reads the next token. The prefix and the continuation are
tokenised separately, in both the shared and the from-scratch path, so the two see the same
token ids.

Token boundaries. A continuation is tokenised *in context* (:func:`continuation_ids`): the ids
the tokenizer gives ``context + text`` after those of ``context``, so a tokenizer whose pieces
carry their leading space (byte-level BPE: ``"Yes"`` and ``" Yes"`` are different tokens) or
add one of its own (SentencePiece's dummy prefix) sees the text as it would in one string. A
space is put between the two only where the context does not already end in whitespace
(:func:`separator`): after LLaVA's ``" ASSISTANT:"`` the answer is ``" Yes"``; after Qwen2-VL's
``"<|im_start|>assistant\n"`` it is ``"Yes"``, and a caption follows the newline directly.
VQAScore's answer tokens are chosen the same way, per tokenizer (:func:`answer_token`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

VQA_QUESTION = 'Does this figure show "{caption}"? Please answer yes or no.'
LOGLIK_PROMPT = "Describe the image."
BLIP_CAPTION_PROMPT = "a picture of"  # BLIP's captioning prompt (Li et al. 2022)


@dataclass(frozen=True)
class Template:
    name: str
    head: str
    tail: str


TEMPLATES = {
    "llava": Template("llava", "USER: {image}\n", " ASSISTANT:"),
    "qwen2vl": Template(
        "qwen2vl",
        "<|im_start|>user\n<|vision_start|>{image}<|vision_end|>",
        "<|im_end|>\n<|im_start|>assistant\n",
    ),
    # BLIP captioners have no chat turns: the image enters by cross-attention, not as tokens
    "blip": Template("blip", "", ""),
}

MODEL_TYPE_TEMPLATE = {"qwen2_vl": "qwen2vl", "qwen2_5_vl": "qwen2vl", "blip": "blip"}


def template_for(model_type: str, requested: str | None) -> Template:
    from foilbench.errors import ModelError

    name = requested or MODEL_TYPE_TEMPLATE.get(model_type, "llava")
    if name not in TEMPLATES:
        raise ModelError(f"unknown VLM prompt template {name!r}; known: {', '.join(TEMPLATES)}")
    return TEMPLATES[name]


def separator(context: str) -> str:
    """``""`` where the text before already ends in whitespace (or there is none), else ``" "``."""
    return "" if not context or context[-1].isspace() else " "


def continuation_ids(tokenize: Callable[[str], list[int]], context: str, text: str) -> list[int]:
    """Ids of ``text`` as the tokenizer splits it right after ``context``; the ids of ``text``
    alone where the two strings do not split at their boundary (a merge across it)."""
    head = tokenize(context) if context else []
    full = tokenize(context + text)
    if full[:len(head)] == head and len(full) > len(head):
        return full[len(head):]
    return tokenize(text)


def answer_token(tokenize: Callable[[str], list[int]], context: str, word: str) -> int | None:
    """The first token of ``word`` answering after ``context`` (``" Yes"`` after a colon,
    ``"Yes"`` after a newline), or None when it tokenises to nothing."""
    ids = continuation_ids(tokenize, context, separator(context) + word)
    return ids[0] if ids else None
