"""A Ray sweep writes its matrix before it shuts Ray down.

One ``sweep --ray`` crashed (SIGSEGV) after storing every cell, while Ray shut down, and left
no matrix. Here the sweep starts its own local Ray, and ``ray.shutdown`` is made to look at
the output folder and then fail: the matrix files must already be there, and equal what
``sweep --matrix-only`` rebuilds from the store.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from foilbench.runner import RayOptions, sweep  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FILES = ("matrix.csv", "matrix.md", "matrix.tex")


class TeardownCrash(RuntimeError):
    """Stands for the driver dying while Ray shuts down."""


def test_the_matrix_is_written_before_ray_shuts_down(tmp_path, monkeypatch):
    assert not ray.is_initialized()  # the sweep must start (and shut down) Ray itself
    path = os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", ""))
                           if p)
    monkeypatch.setenv("PYTHONPATH", path)  # the workers import this checkout
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    out = tmp_path / "out"
    seen: list[set[str]] = []
    real_shutdown = ray.shutdown

    def crashing_shutdown(*args, **kwargs):
        seen.append({p.name for p in out.glob("sweep-*/*")})
        real_shutdown(*args, **kwargs)
        raise TeardownCrash("the driver died while Ray shut down")

    monkeypatch.setattr(ray, "shutdown", crashing_shutdown)
    # the one worker is always placed here: a start slowed by busy CI processes past the
    # default 120 s must not get it released and started again (tests/test_ray_runner.py)
    with warnings.catch_warnings(), pytest.raises(TeardownCrash):
        warnings.simplefilter("ignore")
        sweep(["tiny-random"], ["tiny-builtin"], out,
              ray=RayOptions(max_workers=1, start_timeout=600), n_boot=200, progress=False,
              use_cache=False)
    assert not ray.is_initialized()
    assert len(seen) == 1 and set(FILES) <= seen[0]  # written while Ray still ran

    monkeypatch.setattr(ray, "shutdown", real_shutdown)
    (first,) = out.glob("sweep-*")
    rebuilt = sweep(["tiny-random"], ["tiny-builtin"], out, matrix_only=True, n_boot=200,
                    progress=False)
    assert rebuilt.computed == 0 and rebuilt.reused == 1
    for name in FILES:
        assert (out / f"sweep-{rebuilt.sweep_id}" / name).read_text() == \
            (first / name).read_text(), name
