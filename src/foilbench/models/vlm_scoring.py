"""Pure scoring of candidate continuations from next-token logits (torch tensors).

Layout. A shared prefix (image + prompt) ends with logits ``prefix_last`` (V,), the
distribution of the first continuation token. The continuation forward gives ``cont_logits``
(B, T, V) for B candidates right-padded to T tokens; row b has ``lengths[b]`` real tokens.
Position j of ``cont_logits`` predicts token j+1, so the predictor of token j is
``prefix_last`` for j = 0 and ``cont_logits[:, j-1]`` after. Right padding sits after the
real tokens and, attention being causal, never changes them.

Caption log-likelihood (the generative I2T primitive, e.g. VisualGPTScore, Lin et al. 2023):
    sum_j log p(t_j | image, prompt, t_<j)            ("sum")
    (1 / L) * sum_j log p(t_j | image, prompt, t_<j)  ("mean", length-normalised)
VQAScore (Lin et al. 2024): P("Yes" | image, question) at the answer position, either raw
(softmax over the whole vocabulary, as in the paper) or normalised over {Yes, No}:
P(Yes) / (P(Yes) + P(No)).
"""

from __future__ import annotations

import numpy as np


def predictor_logits(prefix_last, cont_logits):
    """(B, T, V) logits whose position j predicts continuation token j. ``prefix_last`` is
    (V,) when shared by every candidate, or (B, V) when each row computed its own prefix."""
    import torch

    b, v = cont_logits.shape[0], cont_logits.shape[-1]
    first = prefix_last.reshape(-1, 1, v).expand(b, 1, v)
    return torch.cat([first, cont_logits[:, :-1]], dim=1)


def continuation_loglik(prefix_last, cont_logits, cont_ids, lengths, norm: str) -> np.ndarray:
    """Per-candidate summed (``norm="sum"``) or mean (``"mean"``) token log-probabilities."""
    import torch

    logp = torch.log_softmax(predictor_logits(prefix_last, cont_logits).double(), dim=-1)
    tok = logp.gather(-1, cont_ids.unsqueeze(-1)).squeeze(-1)  # (B, T)
    lengths = torch.as_tensor(lengths, device=tok.device)
    mask = torch.arange(tok.shape[1], device=tok.device)[None, :] < lengths[:, None]
    total = (tok * mask).sum(dim=1)
    out = total / lengths.double() if norm == "mean" else total
    return out.cpu().numpy()


def answer_logits(cont_logits, lengths):
    """(B, V) logits after each candidate's last real token (the answer position)."""
    import torch

    idx = torch.as_tensor(lengths, device=cont_logits.device) - 1
    return cont_logits[torch.arange(cont_logits.shape[0], device=cont_logits.device), idx]


def yes_probability(logits, yes_id: int, no_id: int, mode: str) -> np.ndarray:
    """P(Yes) from (B, V) answer logits: ``"raw"`` softmax over the vocabulary, or
    ``"normalised"`` over the two answer tokens only."""
    import torch

    logits = logits.double()
    if mode == "normalised":
        pair = torch.stack([logits[:, yes_id], logits[:, no_id]], dim=1)
        return torch.softmax(pair, dim=1)[:, 0].cpu().numpy()
    return torch.softmax(logits, dim=-1)[:, yes_id].cpu().numpy()
