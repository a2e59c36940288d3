"""What an ``openclip:`` spec names: a hub tag's activation, a JSON config, a weights path, and
which optional packages open_clip may need for it, all decided before a model is built.

QuickGELU. OpenAI's CLIP weights were trained with QuickGELU (x * sigmoid(1.702 x)); an
architecture built with plain GELU loads them without any error and scores wrongly. The
activation has no parameters, so nothing in the weights reveals it. Rules (the tag rules
here, in :func:`quickgelu_for_tag`; the weights-file warning in the adapter's constructor):

- a hub tag whose pretrained config says ``quick_gelu`` (e.g. ``openai``) on a GELU
  architecture is switched to QuickGELU, with a warning; the reverse (a ``-quickgelu``
  architecture with a GELU tag) uses the GELU architecture, with a warning;
- for local weights the user states it by naming ``ARCH-quickgelu`` (or ``"quick_gelu": true``
  in a JSON config); a weights file whose name says "openai" on a GELU architecture warns;
- a tag that says nothing about the activation on an architecture whose own config is QuickGELU
  (``roberta-ViT-B-32:laion2b_s12b_b32k``, the one such listed pair in open_clip 3.x) is built
  as open_clip builds it, with the architecture's QuickGELU: no open_clip tag says
  ``quick_gelu: false``, so silence is not evidence of GELU (open_clip itself still warns);
- the activation is part of the fingerprint, so results from the two never mix.
"""

from __future__ import annotations

from pathlib import Path

from foilbench.errors import ModelError
from foilbench.models.openclip.importer import (
    config_needs_timm,
    config_needs_transformers,
    packaged_config,
    read_config,
)

WEIGHT_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors")


def looks_like_path(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~")) or text.endswith((*WEIGHT_SUFFIXES, ".json"))


def quickgelu_for_tag(arch: str, tag: str) -> tuple[str, bool, str | None]:
    """(architecture to build, force_quick_gelu, warning or None) for a hub tag."""
    import open_clip

    cfg = open_clip.get_model_config(arch)
    if cfg is None:
        raise ModelError(unknown_arch(arch))
    tag_cfg = open_clip.get_pretrained_cfg(arch, tag)
    if not tag_cfg:
        tags = open_clip.list_pretrained_tags_by_model(arch)
        raise ModelError(f"open_clip architecture {arch!r} has no pretrained tag {tag!r}; known "
                         f"tags: {', '.join(tags) or '(none)'}. For local weights give a path.")
    stated = tag_cfg.get("quick_gelu")  # None: the tag does not say
    want, have = bool(stated), bool(cfg.get("quick_gelu", False))
    if want == have:
        return arch, False, None
    if want:
        return arch, True, (f"pretrained tag {tag!r} was trained with QuickGELU but {arch!r} uses "
                            "GELU: building the QuickGELU variant instead")
    base = arch.removesuffix("-quickgelu")
    if base != arch and open_clip.get_model_config(base) is not None:
        return base, False, (f"pretrained tag {tag!r} was trained with GELU but {arch!r} uses "
                             f"QuickGELU: building {base!r} instead")
    if stated is None:  # the architecture's own config is QuickGELU; build it as open_clip does
        return arch, False, None
    raise ModelError(f"pretrained tag {tag!r} uses GELU but {arch!r} forces QuickGELU and no GELU "
                     "variant exists; name the GELU architecture")


def unknown_arch(arch: str) -> str:
    import difflib

    import open_clip

    close = difflib.get_close_matches(arch, open_clip.list_models(), n=5, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return (f"unknown open_clip architecture {arch!r}.{hint} "
            "For a custom architecture use openclip:/path/config.json[:/path/weights]")


def register_json_config(config: Path) -> str:
    """Add a JSON architecture config to open_clip's registry; the name is the file stem."""
    import json

    import open_clip

    try:
        cfg = json.loads(config.read_text())
    except json.JSONDecodeError as e:
        raise ModelError(f"{config}: not valid JSON ({e})") from None
    missing = [k for k in ("embed_dim", "vision_cfg", "text_cfg") if k not in cfg]
    if missing:
        raise ModelError(f"{config}: an open_clip config needs {', '.join(missing)}")
    open_clip.add_model_config(config)
    return config.stem


def needs_packages(body: str) -> tuple[bool, bool]:
    """Whether the model a spec names may need ``transformers`` (a Hugging Face text tower or
    CoCa) and ``timm`` (a timm vision tower); anything not readable before building it counts
    as yes."""
    if body.startswith("hf-hub:"):
        return True, True
    first = body.partition(":")[0]
    cfg = read_config(Path(first).expanduser()) if first.endswith(".json") \
        else packaged_config(first)
    return config_needs_transformers(cfg), config_needs_timm(cfg)
