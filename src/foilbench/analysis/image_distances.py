"""Learned image distances for the dataset controls, from local weights (CompoSET App. F.1).

CompoSET App. F.1: "we resize images to 512 x 512 and compute pixel-level (...), structural
(SSIM, MS-SSIM), perceptual (LPIPS-AlexNet, LPIPS-VGG, DISTS), and semantic (DINOv2-base CLS
cosine, CLIP ViT-B/32 image cosine) metrics." Pixel and structural metrics are in
:mod:`foilbench.analysis.pixel_controls`; the CLIP cosine is the similarity-gap audit with a
model spec. This module adds the two learned ones the paper names, each only when the user
names local weights (nothing downloads):

* :class:`LpipsDistance` -- LPIPS (Zhang et al. 2018) from the ``lpips`` package, whose wheel
  ships the learned linear layers (v0.1); the backbone (AlexNet or VGG16 ``features``) is read
  from a local torchvision state dict (``alexnet-owt-7be5be79.pth``, ``vgg16-397923af.pth``,
  safetensors or a ``torch.load(weights_only=True)`` file). Inputs are the 512 x 512 audit
  arrays scaled to [-1, 1], as LPIPS expects. 0 for identical images.
* :class:`Dinov2Cosine` -- cosine of the DINOv2 CLS embeddings (``pooler_output``, the
  layer-normed CLS token) of a local transformers ``Dinov2Model`` directory with its image
  processor (e.g. facebook/dinov2-base saved with ``save_pretrained``). 1 for identical images.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from foilbench.errors import ModelError

LPIPS_NETS = {"alex": "alexnet-owt-7be5be79.pth", "vgg": "vgg16-397923af.pth"}


def _state_dict(path: Path) -> dict:
    import torch

    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(str(path))
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any unreadable file gets one clear message
        raise ModelError(f"LPIPS backbone weights {path}: not a readable state dict "
                         f"({type(e).__name__}: {e})") from None


def _backbone_file(path: Path, net: str) -> Path:
    if path.is_dir():
        candidates = [path / LPIPS_NETS[net]] + sorted(path.glob("*.safetensors")) + sorted(
            path.glob("*.pth"))
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise ModelError(f"LPIPS-{net}: no backbone weights in {path} (expected "
                             f"{LPIPS_NETS[net]}, torchvision's {net} state dict, or a "
                             ".safetensors file)")
        return found
    if not path.is_file():
        raise ModelError(f"LPIPS-{net}: backbone weights not found at {path} (give torchvision's "
                         f"{LPIPS_NETS[net]} or a folder holding it; nothing is downloaded)")
    return path


class LpipsDistance:
    """LPIPS between two (H, W, 3) float arrays in [0, 1], backbone from local weights."""

    def __init__(self, weights: str | Path, net: str = "alex") -> None:
        if net not in LPIPS_NETS:
            raise ModelError(f"LPIPS net must be one of {', '.join(LPIPS_NETS)}, got {net!r}")
        try:
            import lpips
        except ImportError:
            raise ModelError("LPIPS needs the package lpips (pip install 'foilbench[audit]')"
                             ) from None
        import warnings

        file = _backbone_file(Path(weights), net)
        with warnings.catch_warnings():  # torchvision's note on the deprecated 'pretrained'
            warnings.simplefilter("ignore", UserWarning)
            model = lpips.LPIPS(pretrained=True, net=net, pnet_rand=True, verbose=False)
        state = {k.removeprefix("features."): v for k, v in _state_dict(file).items()}
        target = {}
        for name in model.net.state_dict():
            _slice, index, param = name.split(".")
            if f"{index}.{param}" not in state:
                raise ModelError(f"LPIPS-{net}: {file} lacks features.{index}.{param} (expected "
                                 f"torchvision's {net} state dict)")
            target[name] = state[f"{index}.{param}"]
        try:
            model.net.load_state_dict(target, strict=True)
        except RuntimeError as e:
            raise ModelError(f"LPIPS-{net}: {file} does not fit the {net} backbone: {e}") from None
        self.model = model.eval()
        self.name = f"lpips_{net}"
        self.source = str(file)

    def __call__(self, a: np.ndarray, b: np.ndarray) -> float:
        import torch

        to = lambda x: torch.from_numpy(  # noqa: E731
            np.ascontiguousarray(np.asarray(x, np.float32).transpose(2, 0, 1))[None] * 2 - 1)
        with torch.no_grad():
            return float(self.model(to(a), to(b)).item())


class Dinov2Cosine:
    """Cosine of DINOv2 CLS embeddings, model and image processor from a local directory."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not (path / "config.json").is_file():
            raise ModelError(f"DINOv2: {path} is not a local transformers model directory (no "
                             "config.json; save facebook/dinov2-base with save_pretrained, "
                             "nothing is downloaded)")
        if not (path / "preprocessor_config.json").is_file():
            raise ModelError(f"DINOv2: {path} has no preprocessor_config.json (save the image "
                             "processor beside the model)")
        from transformers import AutoImageProcessor, AutoModel

        self.processor = AutoImageProcessor.from_pretrained(path, local_files_only=True)
        self.model = AutoModel.from_pretrained(path, local_files_only=True).eval()
        self.name = "dinov2_cosine"
        self.source = str(path)

    def embed(self, images: list) -> np.ndarray:
        """Unit-norm CLS embeddings (``pooler_output``) of PIL images."""
        import torch

        with torch.no_grad():
            inputs = self.processor(images=images, return_tensors="pt")
            cls = self.model(**inputs).pooler_output.float().numpy().astype(np.float64)
        return cls / np.maximum(np.linalg.norm(cls, axis=1, keepdims=True), 1e-12)

    def __call__(self, a, b) -> float:
        """Cosine of two images (PIL, or (H, W, 3) float arrays in [0, 1])."""
        e = self.embed([_pil(a), _pil(b)])
        return float(e[0] @ e[1])


def _pil(x):
    from PIL import Image

    if isinstance(x, np.ndarray):
        return Image.fromarray(np.clip(np.round(x * 255), 0, 255).astype(np.uint8))
    return x
