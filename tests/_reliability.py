"""Helpers for the reliability tests (issue 13): the CLI as a user meets it, and fixtures.

:func:`fb` runs ``foilbench ARGS`` in-process through ``cli.main.main`` (the entry point that
turns a FoilbenchError into ``error: ...`` and exit 2), so a test sees the exit code and the
text a user would, and any traceback fails it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from _core_helpers import solid, write_folder

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
COLOURS = ("red", "green", "blue")


def fb(args: list[str], capsys) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``foilbench ARGS`` run in this process."""
    from foilbench.cli.main import main

    old = sys.argv
    sys.argv = ["foilbench", *map(str, args)]
    code = 0
    try:
        main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = old
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, out + err
    return code, out, err


def choice_items(root: Path, n: int = 6, *, scene: bool = True) -> pd.DataFrame:
    """``n`` choice rows over the three colour images (written under ``root``)."""
    rows = []
    for i in range(n):
        c, other = COLOURS[i % 3], COLOURS[(i + 1) % 3]
        solid(root / f"{c}.png", c)
        rows.append({"item_id": f"i{i}", "image": f"{c}.png",
                     "captions": [f"a {c} square", f"a {other} square"],
                     "scene_id": f"s{i // 2}" if scene else None, "edit_type": "swap"})
    return pd.DataFrame(rows)


def choice_folder(root: Path, n: int = 6, **manifest) -> Path:
    return write_folder(root, "choice", choice_items(root, n), **manifest)


def subprocess_env(tmp: Path, **extra: str) -> dict[str, str]:
    """Environment for a ``foilbench`` subprocess: this worktree's sources, a private home."""
    env = dict(os.environ)
    env.update({"PYTHONPATH": os.pathsep.join([str(SRC), str(HERE)]),
                "FOILBENCH_HOME": str(tmp / "home"), "HF_HUB_OFFLINE": "1"})
    env.pop("FOILBENCH_CACHE", None)
    env.update(extra)
    return env


def start_gated(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """``foilbench ARGS`` in a subprocess with the ``gated`` model registered (tests/_gated.py),
    output to ``log``."""
    handle = log.open("w")
    return subprocess.Popen([sys.executable, str(HERE / "_gated.py"), *map(str, args)],
                            env=env, stdout=handle, stderr=subprocess.STDOUT)


class serving:  # noqa: N801 (used as a context manager, like open)
    """``with serving(db) as (get, run_id):`` the read-only app on 127.0.0.1, a port of its
    own; ``get(path)`` returns the urllib response (HTTPError for 4xx), ``run_id`` is the
    first stored run."""

    def __init__(self, db: Path) -> None:
        self.db = db

    def __enter__(self):
        import threading
        import urllib.request

        from foilbench.report.server import make_server
        from foilbench.store.db import ResultsStore

        with ResultsStore(self.db, read_only=True) as store:
            run_id = store.list_runs()["run_id"].iloc[0]
        self.server = make_server(self.db, "127.0.0.1", 0)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        return (lambda path: urllib.request.urlopen(base + path)), run_id

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
