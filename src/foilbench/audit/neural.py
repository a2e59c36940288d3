"""Blind scorers backed by neural text models: the shipped MiniLM encoder and any local causal
LM. Both compute each unique caption once; only the cheap decision step is cross-fitted."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from foilbench.audit.crossfit import FeatureFn, gather
from foilbench.errors import ModelError
from foilbench.models.text_models import causal_lm, minilm


def embed_minilm(texts: list[str], device: str = "cpu", batch_size: int = 128) -> np.ndarray:
    """Unit-norm all-MiniLM-L6-v2 sentence embeddings (sentence-transformers; the model named
    by :func:`foilbench.models.text_models.minilm_name`, ``$FOILBENCH_MINILM`` or the Hub's
    ``sentence-transformers/all-MiniLM-L6-v2``)."""
    model = minilm(device)
    return np.asarray(model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                   show_progress_bar=len(texts) > 1000, convert_to_numpy=True),
                      dtype=np.float64)


def minilm_scorer(texts: list[str], index: np.ndarray, *,
                  embeddings: np.ndarray | None = None) -> FeatureFn:
    """Feature = e(c) . w with w = mean_train e(positive) - mean_train e(negatives).

    A linear probe in MiniLM space fitted on the training folds only: it captures any
    systematic direction separating positives from negatives (plausibility, topic, negation
    words) that a text-only adversary could exploit. The (unit-norm) embeddings of the unique
    texts are computed once; ``embeddings`` may be passed to reuse them.
    """
    emb = embed_minilm(texts) if embeddings is None else np.asarray(embeddings, np.float64)

    def features(train_mask: np.ndarray) -> np.ndarray:
        pos = index[train_mask, 0]
        neg = index[train_mask, 1:]
        neg = neg[neg >= 0]
        direction = emb[pos].mean(axis=0) - emb[neg].mean(axis=0)
        return gather(emb @ direction, index)

    return features


def causal_lm_logprobs(texts: list[str], path: str | Path, device: str = "auto",
                       batch_size: int = 32) -> np.ndarray:
    """Mean per-token log-probability of each text under a local causal LM directory
    (transformers ``AutoModelForCausalLM``). With a BOS token it is prepended and every text
    token is scored; without one the first token is context only."""
    import torch
    from tqdm import tqdm

    from foilbench.models.device import select_device

    dev = select_device(device)
    tok, model = causal_lm(Path(path), dev)
    bos = [tok.bos_token_id] if tok.bos_token_id is not None else []
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    limit = _context_length(model)
    out = np.empty(len(texts))
    for start in tqdm(range(0, len(texts), batch_size), desc="causal LM", unit="batch",
                      disable=len(texts) <= batch_size):
        chunk = texts[start : start + batch_size]
        ids = [bos + tok(t, add_special_tokens=False)["input_ids"] for t in chunk]
        width = max(len(x) for x in ids)
        if limit is not None and width > limit:
            r = max(range(len(ids)), key=lambda k: len(ids[k]))
            raise ModelError(
                f"text {start + r} is {len(ids[r])} tokens long, over the {limit} positions of "
                f"the language model at {path} ({chunk[r][:60]!r}...); a truncated text would "
                "be scored on part of its words, so use a model with a longer context")
        x = torch.full((len(ids), width), pad, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for r, seq in enumerate(ids):
            x[r, : len(seq)] = torch.tensor(seq)
            mask[r, : len(seq)] = 1
        with torch.no_grad():
            logits = model(input_ids=x.to(dev), attention_mask=mask.to(dev)).logits.float()
        logp = torch.log_softmax(logits[:, :-1], dim=-1)
        target = x[:, 1:].to(dev)
        tok_lp = logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        valid = mask[:, 1:].to(dev).float()
        out[start : start + len(chunk)] = ((tok_lp * valid).sum(1) /
                                           valid.sum(1).clamp(min=1)).cpu().numpy()
    return out


def _context_length(model) -> int | None:
    """The model's maximum sequence length from its config (GPT-2: ``n_positions``)."""
    cfg = model.config
    for name in ("max_position_embeddings", "n_positions", "n_ctx"):
        value = getattr(cfg, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def causal_lm_scorer(texts: list[str], index: np.ndarray, path: str | Path) -> FeatureFn:
    """Feature = mean token log-probability under the LM at ``path`` (nothing else learned)."""
    feats = gather(causal_lm_logprobs(texts, path), index)
    return lambda train_mask: feats
