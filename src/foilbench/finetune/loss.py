"""Contrastive losses with K hard negative captions per positive.

NegCLIP (Yuksekgonul et al. 2023, Sec. 4), which Auto-Comp App. A.9 follows ("the augmented
InfoNCE recipe of NegCLIP [26], extending the in-batch negatives with the K per-positive hard
negatives"): for B images with unit embeddings U, their captions V and the batch's hard
negative captions N (B*K rows, a missing one masked), scale s = exp(t):

    L = 1/2 [ CE(s U [V; N]^T, y) + CE(s V U^T, y) ],   y = (0, ..., B-1)

every image ranks its caption above all B + B*K texts; the text-to-image term is unchanged.

SigLIP ("for SigLIP we adapt the same augmentation to the sigmoid loss of [27] with the bias
parameter b and the temperature kept trainable"): Zhai et al. 2023, Eq. 1,

    L = -1/B sum_i sum_j log sigmoid(z_ij (s u_i . w_j + b)),  z_ij = +1 if j is i's caption
                                                               else -1

over the columns w = [V; N]; hard negatives are more -1 labels.
"""

from __future__ import annotations

import torch


def check_shapes(img: torch.Tensor, txt: torch.Tensor, negs: torch.Tensor | None,
                 neg_valid: torch.Tensor | None) -> None:
    """B images and B captions of one width d; negatives (M, d) with an (M,) validity mask.
    A mismatch would broadcast or index silently into a wrong loss, so it is an error."""
    if img.ndim != 2 or txt.shape != img.shape:
        raise ValueError(f"loss: images {tuple(img.shape)} and captions {tuple(txt.shape)} "
                         "must both be (B, d), one caption per image")
    if negs is not None:
        if negs.ndim != 2 or negs.shape[1] != img.shape[1]:
            raise ValueError(f"loss: hard negatives {tuple(negs.shape)} must be (M, "
                             f"{img.shape[1]}), the embedding width of the images")
        if neg_valid is not None and tuple(neg_valid.shape) != (negs.shape[0],):
            raise ValueError(f"loss: the negative mask {tuple(neg_valid.shape)} must be "
                             f"({negs.shape[0]},), one flag per negative")
    elif neg_valid is not None:
        raise ValueError("loss: a negative mask without negatives")


def negclip_loss(img: torch.Tensor, txt: torch.Tensor, negs: torch.Tensor | None,
                 neg_valid: torch.Tensor | None, scale: torch.Tensor) -> torch.Tensor:
    """Augmented InfoNCE (unit-norm inputs); ``neg_valid`` (M,) bool masks missing
    negatives."""
    check_shapes(img, txt, negs, neg_valid)
    target = torch.arange(len(img), device=img.device)
    texts = txt if negs is None else torch.cat([txt, negs])
    logits = scale * img @ texts.T
    if negs is not None and neg_valid is not None:
        keep = torch.cat([torch.ones(len(txt), dtype=torch.bool, device=img.device),
                          neg_valid.to(img.device)])
        logits = logits.masked_fill(~keep, float("-inf"))
    i2t = torch.nn.functional.cross_entropy(logits, target)
    t2i = torch.nn.functional.cross_entropy(scale * txt @ img.T, target)
    return (i2t + t2i) / 2


def sigmoid_loss(img: torch.Tensor, txt: torch.Tensor, negs: torch.Tensor | None,
                 neg_valid: torch.Tensor | None, scale: torch.Tensor,
                 bias: torch.Tensor) -> torch.Tensor:
    """SigLIP's pairwise sigmoid loss over [captions; hard negatives], summed over columns,
    averaged over images (Zhai et al. 2023, Eq. 1)."""
    check_shapes(img, txt, negs, neg_valid)
    texts = txt if negs is None else torch.cat([txt, negs])
    logits = scale * img @ texts.T + bias
    labels = -torch.ones_like(logits)
    labels[:, :len(txt)].fill_diagonal_(1.0)
    terms = -torch.nn.functional.logsigmoid(labels * logits)
    if negs is not None and neg_valid is not None:
        keep = torch.cat([torch.ones(len(txt), dtype=torch.bool, device=img.device),
                          neg_valid.to(img.device)])
        terms = terms * keep.to(terms.dtype)
    return terms.sum() / len(img)
