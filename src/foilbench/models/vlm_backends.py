"""How a generative VLM family computes a shared prefix and continues from it.

``DecoderBackend``  the image enters as tokens of a decoder-only LM (LLaVA, BLIP-2 with a
                    decoder LM, Qwen2-VL style): the processor expands the image placeholder;
                    the cache holds the whole image+prompt prefix.
``BlipBackend``     BLIP captioners: a vision encoder, and a text decoder that cross-attends
                    to the image features; the cache holds the prompt's self-attention and
                    the image's cross-attention keys/values.

Shared path: one prefix forward per image, its key/value cache copied and repeated to the
batch of candidates, then one forward over the candidates' tokens. From-scratch path: every
candidate runs image + prefix + candidate itself (the prefix repeated in the batch).
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass
from typing import Any

from PIL import Image

from foilbench.errors import ModelError


@dataclass
class PrefixState:
    cache: Any
    last_logits: Any  # (V,) distribution of the first continuation token
    length: int  # prefix length in tokens
    extra: Any = None  # backend-specific (BLIP: image features)


def _cache_kwarg(forward) -> str:
    """transformers >= 5.x names the cache argument ``cache``; earlier ``past_key_values``."""
    return "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"


def _expanded(cache, n: int):
    """A fresh copy of a batch-1 cache repeated to batch n (the original stays reusable)."""
    fresh = copy.deepcopy(cache)
    fresh.batch_repeat_interleave(n)
    return fresh


class DecoderBackend:
    def __init__(self, model, processor, device, dtype) -> None:
        self.model, self.processor, self.device, self.dtype = model, processor, device, dtype
        self.tokenizer = processor.tokenizer
        self.image_token = getattr(processor, "image_token", None) or "<image>"
        self._cache_arg = _cache_kwarg(model.forward)

    def tokenize(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _inputs(self, image: Image.Image, text: str) -> dict:
        enc = self.processor(images=[image], text=[text], return_tensors="pt")
        out = {}
        for key, value in enc.items():
            value = value.to(self.device)
            out[key] = value.to(self.dtype) if value.is_floating_point() else value
        return out

    def encode_prefix(self, image: Image.Image, text: str) -> PrefixState:
        inputs = self._inputs(image, text)
        out = self.model(**inputs, use_cache=True)
        return PrefixState(out.past_key_values, out.logits[0, -1], inputs["input_ids"].shape[1])

    def continue_from(self, state: PrefixState, cont_ids):
        # No attention mask: every position is real or right padding, and attention is causal.
        # Leaving it out also lets M-RoPE models (Qwen2-VL) place the new tokens after the
        # cached prefix from the cache length and their stored rope deltas.
        b = cont_ids.shape[0]
        out = self.model(input_ids=cont_ids, use_cache=True,
                         **{self._cache_arg: _expanded(state.cache, b)})
        return out.logits

    def from_scratch(self, image: Image.Image, text: str, cont_ids):
        """(prefix_last (B, V), cont_logits (B, T, V)) with nothing shared between rows."""
        import torch

        inputs = self._inputs(image, text)
        prefix_ids = inputs["input_ids"]
        (b, t), p = cont_ids.shape, prefix_ids.shape[1]
        batch = {}
        for key, value in inputs.items():
            if key in ("input_ids", "attention_mask"):
                continue
            if value.shape == prefix_ids.shape:  # token-aligned (e.g. mm_token_type_ids): text
                zeros = torch.zeros(b, t, dtype=value.dtype, device=value.device)
                batch[key] = torch.cat([value.expand(b, -1), zeros], dim=1)
            else:
                batch[key] = torch.cat([value] * b, dim=0)
        ids = torch.cat([prefix_ids.expand(b, -1), cont_ids], dim=1)
        logits = self.model(input_ids=ids, attention_mask=torch.ones_like(ids), **batch).logits
        return logits[:, p - 1], logits[:, p:]


class BlipBackend:
    def __init__(self, model, processor, device, dtype) -> None:
        self.model, self.processor, self.device, self.dtype = model, processor, device, dtype
        self.tokenizer = processor.tokenizer
        self.bos_id = model.config.text_config.bos_token_id
        if self.bos_id is None:
            raise ModelError("BLIP text config has no bos_token_id (the decoder start token)")
        self._cache_arg = _cache_kwarg(model.text_decoder.forward)

    def tokenize(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _image_features(self, image: Image.Image, copies: int = 1):
        import torch

        pixels = self.processor.image_processor(images=[image], return_tensors="pt")
        pixels = pixels["pixel_values"].to(self.device, self.dtype)
        return self.model.vision_model(pixel_values=torch.cat([pixels] * copies))[0]

    def _prefix_ids(self, text: str, copies: int = 1):
        import torch

        ids = [self.bos_id, *self.tokenize(text)]
        return torch.tensor([ids] * copies, device=self.device)

    def encode_prefix(self, image: Image.Image, text: str) -> PrefixState:
        feats = self._image_features(image)
        ids = self._prefix_ids(text)
        out = self.model.text_decoder(input_ids=ids, encoder_hidden_states=feats, use_cache=True,
                                      return_dict=True)
        return PrefixState(out.past_key_values, out.logits[0, -1], ids.shape[1], feats)

    def continue_from(self, state: PrefixState, cont_ids):
        b = cont_ids.shape[0]
        out = self.model.text_decoder(
            input_ids=cont_ids, encoder_hidden_states=state.extra.expand(b, -1, -1),
            use_cache=True, return_dict=True, **{self._cache_arg: _expanded(state.cache, b)})
        return out.logits

    def from_scratch(self, image: Image.Image, text: str, cont_ids):
        import torch

        b = cont_ids.shape[0]
        prefix = self._prefix_ids(text, copies=b)
        ids = torch.cat([prefix, cont_ids], dim=1)
        out = self.model.text_decoder(input_ids=ids, encoder_hidden_states=self._image_features(
            image, copies=b), use_cache=False, return_dict=True)
        p = prefix.shape[1]
        return out.logits[:, p - 1], out.logits[:, p:]
