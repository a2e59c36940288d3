"""The training loop: symmetric InfoNCE, optionally with hard negative captions in the batch.

Loss (CLIP, Radford et al. 2021, Sec. 2.3 pseudo-code), for a batch of B images x_i and their
captions t_i with unit embeddings u_i, v_i and learned temperature s = exp(logit_scale):

    L = 1/2 [ CE(s * U V'^T, y) + CE(s * V U^T, y) ],   y = (0, ..., B-1)

With hard negatives (NegCLIP, Yuksekgonul et al. 2023, Sec. 4) every image's K negative
captions are appended to the text side of the image-to-text logits, V' = [V; N], so each image
must rank its caption above all B + B*K texts; a missing negative is a column of -inf. The
text-to-image term is unchanged. Recipes follow Auto-Comp's matched comparison, "a Swap-only
baseline using K=3 Swap negatives per positive, and a Confusion variant using K=3 Confusion
negatives" (§5), the Confusion ones "stratified across the four error families" (App. A.9):
``plain`` (V' = V), ``swapneg`` (+ K = 3 Swap columns per image), ``confneg`` (+ K = 3
Confusion columns per image, no Swap columns). The negatives are made by
:mod:`foilbench.train.hard_negatives`; K is ``DataConfig.k_negatives``.

Curriculum: the first ``minimal_first`` of the steps show Minimal-condition scenes only (in a
short trial, clutter from the start left the loss at the "which backdrop" level for hundreds
of steps), the rest draws from all scenes.

Batches: ``twin_share`` of each batch is edited twin pairs (both images of one single edit,
each with the edit's caption; :mod:`foilbench.train.twins`), the rest distinct ordinary scenes.

Fine-tuning (``init``): a stage may start from another model's weights, as NegCLIP and
Auto-Comp fine-tune a pretrained CLIP with their hard negatives; the pipeline trains one plain
model and fine-tunes it three times (plain, swapneg, confneg) with the same batches, so the
three shipped models differ only in the negative columns of their last stage.

Determinism: numpy and torch seeded from ``seed``, deterministic torch algorithms, a fixed
thread count; same seed, threads and torch build -> identical weights.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
from tqdm import tqdm

from foilbench.models.embedded_arch import ArchConfig, DualEncoderNet
from foilbench.models.embedded_preprocess import arrays_to_tensor
from foilbench.models.word_tokenizer import WordTokenizer, trim_padding
from foilbench.train.dataset import TrainingData
from foilbench.train.schedule import lr_at

RECIPES: dict[str, tuple[str, ...]] = {
    "plain": (),
    "swapneg": ("swap",),
    "confneg": ("confusion",),
}


@dataclass(frozen=True)
class TrainConfig:
    recipe: str = "plain"
    steps: int = 1000
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.05
    warmup: int = 100
    clip_norm: float = 1.0  # gradient-norm clip: guards against collapse to constant outputs
    minimal_first: float = 0.4  # fraction of steps that show only Minimal-condition images
    seed: int = 0
    threads: int = 1
    twin_share: float = 0.5  # fraction of a batch filled with edited twin pairs (if any)
    finetune_steps: int = 0  # > 0: pretrain plain for ``steps``, then fine-tune each recipe
    finetune_lr: float = 3e-4
    finetune_warmup: int = 50

    def __post_init__(self) -> None:
        if self.recipe not in RECIPES:
            raise ValueError(f"unknown recipe {self.recipe!r}; possible: {', '.join(RECIPES)}")
        if self.steps < 1 or self.batch_size < 2 or self.finetune_steps < 0:
            raise ValueError("steps must be >= 1, finetune_steps >= 0 and batch_size >= 2")

    def finetune(self, recipe: str) -> TrainConfig:
        """The fine-tuning stage of ``recipe``: its own steps, lr and warm-up, no curriculum;
        the seed is the same for every recipe, so all fine-tunes see the same batches."""
        return replace(self, recipe=recipe, steps=self.finetune_steps, lr=self.finetune_lr,
                       warmup=self.finetune_warmup, minimal_first=0.0, finetune_steps=0)

    def as_dict(self) -> dict:
        return asdict(self)


def contrastive_loss(img: torch.Tensor, txt: torch.Tensor, negs: torch.Tensor | None,
                     neg_valid: torch.Tensor | None, scale: torch.Tensor) -> torch.Tensor:
    """Symmetric InfoNCE; ``negs`` (M, d) extra text columns, ``neg_valid`` (M,) bool."""
    target = torch.arange(len(img))
    texts = txt if negs is None else torch.cat([txt, negs])
    logits = scale * img @ texts.T
    if negs is not None:
        mask = torch.cat([torch.ones(len(txt), dtype=torch.bool), neg_valid])
        logits = logits.masked_fill(~mask, float("-inf"))
    i2t = torch.nn.functional.cross_entropy(logits, target)
    t2i = torch.nn.functional.cross_entropy(scale * txt @ img.T, target)
    return (i2t + t2i) / 2


def negative_columns(data: TrainingData, recipe: str, images: np.ndarray,
                     which: np.ndarray) -> np.ndarray:
    """(len(images), K per kind x kinds) text indices of the recipe's negatives of each image's
    chosen mention (-1 = none, masked); zero columns for ``plain``."""
    kinds = {"swap": data.swap, "confusion": data.confusion}
    parts = [kinds[k][images, which] for k in RECIPES[recipe]]
    return np.concatenate(parts, axis=1) if parts else np.zeros((len(images), 0), np.int32)


def _draw(rng: np.random.Generator, pool: np.ndarray, k: int, minimal: np.ndarray,
          minimal_only: bool) -> np.ndarray:
    """``k`` distinct indices of ``pool`` (only Minimal ones when asked and there are enough)."""
    if minimal_only:
        clean = pool[minimal[pool]]
        if len(clean) >= max(k, 2):
            pool = clean
    return pool[rng.choice(len(pool), min(k, len(pool)), replace=False)]


def _twins(firsts: np.ndarray, twin: np.ndarray) -> np.ndarray:
    """Each pair's two images, side by side."""
    return np.stack([firsts, twin[firsts]], axis=1).reshape(-1)


