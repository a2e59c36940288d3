"""Exact shortcuts for open_clip models: length-trimmed text encoding and a cheaper tensor tail.

Text. open_clip's ``CLIP.encode_text`` always runs the full context (77 tokens) although a
caption is usually a fraction of it. In a tower with a causal attention mask, position ``p``
attends only to positions ``<= p``; when the features are pooled at one position per row (the
end-of-text token: ``argmax`` or ``eos`` pooling, or the first token), nothing after the
largest pooled position of the batch can change the result. :func:`encode_text_trimmed` runs
the same layers on the tokens up to that position, with the positional embedding and the
causal mask cut to match, and the last layer at each row's pooled position only
(:mod:`foilbench.models.openclip.pooled`). It is used only where :func:`trim_blocker` finds
nothing against it (the built-in CLIP text tower, causal mask present, position pooling); every
other tower (bidirectional SigLIP-style, mean pooling, Hugging Face text towers, CoCa) runs at
full length.
The adapter also compares both paths once on its first batch and falls back if they differ.

Images. torchvision's ``ToTensor`` then ``Normalize`` copy the pixels three times;
:func:`tensor_tail` does the same arithmetic in the same order (uint8 -> float32, divide by
255, subtract the mean, divide by the std, per channel) on one copy, so the result is
bit-identical (tested) at a third of the cost. Resizing and cropping stay torchvision's/PIL's:
reduced-size JPEG decoding (draft mode) would change the pixels the model sees, so it is not
used.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from foilbench.models.openclip.pooled import (
    block_blocker,
    last_block_at,
    run_blocks,
    text_rows_mask,
)

POSITION_POOLS = ("argmax", "eos", "first")
TO_TENSOR = ("ToTensor", "MaybeToTensor")


def trim_blocker(model: Any) -> str | None:
    """Why trimming would not be exact for ``model`` (None: it is)."""
    import open_clip

    if type(model) is not open_clip.CLIP:
        return f"{type(model).__name__} has its own text tower"
    if getattr(model, "attn_mask", None) is None:
        return "the text tower has no causal mask (it attends both ways)"
    pool = getattr(model, "text_pool_type", None)
    if pool not in POSITION_POOLS:
        return f"the text tower pools with {pool!r}, not at one position"
    return None


def pooled_positions(model: Any, tokens: Any) -> Any:
    """Per row, the position whose features ``encode_text`` keeps."""
    import torch

    pool = model.text_pool_type
    if pool == "argmax":
        return tokens.argmax(dim=-1)
    if pool == "eos":
        return (tokens == model.text_eos_id).int().argmax(dim=-1)
    return torch.zeros(tokens.shape[0], dtype=torch.long)


def encode_text_trimmed(model: Any, tokens: Any) -> Any:
    """``model.encode_text(tokens)`` computed on the tokens up to the last pooled position."""
    import torch
    from open_clip.transformer import text_global_pool

    if tokens.shape[0] == 0:
        return model.encode_text(tokens)
    length = int(pooled_positions(model, tokens).max()) + 1
    tokens = tokens[:, :length]
    cast = model.transformer.get_cast_dtype()
    x = model.token_embedding(tokens).to(cast)
    x = x + model.positional_embedding[:length].to(cast)
    mask = model.attn_mask[:length, :length]
    last = model.transformer.resblocks[-1]
    if getattr(model.transformer, "batch_first", False) and block_blocker(last) is None:
        # the last block at each row's pooled position only (models/openclip/pooled.py)
        rows = pooled_positions(model, tokens)
        x = run_blocks(model.transformer.resblocks, x, attn_mask=mask)
        x = last_block_at(last, x, rows, text_rows_mask(mask, rows, last.attn.num_heads))
        x = model.ln_final(x)[:, 0]
    else:
        x = model.transformer(x, attn_mask=mask)
        x = model.ln_final(x)
        x = text_global_pool(x, tokens, model.text_pool_type,
                             eos_token_id=getattr(model, "text_eos_id", None))
    proj = model.text_projection
    if proj is None:
        return x
    return proj(x) if isinstance(proj, torch.nn.Linear) else x @ proj


def tensor_tail(preprocess: Any) -> tuple[Any, np.ndarray, np.ndarray] | None:
    """``(head, mean, std)`` when ``preprocess`` ends with ToTensor then Normalize (``head``:
    the transforms before them, a callable on a PIL image), else None."""
    steps = list(getattr(preprocess, "transforms", []))
    if len(steps) < 2 or type(steps[-1]).__name__ != "Normalize" \
            or type(steps[-2]).__name__ not in TO_TENSOR:
        return None
    norm = steps[-1]
    mean = np.asarray(norm.mean, dtype=np.float32).reshape(-1)
    std = np.asarray(norm.std, dtype=np.float32).reshape(-1)
    head = steps[:-2]

    def run_head(image):
        for step in head:
            image = step(image)
        return image

    return run_head, mean, std


def to_normalised_tensor(image: Any, mean: np.ndarray, std: np.ndarray) -> Any:
    """``Normalize(mean, std)(ToTensor()(image))`` for an 8-bit RGB image (PIL or a uint8
    (H, W, C) array): the same IEEE float32 operations in the same order, so the same bits.
    An 8-bit channel has 256 values, so the three operations are done once per value
    (:func:`channel_table`) and each pixel is a table look-up, written straight into a
    contiguous (C, H, W) array. numpy, not torch, so a prefetch thread never starts torch's
    intra-op thread pool."""
    import torch

    pixels = np.asarray(image, dtype=np.uint8)
    if pixels.ndim != 3:
        raise ValueError(f"expected (H, W, C) pixels, got shape {pixels.shape}")
    table = channel_table(mean.tobytes(), std.tobytes(), pixels.shape[2])
    out = np.empty((pixels.shape[2], *pixels.shape[:2]), dtype=np.float32)
    for c in range(pixels.shape[2]):
        np.take(table[c], pixels[:, :, c], out=out[c])
    return torch.from_numpy(out)


@functools.lru_cache(maxsize=32)
def channel_table(mean: bytes, std: bytes, channels: int) -> np.ndarray:
    """(channels, 256) float32: ``(float32(v) / 255 - mean[c]) / std[c]`` for every 8-bit
    value v, each step rounded to float32 as ToTensor + Normalize round it."""
    m = np.frombuffer(mean, dtype=np.float32)
    s = np.frombuffer(std, dtype=np.float32)
    values = np.broadcast_to(np.arange(256, dtype=np.float32), (channels, 256)).copy()
    values /= np.float32(255)
    values -= np.broadcast_to(m.reshape(-1, 1), (channels, 1))
    values /= np.broadcast_to(s.reshape(-1, 1), (channels, 1))
    values.setflags(write=False)
    return values
