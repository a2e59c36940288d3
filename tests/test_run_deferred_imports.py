"""A pair run (no caption candidates, neither COMPASS-style nor Auto-Comp) does not import
the code of the others: ``analysis.compass``, ``foilbench.negatives`` with construction's
Auto-Comp modules, and the blind audit (``audit.blind``); each is imported where a run needs
it (runner/cell.compass_summary, analysis/autocomp_valid.nominal_chance,
runner/reference.blind_reference), part of a run's fixed cost (docs/performance.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
DEFERRED = ("foilbench.analysis.compass", "foilbench.negatives", "foilbench.audit.blind",
            "foilbench.construct.autocomp.captions")


def test_a_pair_run_imports_no_compass_autocomp_or_blind_audit_code(tmp_path):
    code = (
        "import sys\n"
        "from foilbench import runner\n"
        f"out = runner.run(['tiny-random'], ['tiny-builtin'], {str(tmp_path / 'out')!r}, "
        "report=True, n_boot=200, progress=False)\n"
        "assert out.report_path is not None and out.summary['autocomp'] == {}\n"
        f"print(sorted(m for m in {DEFERRED!r} if m in sys.modules))\n")
    env = dict(os.environ, FOILBENCH_HOME=str(tmp_path / "home"),
               PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
