"""The blind-LLM multiple-choice baseline of Auto-Comp App. A.8: a language model, shown no
image, picks the caption from a shuffled list of the positive and its negatives.

Auto-Comp App. A.8: "To ensure hard negatives are linguistically indistinguishable from
positives, we adopt the "blind LLM" evaluation [5]. We tasked Gemma-3-12b-it with selecting the
correct caption from shuffled positive/negative sets without visual input (subsampling 49
negatives for N=3)." The subsampling is :mod:`foilbench.audit.blind_options`
(``--max-options 50``). The paper prints no prompt; ours (:data:`PROMPT`) numbers the options
1..K+1 in a seeded shuffled order (a generator per item seeded by (seed, item position)) and
ends with "Answer:"; the model's choice score for an option is the log-probability of its
number (" 7") as the continuation, summed over the number's tokens. A scorer ``mc:PATH``
(a local causal LM folder, e.g. an instruction-tuned Gemma saved with save_pretrained) gives
that score as the caption's feature, marked ``own_choice``: the audit scores the model's own
choice (its highest-scored option is the positive; strict >, a tie fails; Wilson intervals,
chance 1/(K+1)), the paper's rule, with no sign fitted. The cross-fitted sign is an option
(``--mc-reading crossfit``), labelled as such. Chat templates are not
applied (the prompt is plain text); an instruction-tuned model is asked as a base model is.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

PROMPT = ("One of these captions describes a picture you cannot see. Which one is it? "
          "Reply with its number.\n{options}\nAnswer:")


def shuffled_order(n_options: int, item: int, seed: int = 0) -> np.ndarray:
    """order[j] = the 0-based position at which option j (0: the positive) is listed."""
    return np.random.default_rng([seed, 0x3C, item]).permutation(n_options)


def mc_prompt(options: list[str], order: np.ndarray) -> str:
    """The prompt listing ``options`` at the positions ``order`` gives, numbered from 1."""
    listed = [""] * len(options)
    for j, pos in enumerate(order):
        listed[int(pos)] = options[j]
    return PROMPT.format(options="\n".join(f"{k + 1}. {t}" for k, t in enumerate(listed)))


def label_logprobs(tok, model, prompt: str, labels: list[str], device,
                   batch_size: int = 16) -> np.ndarray:
    """log p(label | prompt) summed over the label's tokens, for each label (the prompt is
    tokenised once; each label's tokens follow it)."""
    import torch

    head = tok(prompt, add_special_tokens=True)["input_ids"]
    tails = [tok(lab, add_special_tokens=False)["input_ids"] for lab in labels]
    limit = getattr(model.config, "max_position_embeddings", None) or getattr(
        model.config, "n_positions", None)
    if limit and len(head) + max(len(t) for t in tails) > limit:
        from foilbench.errors import ModelError

        raise ModelError(f"the multiple-choice prompt has {len(head)} tokens, more than the "
                         f"language model's {limit}; lower --max-options or use a model with "
                         "a longer context")
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    out = np.empty(len(labels))
    for start in range(0, len(labels), batch_size):
        chunk = tails[start:start + batch_size]
        width = len(head) + max(len(t) for t in chunk)
        x = torch.full((len(chunk), width), pad, dtype=torch.long)
        mask = torch.zeros_like(x)
        for r, t in enumerate(chunk):
            seq = head + t
            x[r, :len(seq)] = torch.tensor(seq)
            mask[r, :len(seq)] = 1
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=x.to(device),
                                           attention_mask=mask.to(device)).logits.float(), -1)
        for r, t in enumerate(chunk):
            pos = torch.arange(len(head) - 1, len(head) - 1 + len(t), device=logp.device)
            ids = torch.tensor(t, device=logp.device)
            out[start + r] = float(logp[r, pos, ids].sum())
    return out


def choice_features(feats: np.ndarray):
    """A feature function returning ``feats`` for any training mask, marked ``own_choice``:
    the larger value is the option the model itself picks (no sign to fit)."""
    def features(train_mask: np.ndarray) -> np.ndarray:
        return feats

    features.own_choice = True  # type: ignore[attr-defined]
    return features


def mc_scorer(texts: list[str], index: np.ndarray, path: str | Path, seed: int = 0,
              device: str = "auto"):
    """Feature per (item, caption): the log-probability the LM at ``path`` gives to that
    caption's number in the item's shuffled list (NaN where no caption)."""
    from foilbench.models.device import select_device
    from foilbench.models.text_models import causal_lm

    dev = select_device(device)
    tok, model = causal_lm(Path(path), dev)
    feats = np.full(index.shape, np.nan)
    for i, row in enumerate(index):
        slots = np.flatnonzero(row >= 0)
        options = [texts[int(row[s])] for s in slots]
        order = shuffled_order(len(options), i, seed)
        scores = label_logprobs(tok, model, mc_prompt(options, order),
                                [f" {int(order[j]) + 1}" for j in range(len(options))], dev)
        feats[i, slots] = scores
    return choice_features(feats)
