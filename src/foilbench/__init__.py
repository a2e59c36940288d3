"""foilbench: controlled compositionality evaluation for vision-language models.

Nothing is imported eagerly here: `import foilbench` must stay cheap and side-effect free.
``foilbench.__version__`` is read from the installed package's metadata on first use, so
``pyproject.toml`` holds the one version string.
"""

from __future__ import annotations

__all__ = ["__version__"]


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("foilbench")
    except PackageNotFoundError:  # a source tree on sys.path that was never installed
        return "0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        value = _installed_version()
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module 'foilbench' has no attribute {name!r}")
