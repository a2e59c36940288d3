"""A failure anywhere in the README's test command fails CI.

The README gives the test command as one ``&&`` list, and .ci/run runs it verbatim
(tests/test_run_display.py). Under ``set -e`` bash does not stop at a failure inside such a
list unless it is the last command, so a failing ``mypy`` ended the list, skipped the tests,
and CI went on to pass. The line after the command checks its status."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def guard_line() -> str:
    """The line of .ci/run right after the README's test command."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    command = [line.strip() for line in readme if "pytest -n 2" in line]
    assert len(command) == 1, command
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "set -euo pipefail" in script
    at = script.index(command[0])
    return script[at + 1]


def run_bash(code: str) -> tuple[int, str]:
    done = subprocess.run(["bash", "-c", code], capture_output=True, text=True, timeout=30)
    return done.returncode, done.stdout.strip()


def test_ci_stops_when_the_readme_test_command_fails_early():
    """The guard of .ci/run itself, after an ``&&`` list that fails at its first command
    (as a failing mypy does): the script stops with that status; after a list that passes,
    it goes on."""
    guard = guard_line()
    assert run_bash(f"set -euo pipefail\n(exit 3) && true\n{guard}\necho went-on\n")[0] == 3
    assert run_bash(f"set -euo pipefail\ntrue && true\n{guard}\necho went-on\n") == (0,
                                                                                  "went-on")


def test_without_the_guard_bash_goes_on():
    """Why the guard is there: bash's own behaviour, on the same list."""
    assert run_bash("set -euo pipefail\n(exit 3) && true\necho went-on\n") == (0, "went-on")
