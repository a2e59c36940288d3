"""Architecture of the embedded dual encoder (small enough to train on 2 CPU cores).

Image tower: a strided CNN stem turns the image into a grid of feature tokens; a learned
position embedding and transformer layers let tokens see each other (binding "red" to the cube
on the left needs where as well as what), and a [CLS] token pools them. The stem is given
layer by layer (``stem``: ``(width, stride)`` pairs). The shipped models read 128 px through
four stride-2 layers (24, 48, 96, 128 channels) down to an 8x8 grid, one token per 16 px
cell, about one object at the suite's scale: at 64 px (the first shipped stem, ``stem=()``: three stride-2 layers from ``cnn_width``)
a medium object was about 6 px wide, too few for its shape or material, and base and foil
images of a single edit came out with nearly the same embedding.
Text tower: word embeddings plus learned position embeddings (so "a red cube and a blue
sphere" differs from "a blue cube and a red sphere"), a small transformer, [CLS] pooling.
Both project to a shared space; a learned temperature scales the cosine logits (CLIP).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class ArchConfig:
    image_size: int = 64
    cnn_width: int = 48
    token_dim: int = 128
    image_layers: int = 1
    image_pool: str = "cls"  # "cls": attention over the grid; "mean": average of grid tokens
    stem: tuple = ()  # ((width, stride), ...) conv layers; () = the 64 px stem from cnn_width
    vocab_size: int = 64
    max_len: int = 48
    text_layers: int = 2
    heads: int = 4
    mlp_ratio: int = 2
    embed_dim: int = 128

    def as_dict(self) -> dict:
        return asdict(self)

    def stem_layers(self) -> tuple[tuple[int, int], ...]:
        """The conv stem as (width, stride) pairs; the last width is ``token_dim``."""
        if self.stem:
            layers = tuple((int(w), int(s)) for w, s in self.stem)
            return layers[:-1] + ((self.token_dim, layers[-1][1]),)
        w = self.cnn_width
        return ((w, 2), (2 * w, 2), (self.token_dim, 2), (self.token_dim, 1))

    def grid(self) -> int:
        """Side of the token grid: the image size over the stem's total stride."""
        total = math.prod(s for _, s in self.stem_layers())
        if self.image_size % total:
            raise ValueError(f"image_size {self.image_size} is not a multiple of the stem's "
                             f"total stride {total}")
        return self.image_size // total


def _encoder(dim: int, heads: int, mlp_ratio: int, layers: int) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(dim, heads, dim * mlp_ratio, dropout=0.0,
                                       activation="gelu", batch_first=True, norm_first=True)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)


def _conv(c_in: int, c_out: int, stride: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False),
                         nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class ImageTower(nn.Module):
    """(n, 3, S, S) floats in [-1, 1] -> (n, embed_dim)."""

    def __init__(self, cfg: ArchConfig) -> None:
        super().__init__()
        d = cfg.token_dim
        layers, c_in = [], 3
        for width, stride in cfg.stem_layers():
            layers.append(_conv(c_in, width, stride))
            c_in = width
        self.stem = nn.Sequential(*layers)
        grid = cfg.grid()
        self.pos = nn.Parameter(torch.randn(1, grid * grid + 1, d) * 0.02)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.encoder = _encoder(d, cfg.heads, cfg.mlp_ratio, cfg.image_layers)
        self.pool = cfg.image_pool
        self.norm = nn.LayerNorm(d)
        self.proj = nn.Linear(d, cfg.embed_dim, bias=False)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        tokens = self.stem(images).flatten(2).transpose(1, 2)  # (n, grid*grid, d)
        tokens = torch.cat([self.cls.expand(len(tokens), -1, -1), tokens], dim=1) + self.pos
        tokens = self.encoder(tokens)
        pooled = tokens[:, 0] if self.pool == "cls" else tokens[:, 1:].mean(dim=1)
        return self.proj(self.norm(pooled))


class TextTower(nn.Module):
    """(n, max_len) token ids, 0 = padding, [CLS] first -> (n, embed_dim)."""

    def __init__(self, cfg: ArchConfig) -> None:
        super().__init__()
        d = cfg.token_dim
        self.embed = nn.Embedding(cfg.vocab_size, d, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(1, cfg.max_len, d) * 0.02)
        self.encoder = _encoder(d, cfg.heads, cfg.mlp_ratio, cfg.text_layers)
        self.norm = nn.LayerNorm(d)
        self.proj = nn.Linear(d, cfg.embed_dim, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids) + self.pos[:, : ids.shape[1]]
        x = self.encoder(x, src_key_padding_mask=ids == 0)
        return self.proj(self.norm(x[:, 0]))


class DualEncoderNet(nn.Module):
    """Both towers and the CLIP temperature; outputs are L2-normalised."""

    def __init__(self, cfg: ArchConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.image = ImageTower(cfg)
        self.text = TextTower(cfg)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def encode_images(self, images: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.image(images), dim=-1)

    def encode_texts(self, ids: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.text(ids), dim=-1)

    def scale(self) -> torch.Tensor:
        """exp(logit_scale), clamped at 100 as in CLIP so the logits cannot blow up."""
        return self.logit_scale.exp().clamp(max=100.0)