def train_model(data: TrainingData, tokenizer: WordTokenizer, arch: ArchConfig,
                cfg: TrainConfig, progress: bool = True,
                init: dict | None = None) -> tuple[DualEncoderNet, dict]:
    """Train one model on ``data`` (from ``init``'s weights when given, a state dict);
    returns the network (eval mode) and a training log."""
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    torch.use_deterministic_algorithms(True)
    try:
        return _train(data, tokenizer, arch, cfg, progress, init)
    finally:
        torch.use_deterministic_algorithms(False)
        torch.set_num_threads(previous_threads)


def _train(data, tokenizer, arch, cfg, progress, init):
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(np.random.SeedSequence(entropy=cfg.seed, spawn_key=(2,)))
    text_ids, encode_stats = tokenizer.encode(data.texts)
    text_ids = torch.from_numpy(text_ids)
    net = DualEncoderNet(arch)
    if init is not None:
        net.load_state_dict(init)
    decay = [p for n, p in net.named_parameters() if p.ndim >= 2 and "pos" not in n]
    rest = [p for n, p in net.named_parameters() if not (p.ndim >= 2 and "pos" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=cfg.lr)
    twin = data.twin_index()
    pairs = np.flatnonzero((twin >= 0) & (twin > np.arange(len(twin))))  # first of each pair
    ordinary = np.flatnonzero(twin < 0)
    n_pairs = min(int(cfg.batch_size * cfg.twin_share) // 2, len(pairs))
    batch = min(cfg.batch_size - 2 * n_pairs, len(ordinary))
    net.train()
    losses, start = [], time.perf_counter()
    bar = tqdm(range(cfg.steps), desc=f"training {cfg.recipe}", disable=not progress, unit="step")
    for step in bar:
        early = step < cfg.minimal_first * cfg.steps  # curriculum: clean images first
        scenes = np.concatenate([_draw(rng, ordinary, batch, data.minimal, early),
                                 _twins(_draw(rng, pairs, n_pairs, data.minimal, early), twin)])
        which = rng.integers(data.positive.shape[1], size=len(scenes))
        n_ordinary = len(scenes) - 2 * n_pairs
        which[n_ordinary + 1::2] = which[n_ordinary::2]  # a twin pair shares its tier
        images = arrays_to_tensor(data.pixels[scenes])
        pos = data.positive[scenes, which]
        neg = negative_columns(data, cfg.recipe, scenes, which).T.reshape(-1)
        ids = trim_padding(text_ids[np.concatenate([pos, np.maximum(neg, 0)])])
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        img = net.encode_images(images)
        txt = net.encode_texts(ids)
        negs = txt[len(scenes):] if len(neg) else None
        valid = torch.from_numpy(neg >= 0) if len(neg) else None
        loss = contrastive_loss(img, txt[:len(scenes)], negs, valid, net.scale())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.clip_norm)
        opt.step()
        losses.append(loss.item())
        if step % 20 == 0 or step == cfg.steps - 1:
            bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}")
    net.eval()
    log = {"final_loss": float(np.mean(losses[-20:])), "first_loss": losses[0],
           "seconds": round(time.perf_counter() - start, 1), "steps": cfg.steps,
           "batch_size": batch + 2 * n_pairs, "twin_pairs_per_batch": n_pairs,
           "temperature": float(1 / net.scale().item()),
           "train_unknown_words": encode_stats.n_unknown,
           "train_truncated_texts": encode_stats.n_truncated,
           "loss_curve": [round(float(np.mean(losses[k:k + 50])), 4)
                          for k in range(0, len(losses), 50)]}
    return net, log
