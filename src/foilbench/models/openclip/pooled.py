"""open_clip's last transformer block computed only where the features are pooled.

A CLIP tower keeps one token per input: a ViT its class token (``pool_type="tok"``), a causal
text tower its end-of-text token (:func:`foilbench.models.openclip.fast.pooled_positions`).
Every other position of the *last* block feeds nothing that is kept: the block's attention
mixes the other positions into the kept one as keys and values, but its queries, its output
projection, its MLP and the final layer norm act on each position alone. So the last block
is run for the kept row only (:func:`last_block_at`): the layer norm over all positions (the
keys and values need it), attention with the one query, the residuals and the MLP on that
row. The arithmetic is the model's; the matrix shapes differ, so the last bits may (the
adapter compares with open_clip's own call on its first batch and falls back on a difference,
as for trimmed text). In a two-layer tiny tower this is about a quarter of an image's forward
pass and more of a caption's.

Used only where :func:`image_blocker` / :func:`block_blocker` find nothing against it:
open_clip's own ``VisionTransformer`` with class-token pooling, no attentional pooler and
batch-first ``ResidualAttentionBlock`` layers (self-attention through
``nn.MultiheadAttention``); other towers run open_clip's forward unchanged.
"""

from __future__ import annotations

from typing import Any


def block_blocker(block: Any) -> str | None:
    """Why :func:`last_block_at` would not compute ``block`` (None: it would)."""
    import torch

    if type(block).__name__ != "ResidualAttentionBlock" or \
            not type(block).__module__.startswith("open_clip"):
        return f"its last layer is a {type(block).__name__}"
    if hasattr(block, "ln_1_kv"):
        return "its last layer attends across towers"
    attn = getattr(block, "attn", None)
    if not isinstance(attn, torch.nn.MultiheadAttention) or not attn.batch_first:
        return "its last layer's attention is not batch-first nn.MultiheadAttention"
    return None


def image_blocker(visual: Any) -> str | None:
    """Why :func:`encode_image_pooled` would not be exact for ``visual`` (None: it is)."""
    if type(visual).__name__ != "VisionTransformer" or \
            not type(visual).__module__.startswith("open_clip"):
        return f"the image tower is a {type(visual).__name__}"
    if getattr(visual, "attn_pool", None) is not None or getattr(visual, "pool_type",
                                                                  None) != "tok":
        return "the image tower does not pool its class token"
    transformer = getattr(visual, "transformer", None)
    blocks = getattr(transformer, "resblocks", None)
    if not blocks or not getattr(transformer, "batch_first", False) or \
            getattr(transformer, "grad_checkpointing", False):
        return "the image tower's layers are not run one after another, batch first"
    return block_blocker(blocks[-1])


def last_block_at(block: Any, x: Any, rows: Any, attn_mask: Any = None) -> Any:
    """``block(x)`` at one row per batch element, shape (B, 1, D): ``rows`` (B,) the row;
    ``attn_mask`` (B * heads, 1, L) that row's additive mask, or None."""
    import torch

    batch = torch.arange(x.shape[0], device=x.device)
    normed = block.ln_1(x)  # every position: the keys and values
    query = normed[batch, rows].unsqueeze(1)
    kept = x[batch, rows].unsqueeze(1)
    h = kept + block.ls_1(block.attention(q_x=query, k_x=normed, v_x=normed,
                                          attn_mask=attn_mask))
    return h + block.ls_2(block.mlp(block.ln_2(h)))


def run_blocks(blocks: Any, x: Any, attn_mask: Any = None) -> Any:
    """``x`` through every block but the last (as open_clip's batch-first Transformer)."""
    for block in list(blocks)[:-1]:
        x = block(x, attn_mask=attn_mask)
    return x


def encode_image_pooled(model: Any, images: Any) -> Any:
    """``model.encode_image(images)`` with the last block at the class token only."""
    import torch

    visual = model.visual
    x = run_blocks(visual.transformer.resblocks, visual._embeds(images))
    rows = torch.zeros(x.shape[0], dtype=torch.long, device=x.device)
    x = last_block_at(visual.transformer.resblocks[-1], x, rows)
    pooled, _ = visual._pool(x)  # layer norm per row, then the class token (row 0 of 1)
    return pooled @ visual.proj if visual.proj is not None else pooled


def text_rows_mask(mask: Any, rows: Any, heads: int) -> Any:
    """The causal mask's rows at ``rows``, shaped for ``nn.MultiheadAttention`` with one
    query per batch element: (B * heads, 1, L), batch-major as it expects."""
    return mask[rows].unsqueeze(1).repeat_interleave(heads, dim=0)
