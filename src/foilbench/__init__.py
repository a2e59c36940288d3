"""foilbench: controlled compositionality evaluation for vision-language models.

Nothing is imported eagerly here: `import foilbench` must stay cheap and side-effect free.
``foilbench.__version__`` is read from the installed package's metadata on first use, so
``pyproject.toml`` holds the one version string.

Models held in memory (a training loop's checkpoint) enter every runner call through
``foilbench.from_open_clip(model, preprocess, tokenizer, name=...)`` and
``foilbench.from_hf(model, processor, name=...)`` (docs/training.md); both load on first use.
"""

from __future__ import annotations

__all__ = ["__version__", "from_hf", "from_open_clip"]

# public name -> module, imported on first use (torch and the model libraries stay unloaded)
_LAZY = {"from_open_clip": "foilbench.models.live_openclip",
         "from_hf": "foilbench.models.live_hf"}


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("foilbench")
    except PackageNotFoundError:  # a source tree on sys.path that was never installed
        return "0+unknown"


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name == "__version__":
        value = _installed_version()
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module 'foilbench' has no attribute {name!r}")
