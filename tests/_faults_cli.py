"""Run the real CLI entry (``foilbench ...``) in-process: exit code, stdout and stderr, with
the error handling users meet (a :class:`FoilbenchError` is one ``error:`` line, exit 2)."""

from __future__ import annotations

import sys

import pytest


def foilbench(capsys, *args: str) -> tuple[int, str, str]:
    from foilbench.cli.main import _main

    capsys.readouterr()
    old = sys.argv
    sys.argv = ["foilbench", *args]
    try:
        _main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = old
    out = capsys.readouterr()
    return code, out.out, out.err


def no_traceback(text: str) -> None:
    if "Traceback" in text:
        pytest.fail(f"a traceback reached the user:\n{text}")
