"""Core dependencies are what `foilbench run` imports: every third-party module that
foilbench's own code imports during a run belongs to a core dependency of pyproject.toml or to
something one of them requires (modules the dependencies import for themselves, when present,
are theirs to declare).

A module imported at run time from an extra (pydantic once was) makes the README's first
command fail on a fresh install, where only the core is installed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]

RUN_AND_LIST = r"""
import builtins, json, sys

direct = set()  # top-level modules that foilbench's own code imported during the run
real_import = builtins.__import__


def tracking(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and globals and str(globals.get("__name__", "")).startswith("foilbench"):
        direct.add(name.split(".")[0])
    return real_import(name, globals, locals, fromlist, level)


builtins.__import__ = tracking
from foilbench.cli.main import main
from foilbench.data.format import write_benchmark
from foilbench.data.tiny import tiny_benchmark

out = sys.argv[1]
folder = write_benchmark(tiny_benchmark(), out + "-bench")  # read back as a user's folder is
sys.argv = ["foilbench", "run", "--model", "foilbench-plain", "--benchmark", str(folder),
            "--out", out, "--n-boot", "200", "--quiet"]
try:
    main()
except SystemExit as e:
    if e.code:
        raise
print(json.dumps(sorted(direct)))
"""


def _name(requirement: str) -> str:
    return re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _closure(names: set[str]) -> set[str]:
    """``names`` and every distribution they require (extras left out), installed ones only."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [_name(r) for r in requires if "extra ==" not in r]
    return seen


def test_a_run_imports_only_core_dependencies(tmp_path):
    core = {_name(d) for d in tomllib.loads((ROOT / "pyproject.toml").read_text())
            ["project"]["dependencies"]}
    allowed = _closure(core) | {"foilbench"}
    done = subprocess.run([sys.executable, "-c", RUN_AND_LIST, str(tmp_path / "runs")],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "FOILBENCH_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    modules = json.loads(done.stdout.strip().splitlines()[-1])
    owners = metadata.packages_distributions()
    loaded = {_name(d) for m in modules for d in owners.get(m, [])}
    assert loaded - allowed == set(), f"a run imports distributions outside the core: " \
        f"{sorted(loaded - allowed)}"
