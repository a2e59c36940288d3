"""One fine-tuning run: one arm (Swap-only or Confusion-only), one seed.

Schedule (Auto-Comp App. A.9): AdamW (beta1 0.9, beta2 0.98, weight decay 0.1), peak LR 1e-6
reached by linear warm-up over 500 steps, then cosine decay to zero at 5,000 steps; both
encoders unfrozen; "early stopping on validation Confusion accuracy". Weight decay applies to
weight matrices only (not gains, biases, embeddings' positions or the temperature/bias), as
open_clip's own training does; the paper does not say (our reading).

Early stopping (interval and patience are ours; the paper gives neither): validation
Confusion R@1 (all negatives, strict >) at step 0 and every ``eval_every`` steps; the best
state wins (ties keep the earlier), and training stops after ``patience`` evaluations without
a strictly better one. Step 0 counts, so a run that never improves returns the pretrained
weights, and the log says so (``best_step`` 0).

Matched arms: the positives of each step come from a generator seeded by the seed alone, so
the Swap and Confusion arms of one seed see the same batches; only the negative columns
differ (their own generator, seeded by seed and arm).

Batches of ``batch_size`` positives; with ``micro_batch`` > 0 the gradient is accumulated
over micro-batches (each micro-batch's loss weighted by its share). In-batch negatives then
come from the micro-batch only, a departure from one 2048-positive batch (a GradCache-style
exact version is not implemented). On cuda, ``mixed_precision`` runs the forward passes under
bfloat16 autocast.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import torch
from PIL import Image

from foilbench.finetune.config import FinetuneConfig
from foilbench.finetune.data import EvalItem, Example
from foilbench.finetune.evaluate import item_outcomes
from foilbench.finetune.loss import negclip_loss, sigmoid_loss
from foilbench.finetune.negatives import draw_negatives
from foilbench.finetune.towers import Towers
from foilbench.train.schedule import lr_at


def _optimizer(model: torch.nn.Module, cfg: FinetuneConfig) -> torch.optim.AdamW:
    decay, rest = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        keep = p.ndim >= 2 and "positional" not in name and "position" not in name
        (decay if keep else rest).append(p)
    return torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                              {"params": rest, "weight_decay": 0.0}],
                             lr=cfg.lr, betas=cfg.betas)


def val_accuracy(towers: Towers, items: Sequence[EvalItem]) -> float:
    """Validation Confusion R@1 (the early-stopping signal)."""
    towers.model.eval()
    out = item_outcomes(towers.adapter, items)
    return float(out["r1"].mean()) if len(out) else float("nan")


def _loss(towers: Towers, images: list[Image.Image], positives: list[str],
          negatives: list[list[str]], k: int) -> torch.Tensor:
    img = towers.encode_images(towers.pixels(images))
    flat = [t for row in negatives for t in (row or [""] * k)]
    valid = torch.tensor([bool(row) for row in negatives for _ in range(k)])
    txt = towers.encode_texts(towers.tokens(positives + flat))
    pos, neg = txt[:len(positives)], txt[len(positives):]
    bias = towers.bias()
    if bias is not None:
        return sigmoid_loss(img, pos, neg, valid, towers.scale(), bias)
    return negclip_loss(img, pos, neg, valid, towers.scale())


def train_arm(towers: Towers, train: Sequence[Example], val: Sequence[EvalItem], arm: str,
              seed: int, cfg: FinetuneConfig,
              log: Callable[[str], None] = lambda msg: None) -> dict:
    """Fine-tune ``towers`` in place (ending on the best validation state); returns the
    training log."""
    torch.manual_seed(seed)
    batch_rng = np.random.default_rng([seed, 0xBA7C])
    neg_rng = np.random.default_rng([seed, 0x4E6, ("swap", "confusion").index(arm)])
    images: dict[str, Image.Image] = {}
    for ex in train:
        with Image.open(ex.image) as im:
            images[ex.concept_id] = im.convert("RGB")
    opt = _optimizer(towers.model, cfg)
    batch = min(cfg.batch_size, len(train))
    micro = cfg.micro_batch or batch
    cuda = str(towers.device).startswith("cuda")
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if cuda and cfg.mixed_precision \
        else _nothing()
    best, best_step = val_accuracy(towers, val), 0
    best_state, curve, losses = towers.state(), [(0, best)], []
    stale, start, step = 0, time.perf_counter(), 0
    log(f"{arm} seed {seed}: step 0, validation Confusion R@1 {best:.3f}")
    for step in range(1, cfg.steps + 1):
        towers.model.train()
        chosen = batch_rng.choice(len(train), batch, replace=False)
        for group in opt.param_groups:
            group["lr"] = lr_at(step - 1, cfg)
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for lo in range(0, batch, micro):
            part = [train[int(i)] for i in chosen[lo:lo + micro]]
            negs = [draw_negatives(ex, arm, cfg.k, neg_rng) for ex in part]
            with autocast:
                loss = _loss(towers, [images[ex.concept_id] for ex in part],
                             [ex.positive for ex in part], negs, cfg.k)
            (loss * len(part) / batch).backward()
            total += loss.item() * len(part) / batch
        opt.step()
        losses.append(total)
        if step % cfg.eval_every == 0 or step == cfg.steps:
            acc = val_accuracy(towers, val)
            curve.append((step, acc))
            log(f"{arm} seed {seed}: step {step}, loss {np.mean(losses[-cfg.eval_every:]):.4f}, "
                f"validation Confusion R@1 {acc:.3f}")
            if acc > best:
                best, best_step, best_state, stale = acc, step, towers.state(), 0
            else:
                stale += 1
                if stale >= cfg.patience:
                    break
    towers.load_state(best_state)
    towers.model.eval()
    return {"arm": arm, "seed": seed, "steps_run": step, "best_step": best_step,
            "best_val_confusion_r1": best, "val_curve": curve,
            "first_loss": losses[0] if losses else None,
            "final_loss": float(np.mean(losses[-20:])) if losses else None,
            "seconds": round(time.perf_counter() - start, 1), "batch_positives": batch,
            "micro_batch": micro, "train_concepts": len(train), "val_items": len(val)}


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
