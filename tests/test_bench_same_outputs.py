"""bench/same_outputs.py: what it masks in two reports of the same results, and what not."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import same_outputs  # noqa: E402


def test_run_specific_values_are_masked():
    a = ("<td>20261205-092703.888-a066</td><td>3f2a9c01deadbeef</td><td>2026-12-05 09:27:03"
         "</td><td>dc87e2e+dirty</td><td>took 12.5 s</td>")
    b = ("<td>20261205-101010.001-0b1c</td><td>77aa0b1200000000</td><td>2026-12-06 10:10:10"
         "</td><td>7873b62a</td><td>took 9 s</td>")
    assert same_outputs.masked(a) == same_outputs.masked(b)


def test_numbers_and_words_are_not_masked():
    for a, b in (("n = 5280", "n = 5281"), ("0.731", "0.732"), ("1234567", "1234568"),
                 ("r1 0.50 [0.41, 0.59]", "r1 0.50 [0.41, 0.60]"), ("red cube", "blue cube")):
        assert same_outputs.masked(a) != same_outputs.masked(b), (a, b)
