"""Where foilbench keeps its files: one home folder, and the one module that reads paths from
the environment (so a new cache never invents a variable of its own).

``FOILBENCH_HOME`` (default ``~/.cache/foilbench``) holds::

    suite/<version>-<seed>/   the embedded benchmark suite (construct/suite.py)
    embeddings/               the embedding and pair-score cache (store/cache.py)
    builtin/                  tiny-builtin's drawn images (data/tiny.py)
    train/                    rendered training sets (foilbench train)
    weights_hashes.json       remembered sha256 of weight files (models/fingerprint.py)
    checksums/                verified benchmark checksums by size+mtime (data/checksum_index.py)
    api_responses.jsonl       cached API answers (models/api)

The older variables still work, each for its own folder and taking precedence over
``FOILBENCH_HOME``, with a :class:`DeprecationWarning` (the CLI shows it):
``FOILBENCH_CACHE`` (embeddings), ``FOILBENCH_CACHE_DIR`` (weight hashes and API answers),
``FOILBENCH_DATA_CACHE`` (builtin). Locations of published datasets that a loader may take from
the environment (``FOILBENCH_COCO_VAL2017`` ...) are read here too, with :func:`env_path`.
Nothing is read at import time: every call looks at the environment as it is then.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

HOME_ENV = "FOILBENCH_HOME"
# old variable -> (what it names, its folder under FOILBENCH_HOME, "" for the home itself)
DEPRECATED_ENV: dict[str, tuple[str, str]] = {
    "FOILBENCH_CACHE": ("the embedding cache", "embeddings"),
    "FOILBENCH_CACHE_DIR": ("weight hashes and API answers", ""),
    "FOILBENCH_DATA_CACHE": ("tiny-builtin's images", "builtin"),
}


def env_path(name: str) -> Path | None:
    """The path in environment variable ``name`` (``~`` expanded), or None when unset or empty.

    >>> env_path("FOILBENCH_SURELY_UNSET_VARIABLE") is None
    True
    """
    value = os.environ.get(name)
    return Path(value).expanduser() if value else None


def home() -> Path:
    """``$FOILBENCH_HOME``, else ``~/.cache/foilbench``."""
    return env_path(HOME_ENV) or Path.home() / ".cache" / "foilbench"


def use_home(folder: str | Path) -> None:
    """Point ``$FOILBENCH_HOME`` at ``folder`` for this process and the processes it starts
    (Ray workers inherit it): the one writer of a path variable, as this module is the one
    reader (used when the configured home cannot be written)."""
    os.environ[HOME_ENV] = str(folder)


def _under_home(old: str) -> Path:
    """The folder an old variable names: its value (with a deprecation warning), else its
    place under :func:`home`."""
    what, sub = DEPRECATED_ENV[old]
    chosen = env_path(old)
    if chosen is not None:
        where = f"$FOILBENCH_HOME/{sub}" if sub else "$FOILBENCH_HOME"
        warnings.warn(f"{old} is deprecated: set {HOME_ENV} instead (the folder of {what} is "
                      f"then {where})", DeprecationWarning, stacklevel=3)
        return chosen
    return home() / sub if sub else home()


def suite_dir() -> Path:
    """Built embedded suites, one folder per version and seed."""
    return home() / "suite"


def train_dir() -> Path:
    """Rendered training sets of ``foilbench train``."""
    return home() / "train"


def embeddings_dir() -> Path:
    """The embedding cache root (``$FOILBENCH_CACHE`` still works, deprecated)."""
    return _under_home("FOILBENCH_CACHE")


def builtin_dir() -> Path:
    """tiny-builtin's images (``$FOILBENCH_DATA_CACHE`` still works, deprecated)."""
    return _under_home("FOILBENCH_DATA_CACHE")


def model_state_dir() -> Path:
    """Where weight-file hashes and API answers are kept (``$FOILBENCH_CACHE_DIR`` still
    works, deprecated)."""
    return _under_home("FOILBENCH_CACHE_DIR")


def checksum_index_dir() -> Path:
    """Benchmark checksums verified against their files, one JSON per benchmark folder."""
    return home() / "checksums"


MINILM_ENV = "FOILBENCH_MINILM"


def minilm_source() -> str | None:
    """``$FOILBENCH_MINILM``: a sentence-transformers model folder or a Hub name instead of
    all-MiniLM-L6-v2 (docs/text-models.md), or None when unset or empty."""
    value = os.environ.get(MINILM_ENV, "").strip()
    return value or None


def hf_hub_cache() -> str | None:
    """huggingface_hub's cache folder as the environment names it now (``HF_HUB_CACHE``, else
    ``HF_HOME/hub``), or None for the library's own default (data/hub.py passes it on)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    return str(Path(os.environ["HF_HOME"]) / "hub") if os.environ.get("HF_HOME") else None
