"""Prompt templates for generative VLM scoring, split at the point the prefix is shared.

Each template has a ``head`` (holds the image placeholder ``{image}``) and a ``tail`` (the
turn marker after which the model answers). Log-likelihood scores ``caption`` after
``head + LOGLIK_PROMPT + tail``; VQAScore shares only ``head`` and appends
``question + tail``, then reads the next token. The prefix and the continuation are
tokenised separately, in both the shared and the from-scratch path, so the two see the same
token ids.
"""

from __future__ import annotations

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
