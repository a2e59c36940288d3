"""CI runs the README's test command itself, and a failure anywhere in it fails CI.

The README gives the test command as one ``&&`` list. Under ``set -e`` bash does not stop at a
failure inside such a list unless it is the last command, so a failing ``mypy`` ended the
list, skipped the tests, and CI went on to pass; .ci/run follows the list with ``|| exit``."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_test_command() -> str:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    found = [line.strip() for line in lines if "pytest -n 2" in line]
    assert len(found) == 1, found
    return found[0]


def test_ci_runs_the_readme_test_command_verbatim_and_stops_on_its_failure():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    command = readme_test_command()
    at = [i for i, line in enumerate(script) if line.startswith(command)]
    assert len(at) == 1, "the README's test command is not in .ci/run as it is written"
    rest = " ".join((script[at[0]][len(command):] + " " + script[at[0] + 1]).split())
    assert rest.startswith(("\\ || {", "|| {")) and "exit 1; }" in rest, rest
    assert "set -euo pipefail" in script


def test_the_guard_is_needed_and_works(tmp_path):
    """What the guard is for, shown on bash itself: an early failure in an ``&&`` list does
    not stop a ``set -e`` script; with the guard it does."""
    plain = "set -e\nfalse && true\necho went-on\n"
    guarded = "set -e\nfalse && true \\\n  || { echo failed >&2; exit 1; }\necho went-on\n"
    ran = [subprocess.run(["bash", "-c", code], capture_output=True, text=True)
           for code in (plain, guarded)]
    assert (ran[0].returncode, ran[0].stdout.strip()) == (0, "went-on")
    assert (ran[1].returncode, ran[1].stdout.strip()) == (1, "")
