"""Mutation smoke check: planted bugs in the scoring core must make the suite fail.

The mutations and how they are applied are in ``tests/_mutations.py``; each runs the test
files that guard its code against a mutated copy of the package in a fresh interpreter. The
baseline (no mutation) must pass on the same copy, so a failure really is the mutation's.
"""

from __future__ import annotations

import pytest

from _mutations import (
    MUTATIONS,
    Mutation,
    MutationTargetError,
    Outcome,
    locate,
    package_dir,
    run_all,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def outcomes() -> dict:
    return run_all()


def test_baseline_passes_on_the_copy(outcomes):
    base = outcomes[""]
    assert isinstance(base, Outcome), base
    assert base.returncode == 0 and not base.failed, base.tail


@pytest.mark.parametrize("name", [m.name for m in MUTATIONS])
def test_planted_mutation_is_caught(outcomes, name):
    res = outcomes[name]
    if isinstance(res, Exception):
        raise res  # the snippet is gone: the targeted code changed (see tests/_mutations.py)
    # exit 1 = tests ran and some failed; 2-5 (errors, nothing collected) is not a catch
    assert res.returncode == 1 and res.failed, f"mutation survived: {name}\n{res.tail}"


def test_a_missing_snippet_is_an_error_not_a_skip():
    gone = Mutation("renamed code", "this_code_is_not_in_foilbench(42)", "", ())
    with pytest.raises(MutationTargetError, match="found nowhere"):
        locate(package_dir(), gone)
    twice = Mutation("ambiguous", "from __future__ import annotations", "", ())
    with pytest.raises(MutationTargetError, match="exactly once"):
        locate(package_dir(), twice)
