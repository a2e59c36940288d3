"""Differentiable access to a dual encoder's two towers, and saving the tuned weights so the
same spec scheme loads them.

A model spec resolves through :func:`foilbench.models.registry.resolve_model` (so the model
is built, preprocessed and tokenised exactly as ``foilbench run`` builds it); this module
reaches into the adapter's torch model for the forward passes with gradients:

* ``openclip:``: ``model.encode_image`` / ``model.encode_text`` on the adapter's own pixel
  tensors (``prepare_image``) and tokenizer; saved as ``model.safetensors``, reloaded as
  ``openclip:ARCH:OUT/model.safetensors`` (``ARCH-quickgelu`` when the model runs QuickGELU,
  so the activation survives the round trip) or ``openclip:CONFIG.json:OUT/model.safetensors``;
* ``hf:``: ``get_image_features`` / ``get_text_features`` with the adapter's processor and
  padding; saved with ``save_pretrained`` (safetensors) plus tokenizer and processor,
  reloaded as ``hf:OUT``.
"""

from __future__ import annotations

from pathlib import Path

import torch
from PIL import Image

from foilbench.finetune.config import FinetuneError


class Towers:
    """A trainable view of an adapter (``openclip`` or ``hf``)."""

    def __init__(self, adapter, spec: str) -> None:
        scheme = spec.partition(":")[0]
        if scheme not in ("openclip", "hf"):
            raise FinetuneError(f"--model {spec}: fine-tuning supports openclip:... and hf:... "
                                "dual encoders")
        extras = adapter.info.extras
        if scheme == "openclip" and not any(extras.get(k) for k in ("weights_sha256", "tag",
                                                                     "hub_id")):
            raise FinetuneError(f"--model {spec}: no weights (a randomly initialised model is "
                                "drawn anew at every load, so before and after would compare "
                                "different models); give CONFIG.json:/path/weights")
        self.adapter, self.spec, self.scheme = adapter, spec, scheme
        self.model = adapter.model
        self.device = adapter.device

    # -- inputs -----------------------------------------------------------------------------
    def pixels(self, images: list[Image.Image]) -> dict:
        if self.scheme == "openclip":
            batch = [self.adapter.prepare_image(im, k) for k, im in enumerate(images)]
            return {"pixels": torch.stack(batch).to(self.device)}
        enc = self.adapter.image_processor(images=[im.convert("RGB") for im in images],
                                           return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items()}

    def tokens(self, texts: list[str]) -> dict:
        if self.scheme == "openclip":
            return {"tokens": self.adapter.tokenizer(list(texts)).to(self.device)}
        enc = self.adapter.tokenizer(list(texts), padding=self.adapter.text_padding,
                                     truncation=True, return_tensors="pt")
        out = {"input_ids": enc["input_ids"].to(self.device)}
        if "attention_mask" in enc and not self.adapter.is_sigmoid_model:
            out["attention_mask"] = enc["attention_mask"].to(self.device)
        return out

    # -- forward ----------------------------------------------------------------------------
    def encode_images(self, inputs: dict) -> torch.Tensor:
        if self.scheme == "openclip":
            feats = self.model.encode_image(inputs["pixels"])
        else:
            feats = _features(self.model.get_image_features(**inputs))
        return torch.nn.functional.normalize(feats.float(), dim=-1)

    def encode_texts(self, inputs: dict) -> torch.Tensor:
        if self.scheme == "openclip":
            feats = self.model.encode_text(inputs["tokens"])
        else:
            feats = _features(self.model.get_text_features(**inputs))
        return torch.nn.functional.normalize(feats.float(), dim=-1)

    def scale(self) -> torch.Tensor:
        return self.model.logit_scale.exp().float()

    def bias(self) -> torch.Tensor | None:
        b = getattr(self.model, "logit_bias", None)
        return None if b is None else b.float()

    # -- state ------------------------------------------------------------------------------
    def state(self) -> dict:
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}

    def load_state(self, state: dict) -> None:
        self.model.load_state_dict(state)

    def save(self, out_dir: Path) -> str:
        """Write the weights under ``out_dir``; returns the spec that loads them."""
        out_dir.mkdir(parents=True, exist_ok=True)
        self.model.eval()
        if self.scheme == "hf":
            self.model.save_pretrained(out_dir, safe_serialization=True)
            self.adapter.tokenizer.save_pretrained(out_dir)
            self.adapter.image_processor.save_pretrained(out_dir)
            return f"hf:{out_dir.resolve()}"
        from safetensors.torch import save_model

        weights = out_dir / "model.safetensors"
        save_model(self.model, str(weights))
        return f"openclip:{self._openclip_body()}:{weights.resolve()}"

    def _openclip_body(self) -> str:
        body = self.spec.partition(":")[2].partition("?")[0]
        if body.startswith("hf-hub:"):
            raise FinetuneError(f"--model {self.spec}: an openclip:hf-hub: model cannot be "
                                "saved under the same scheme; give ARCH:TAG or a JSON config")
        first = body.partition(":")[0]
        if first.endswith(".json"):
            return str(Path(first).expanduser().resolve())
        extras = self.adapter.info.extras
        arch = extras["arch"]
        if extras.get("activation") == "quick_gelu" and not arch.endswith("-quickgelu"):
            import open_clip

            if open_clip.get_model_config(f"{arch}-quickgelu") is None:
                raise FinetuneError(f"{arch} runs QuickGELU but open_clip has no "
                                    f"{arch}-quickgelu architecture to reload it under")
            arch = f"{arch}-quickgelu"
        return arch


def _features(output):
    """transformers 4 returns a tensor, 5 an output object whose pooler_output is projected."""
    return output if hasattr(output, "dim") else output.pooler_output
