"""Architecture of the embedded dual encoder (small enough to train on 2 CPU cores).

Image tower: a strided CNN stem turns a 64 px image into an 8x8 grid of feature tokens; a
learned position embedding and one transformer layer let tokens see each other (binding
"red" to the cube on the left needs where as well as what), and a [CLS] token pools them.
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
    vocab_size: int = 64
    max_len: int = 48
    text_layers: int = 2
    heads: int = 4
    mlp_ratio: int = 2
    embed_dim: int = 128

    def as_dict(self) -> dict:
        return asdict(self)


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
        w, d = cfg.cnn_width, cfg.token_dim
        self.stem = nn.Sequential(_conv(3, w, 2), _conv(w, 2 * w, 2), _conv(2 * w, d, 2),
                                  _conv(d, d, 1))
        grid = cfg.image_size // 8
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
