"""Start-up without full garbage-collection passes (issue 30, fixed costs): collection is
paused during a run's start-up and restored after, on every path; only a process the CLI owns
freezes its start-up objects."""

from __future__ import annotations

import gc

import pytest

from foilbench.runner import startup_gc


@pytest.fixture(autouse=True)
def _restore():
    was, owned = gc.isenabled(), startup_gc._state["owned"]
    yield
    startup_gc._state["owned"] = owned
    gc.unfreeze()
    gc.enable() if was else gc.disable()


def test_pause_disables_and_resume_restores_once_without_freezing_a_callers_process():
    gc.enable()
    frozen = gc.get_freeze_count()
    resume = startup_gc.pause()
    assert not gc.isenabled()
    resume()
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    gc.disable()
    resume()  # a second call does nothing
    assert not gc.isenabled()


def test_a_caller_that_had_collection_off_keeps_it_off():
    gc.disable()
    startup_gc.pause()()
    assert not gc.isenabled()


def test_an_owned_process_freezes_its_start_up_objects():
    gc.enable()
    gc.unfreeze()
    startup_gc.own_process()
    with startup_gc.paused():
        kept = [object() for _ in range(10)]  # noqa: F841 - objects made during start-up
    assert gc.isenabled() and gc.get_freeze_count() > 0


def test_run_and_sweep_restore_collection_on_success_and_on_error(tmp_path):
    from foilbench.errors import FoilbenchError
    from foilbench.runner import run, sweep

    gc.enable()
    frozen = gc.get_freeze_count()
    run(["tiny-random"], ["tiny-builtin"], tmp_path / "a", n_boot=100, progress=False,
        report=False)
    assert gc.isenabled() and gc.get_freeze_count() == frozen  # the API freezes nothing
    with pytest.raises(FoilbenchError):
        run(["no-such-model-scheme:x"], ["tiny-builtin"], tmp_path / "b", progress=False)
    assert gc.isenabled()
    with pytest.raises(FoilbenchError):
        sweep(["no-such-model-scheme:x"], ["tiny-builtin"], tmp_path / "c", progress=False)
    assert gc.isenabled()


def test_only_a_process_that_ends_with_the_command_is_owned():
    """``python -m foilbench`` / the console script (``main(fast_exit=True)``) own their
    process; an in-process call (``main()``, as tests make) does not."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src"
    code = ("import sys\n"
            "import foilbench.cli.main as m\n"
            "from foilbench.runner import startup_gc\n"
            "m._main = lambda: print('owned', startup_gc._state['owned'], flush=True)\n"
            "m.main(fast_exit=sys.argv[1] == 'fast')\n")
    env = dict(os.environ, PYTHONPATH=f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    for arg, want in (("fast", "owned True"), ("plain", "owned False")):
        out = subprocess.run([sys.executable, "-c", code, arg], capture_output=True, text=True,
                             env=env, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == want
