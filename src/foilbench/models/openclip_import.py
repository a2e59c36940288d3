"""Import open_clip without Hugging Face ``transformers`` when the chosen model has no use for it.

``import open_clip`` imports ``transformers`` (for Hugging Face text towers and CoCa's text
generation) whatever the model: over a second of CPU on every run of a model whose towers are
open_clip's own. :func:`import_open_clip` hides ``transformers`` while open_clip is first
imported when the architecture config shows neither a Hugging Face text tower
(``text_cfg.hf_model_name``) nor a multimodal decoder (CoCa); open_clip then runs its own
"transformers is not installed" branch, which those models never reach. When a later model in
the same process does need it, the two open_clip modules that looked for it are reloaded with
it visible (a reload re-runs a module in its own namespace, so classes already handed out see
the new names too). A config that cannot be read counts as needing it.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HIDDEN = "transformers"
_state = {"hidden": False}


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


def import_open_clip(needs_transformers: bool = True) -> ModuleType:
    """open_clip, imported without ``transformers`` unless ``needs_transformers`` (or it is
    already imported); a module imported that way gets it back when a later call needs it."""
    module = sys.modules.get("open_clip")
    if module is not None:
        if needs_transformers and _state["hidden"]:
            _bring_back(module)
        return module
    if needs_transformers or HIDDEN in sys.modules \
            or importlib.util.find_spec(HIDDEN) is None:
        return importlib.import_module("open_clip")
    finder = _Hide(HIDDEN)
    sys.meta_path.insert(0, finder)
    try:
        module = importlib.import_module("open_clip")
    except ImportError:  # some dependency insists on it: start again the ordinary way
        for name in [m for m in sys.modules if m == "open_clip" or m.startswith("open_clip.")]:
            del sys.modules[name]
        sys.meta_path.remove(finder)
        return importlib.import_module("open_clip")
    else:
        sys.meta_path.remove(finder)
    _state["hidden"] = True
    return module


def _bring_back(module: ModuleType) -> None:
    for name in ("hf_model", "coca_model"):
        sub = getattr(module, name, None)
        if sub is not None:
            importlib.reload(sub)
    _state["hidden"] = False
