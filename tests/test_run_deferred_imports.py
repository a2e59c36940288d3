"""What one run does to a fresh interpreter, read in ONE such process (:func:`fresh_run`):
the facts below are each printed from the same pair run and none changes another, so the
interpreter start and the run (torch, the model, the report) are paid once, not per fact.

- A pair run (no caption candidates, neither COMPASS-style nor Auto-Comp) does not import
  the code of the others: ``analysis.compass``, ``foilbench.negatives`` with construction's
  Auto-Comp modules, and the blind audit (``audit.blind``); each is imported where a run needs
  it (runner/cell.compass_summary, analysis/autocomp_valid.nominal_chance,
  runner/reference.blind_reference), part of a run's fixed cost (docs/performance.md).
- The run writes its summary in the schema's format version without importing pydantic
  (summary and report included).
- The run leaves ``os.environ`` unchanged, even in a process that had not imported torch
  before it (where the old runner set OMP_WAIT_POLICY)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
DEFERRED = ("foilbench.analysis.compass", "foilbench.negatives", "foilbench.audit.blind",
            "foilbench.construct.autocomp.captions")


@pytest.fixture(scope="module")
def fresh_run(tmp_path_factory) -> dict:
    """The facts (name -> JSON value) one pair run with its report prints in a fresh
    interpreter; the run computes everything (a fresh home, ``use_cache=False``)."""
    tmp = tmp_path_factory.mktemp("fresh-run")
    code = (
        "import json, os, sys\n"
        "os.environ.pop('OMP_WAIT_POLICY', None)\n"
        "before = dict(os.environ)\n"
        "from foilbench import runner\n"
        "said = {'torch_before': 'torch' in sys.modules}\n"
        f"out = runner.run(['tiny-random'], ['tiny-builtin'], {str(tmp / 'out')!r}, "
        "report=True, n_boot=200, progress=False, use_cache=False, log=None)\n"
        "said['torch_after'] = 'torch' in sys.modules\n"
        "said['environ'] = sorted(k for k in set(os.environ) | set(before)\n"
        "                         if os.environ.get(k) != before.get(k))\n"
        "said['pydantic'] = 'pydantic' in sys.modules\n"
        f"said['deferred'] = sorted(m for m in {DEFERRED!r} if m in sys.modules)\n"
        "said['report'] = out.report_path is not None\n"
        "said['autocomp'] = out.summary['autocomp']\n"
        "doc = json.loads(out.summary_path.read_text(encoding='utf-8'))\n"
        "said['format_version'] = doc['format_version']\n"
        "print(json.dumps(said))\n")
    env = dict(os.environ, FOILBENCH_HOME=str(tmp / "home"),
               PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    env.pop("OMP_WAIT_POLICY", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_pair_run_imports_no_compass_autocomp_or_blind_audit_code(fresh_run):
    assert fresh_run["report"] and fresh_run["autocomp"] == {}
    assert fresh_run["deferred"] == []


def test_a_run_writes_its_summary_without_importing_pydantic(fresh_run):
    """The format version a run writes is the schema's, and the run (summary and report
    included) does not import pydantic for it."""
    from foilbench.runner import summary as writer
    from foilbench.runner.summary_schema import SUMMARY_FORMAT_VERSION

    assert writer.SUMMARY_FORMAT_VERSION == SUMMARY_FORMAT_VERSION
    assert fresh_run["report"]
    assert [fresh_run["format_version"], fresh_run["pydantic"]] == [SUMMARY_FORMAT_VERSION,
                                                                    False]


def test_a_run_leaves_os_environ_unchanged_even_before_torch_is_imported(fresh_run):
    """In a fresh process that has not imported torch (where the old runner set
    OMP_WAIT_POLICY), nothing in os.environ changes."""
    assert not fresh_run["torch_before"] and fresh_run["torch_after"]
    assert fresh_run["environ"] == []
