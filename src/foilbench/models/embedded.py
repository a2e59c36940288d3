"""The embedded default models: small dual encoders trained on the procedural world.

Three variants share one architecture and data and differ only in the hard negatives seen in
training (see ``foilbench.train.loop``): ``foilbench-plain``, ``foilbench-swapneg``,
``foilbench-confneg``. Each ships as ``weights/<name>.safetensors`` (tensors) plus
``weights/<name>.json`` (architecture, vocabulary, preprocessing, training record).
``foilbench train`` rebuilds them from scratch.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
from PIL import Image

from foilbench.errors import ModelError
from foilbench.models.base import ModelInfo
from foilbench.models.batched import BatchedDualEncoder
from foilbench.models.embedded_preprocess import (
    PREPROCESS_VERSION,
    arrays_to_tensor,
    image_to_array,
)
from foilbench.models.word_tokenizer import EncodeStats, WordTokenizer, trim_padding

FORMAT = "foilbench-embedded-v1"
VARIANTS = ("plain", "swapneg", "confneg")


def weights_dir() -> Path:
    """The package folder holding the shipped weights."""
    return Path(__file__).resolve().parent.parent / "weights"


def model_name(variant: str) -> str:
    if variant not in VARIANTS:
        raise ModelError(f"unknown embedded variant {variant!r}; possible: {', '.join(VARIANTS)}")
    return f"foilbench-{variant}"


def save_model(net, tokenizer: WordTokenizer, record: dict, out_dir: Path, name: str) -> Path:
    """Write ``<name>.safetensors`` and ``<name>.json``; returns the safetensors path."""
    from safetensors.torch import save_file

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().contiguous().float() for k, v in net.state_dict().items()}
    path = out_dir / f"{name}.safetensors"
    # one metadata key only: safetensors writes a multi-key metadata map in arbitrary order,
    # which would make the same weights hash differently from run to run
    save_file(tensors, str(path), metadata={"format": FORMAT})
    config = {"format": FORMAT, "name": name, "arch": net.cfg.as_dict(),
              "tokenizer": tokenizer.to_config(), "preprocess": PREPROCESS_VERSION, **record}
    (out_dir / f"{name}.json").write_text(json.dumps(config, indent=1) + "\n")
    return path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class EmbeddedDualEncoder(BatchedDualEncoder):
    """Dual-encoder adapter over one saved embedded model (cosine scores)."""

    features_normalised = True  # DualEncoderNet.encode_* end with an L2 normalisation
    # The text tower masks padding keys and pools the [CLS] token at position 0, so dropping
    # trailing all-padding columns changes no real token's output: exact, and the long
    # Auto-Comp Confusion sets (728 negatives per N = 3 colour item) cost their words only.
    trims_text = True

    def __init__(self, weights: Path, spec: str | None = None, device: str = "auto",
                 dtype: str = "float32", batch_size: int = 256) -> None:
        import torch

        from foilbench.models.device import select_device, select_dtype
        from foilbench.models.embedded_arch import ArchConfig, DualEncoderNet
        from foilbench.models.weight_errors import load_safetensors

        weights = Path(weights)
        config_path = weights.with_suffix(".json")
        for path in (weights, config_path):
            if not path.exists():
                raise ModelError(f"embedded model file {path} is missing; rebuild it with "
                                 "`foilbench train --out <dir>` or reinstall foilbench")
        try:
            config = json.loads(config_path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ModelError(f"{config_path}: not valid JSON ({e})") from None
        if config.get("format") != FORMAT:
            raise ModelError(f"{config_path}: format {config.get('format')!r}, expected {FORMAT}")
        self.config = config
        self.device = select_device(device)
        self.torch_dtype = select_dtype(dtype, self.device)
        self.tokenizer = WordTokenizer.from_config(config["tokenizer"])
        self.net = DualEncoderNet(ArchConfig(**config["arch"]))
        self.net.load_state_dict(load_safetensors(weights, "embedded model weights"))
        self.net.to(device=self.device, dtype=self.torch_dtype).eval()
        self.batch_size = batch_size
        self.embed_dim = self.net.cfg.embed_dim
        self.text_stats = EncodeStats()
        self._torch = torch
        fingerprint = f"{config['name']}:sha256={file_sha256(weights)}:{PREPROCESS_VERSION}:{dtype}"
        self._info = ModelInfo(spec=spec or config["name"], fingerprint=fingerprint,
                               family=self.family, score_kind="cosine",
                               extras={"weights": str(weights), "recipe": config.get("recipe"),
                                       "image_size": self.net.cfg.image_size})

    @property
    def info(self) -> ModelInfo:
        return self._info

    def torch_module(self):
        """The network (its feature calls follow ``device``/``torch_dtype``)."""
        return self.net

    def image_features(self, images: list[Image.Image], offset: int):
        size = self.net.cfg.image_size
        pixels = [image_to_array(im, size, name=f"image {offset + k}")
                  for k, im in enumerate(images)]
        x = arrays_to_tensor(np.stack(pixels)).to(self.device).to(self.torch_dtype)
        return self.net.encode_images(x)

    def text_features(self, texts: list[str], offset: int):
        ids, stats = self.tokenizer.encode(list(texts))
        self._count(stats)
        return self.net.encode_texts(self._torch.from_numpy(trim_padding(ids)).to(self.device))

    def _count(self, stats: EncodeStats) -> None:
        total = self.text_stats
        total.n_texts += stats.n_texts
        total.n_unknown += stats.n_unknown
        total.n_truncated += stats.n_truncated
        for word, n in stats.unknown_words.items():
            total.unknown_words[word] = total.unknown_words.get(word, 0) + n

    def stats(self) -> dict:
        """Words this adapter could not represent so far ([UNK]) and truncated captions."""
        return self.text_stats.as_dict()


def load_variant(variant: str, device: str = "auto", dtype: str = "float32",
                 directory: Path | None = None) -> EmbeddedDualEncoder:
    name = model_name(variant)
    path = Path(directory or weights_dir()) / f"{name}.safetensors"
    return EmbeddedDualEncoder(path, spec=name, device=device, dtype=dtype)


def load_plain(device: str = "auto", dtype: str = "float32") -> EmbeddedDualEncoder:
    return load_variant("plain", device, dtype)


def load_swapneg(device: str = "auto", dtype: str = "float32") -> EmbeddedDualEncoder:
    return load_variant("swapneg", device, dtype)


def load_confneg(device: str = "auto", dtype: str = "float32") -> EmbeddedDualEncoder:
    return load_variant("confneg", device, dtype)
