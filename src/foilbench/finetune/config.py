"""The fine-tuning settings, defaulting to Auto-Comp App. A.9.

    "We fine-tune CLIP ViT-B/16 and SigLIP ViT-B/16 on a concept-disjoint partition of Color
    N=2 Minimal: 80% of source concepts for training (10% of which form a validation split for
    early stopping), 20% held out for evaluation. For each positive, we sample K=3 Confusion
    hard negatives stratified across the four error families [...] Optimization uses AdamW
    (beta1=0.9, beta2=0.98, weight decay 0.1) with peak LR 1e-6, cosine schedule, and 500
    warmup steps. Batch sizes are 2048 positives for CLIP and 4096 for SigLIP. We train for
    5,000 steps with early stopping on validation Confusion accuracy and report the mean over
    three seeds."  (Auto-Comp App. A.9)

The paper gives no early-stopping patience or validation interval; ours (``eval_every``,
``patience``) are stated choices. Every number is an option, so tests shrink them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from foilbench.errors import FoilbenchError

NEGATIVES = ("swap", "confusion")


class FinetuneError(FoilbenchError):
    """A fine-tuning setting or input that cannot work."""


@dataclass(frozen=True)
class FinetuneConfig:
    negatives: tuple[str, ...] = NEGATIVES  # the matched comparison: both arms
    k: int = 3
    task: str = "color"
    n_objects: int = 2
    condition: str = "minimal"
    train_share: float = 0.8
    val_share: float = 0.1  # of the training concepts
    lr: float = 1e-6
    betas: tuple[float, float] = (0.9, 0.98)
    weight_decay: float = 0.1
    warmup: int = 500
    steps: int = 5000
    batch_size: int = 2048  # positives per optimiser step (A.9, CLIP)
    micro_batch: int = 0  # 0: the whole batch in one pass; else gradient accumulation
    eval_every: int = 250  # validation Confusion accuracy every so many steps (our choice)
    patience: int = 4  # stop after this many evaluations without improvement (our choice)
    seeds: tuple[int, ...] = (0, 1, 2)
    split_seed: int = 0
    device: str = "cpu"
    mixed_precision: bool = True  # used only on cuda (bfloat16 autocast)

    def __post_init__(self) -> None:
        bad = [n for n in self.negatives if n not in NEGATIVES]
        if bad or not self.negatives:
            raise FinetuneError(f"--negatives {','.join(self.negatives)}: possible: "
                                f"{', '.join(NEGATIVES)} (comma-separated for both arms)")
        checks = {"k": self.k >= 1, "steps": self.steps >= 1, "batch_size": self.batch_size >= 2,
                  "warmup": self.warmup >= 0, "eval_every": self.eval_every >= 1,
                  "patience": self.patience >= 1, "lr": self.lr > 0,
                  "micro_batch": self.micro_batch >= 0,
                  "train_share": 0 < self.train_share < 1, "val_share": 0 < self.val_share < 1,
                  "seeds": len(self.seeds) >= 1}
        wrong = [name for name, ok in checks.items() if not ok]
        if wrong:
            raise FinetuneError(f"fine-tuning setting(s) out of range: {', '.join(wrong)} "
                                f"(k, steps, batch_size >= 2, eval_every, patience >= 1; "
                                "shares in (0, 1); lr > 0; at least one seed)")

    def as_dict(self) -> dict:
        return asdict(self)
