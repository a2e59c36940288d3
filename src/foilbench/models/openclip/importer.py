"""Import open_clip without ``transformers`` or ``timm`` when the chosen model has no use for them.

``import open_clip`` imports ``transformers`` (for Hugging Face text towers and CoCa's text
generation) and ``timm`` (for timm vision towers) whatever the model: over a second of CPU
(``transformers``) and about half a second (``timm``) on every run of a model whose towers
are open_clip's own. :func:`import_open_clip` hides each while open_clip is first imported
when the architecture config shows no use for it (``transformers``: neither a Hugging Face
text tower, ``text_cfg.hf_model_name``, nor a multimodal decoder, CoCa; ``timm``: no
``vision_cfg.timm_model_name``); open_clip then runs its own "not installed" branches
(``timm_model.py``: ``timm = None``), which those models never reach. When a later model in
the same process does need one, the open_clip modules that looked for it are reloaded with it
visible (a reload re-runs a module in its own namespace, so classes already handed out see
the new names too). A config that cannot be read counts as needing both.

The first import also runs under :func:`~foilbench.models.dynamo_deferral.dynamo_deferred`:
torchvision, which open_clip imports, would otherwise import torch's whole compiler for one
function that no evaluation calls.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from foilbench.models.dynamo_deferral import dynamo_deferred

# each package that may be hidden -> the open_clip modules that look for it at import
LOOKERS = {"transformers": ("hf_model", "coca_model"), "timm": ("timm_model",)}
_state: dict[str, set[str]] = {"hidden": set()}


class _Hide:
    """A meta-path finder that makes one top-level package look absent."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname == self.name or fullname.startswith(self.name + "."):
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def config_needs_transformers(cfg: dict | None) -> bool:
    """True unless ``cfg`` (an open_clip architecture config) plainly does without."""
    if not isinstance(cfg, dict):
        return True
    text = cfg.get("text_cfg")
    if not isinstance(text, dict):
        return True
    return bool(text.get("hf_model_name")) or "multimodal_cfg" in cfg


def packaged_config(arch: str) -> dict | None:
    """The architecture config open_clip ships for ``arch``, read without importing it."""
    spec = importlib.util.find_spec("open_clip")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model_configs" / f"{arch}.json"
    return read_config(path)


def read_config(path: Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def config_needs_timm(cfg: dict | None) -> bool:
    """True unless ``cfg`` (an open_clip architecture config) plainly does without timm."""
    if not isinstance(cfg, dict):
        return True
    vision = cfg.get("vision_cfg")
    if not isinstance(vision, dict):
        return True
    return bool(vision.get("timm_model_name"))


def import_open_clip(needs_transformers: bool = True, needs_timm: bool = True) -> ModuleType:
    """open_clip, imported without ``transformers`` unless ``needs_transformers`` and without
    ``timm`` unless ``needs_timm`` (or either is already imported); a module imported that way
    gets a hidden package back when a later call needs it."""
    needed = {"transformers": needs_transformers, "timm": needs_timm}
    module = sys.modules.get("open_clip")
    if module is not None:
        for name in sorted(_state["hidden"]):
            if needed[name]:
                _bring_back(module, name)
        return module
    hide = [name for name, need in needed.items()
            if not need and name not in sys.modules and importlib.util.find_spec(name)]
    with dynamo_deferred():
        return _import_hiding(hide)


def _import_hiding(hide: list[str]) -> ModuleType:
    if not hide:
        return importlib.import_module("open_clip")
    finders = [_Hide(name) for name in hide]
    for finder in finders:
        sys.meta_path.insert(0, finder)
    try:
        module = importlib.import_module("open_clip")
    except ImportError:  # some dependency insists on one: start again the ordinary way
        for name in [m for m in sys.modules if m == "open_clip" or m.startswith("open_clip.")]:
            del sys.modules[name]
        for finder in finders:
            sys.meta_path.remove(finder)
        return importlib.import_module("open_clip")
    for finder in finders:
        sys.meta_path.remove(finder)
    _state["hidden"] = set(hide)
    return module


def _bring_back(module: ModuleType, name: str) -> None:
    for looker in LOOKERS[name]:
        sub = getattr(module, looker, None)
        if sub is not None:
            importlib.reload(sub)
    _state["hidden"].discard(name)
