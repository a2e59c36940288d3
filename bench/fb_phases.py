"""``foilbench run`` with a stopwatch on each phase: the same CLI path, timed from inside.

Runs the ``foilbench`` command with the given arguments after wrapping the runner's steps
(thread setup with the torch import, model load, benchmark load, engine, reliability notes,
metrics, COMPASS tables, store writes, reference rows, summary, report, printed tables) in timers that keep wall seconds and the main thread's CPU
seconds; the engine's own split (hash, cache, decode, forward passes) comes from its
``eval_stats``. Writes ``{"phases": {phase: [wall, cpu]}, "eval_stats": [...]}`` as JSON to
the file named by ``$FB_PHASES_OUT``, then ends the process as ``python -m foilbench`` does
(fast exit). Used by ``bench_peers.py`` for the phase table; the timed runs of the ratios use
the plain ``python -m foilbench run``.
"""

from __future__ import annotations

import time

T_START, C_START = time.perf_counter(), time.thread_time()

import functools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

IMPORT = "import open_clip (+torch)"
EARLY_DECODE = "image decode + prepare during validation (the engine's, done early)"
PHASES: dict[str, list[float]] = {}
STATS: list[dict] = []
LOCK = threading.Lock()


def _add(phase: str, t0: float, c0: float) -> None:
    with LOCK:  # validation's pixel checks run on decode threads
        wall, cpu = PHASES.setdefault(phase, [0.0, 0.0])
        PHASES[phase] = [wall + time.perf_counter() - t0, cpu + time.thread_time() - c0]


def _timed(module, name: str, phase: str) -> None:
    real = getattr(module, name)

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return real(*args, **kwargs)
        finally:
            _add(phase, t0, c0)

    setattr(module, name, wrapper)


def main() -> None:
    from foilbench import evaluation, report
    from foilbench.cli import main as cli_main
    from foilbench.models.openclip import adapter as openclip_adapter
    from foilbench.runner import cell, runs

    _add("foilbench imports (cli, runner)", T_START, C_START)
    real_load_models = runs.load_models

    def load_models(*args, **kwargs):
        before = dict(PHASES)
        t0, c0 = time.perf_counter(), time.thread_time()
        out = real_load_models(*args, **kwargs)
        _add("model build", t0, c0)
        # the import is timed on its own (below): take it out of the build
        imp = [a - b for a, b in zip(PHASES.get(IMPORT, [0.0, 0.0]),
                                     before.get(IMPORT, [0.0, 0.0]), strict=True)]
        PHASES["model build"] = [a - b for a, b in zip(PHASES["model build"], imp, strict=True)]
        return out

    runs.load_models = load_models
    # as foilbench imports it (without transformers when the model needs none)
    _timed(openclip_adapter, "import_open_clip", IMPORT)
    _timed(runs, "load_benchmarks", "benchmark load + validate")
    real_evaluate = evaluation.evaluate

    def evaluate(*args, **kwargs):
        t0, c0 = time.perf_counter(), time.thread_time()
        result = real_evaluate(*args, **kwargs)
        _add("engine", t0, c0)
        STATS.append(dict(result.stats))
        return result

    evaluation.evaluate = evaluate
    # validation's pixel check inside a run is the engine's decode done early (decode-once):
    # timed on its own, so the table can count it as engine work, not as validation
    from foilbench.scoring import prepared

    _timed(prepared.SharedPreparation, "check_pixels", EARLY_DECODE)
    _timed(evaluation, "metric_table", "metrics (breakdowns, bootstrap)")
    _timed(cell, "compass_summary", "COMPASS tables")
    _timed(runs, "configure_threads", "thread setup (imports torch)")
    _timed(cell, "cell_notes", "reliability notes (text report, data notes)")
    _timed(runs, "write_cell", "store writes")
    _timed(runs, "benchmark_reference", "reference rows (chance, blind)")
    _timed(runs, "build_summary", "summary.json")
    _timed(report, "write_report", "HTML report")
    import foilbench.cli.run_output as run_output

    _timed(run_output, "print_tables", "printed tables")
    from foilbench.runner.startup_gc import own_process

    own_process()  # as cli.main.main(fast_exit=True), which `python -m foilbench` calls
    sys.argv = ["foilbench", "run", *sys.argv[1:]]
    code = 0
    try:
        cli_main._main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    finally:
        PHASES["in-process total"] = [time.perf_counter() - T_START,
                                      time.thread_time() - C_START]
        out = os.environ.get("FB_PHASES_OUT")
        if out:
            with open(out, "w") as fh:
                json.dump({"phases": PHASES, "eval_stats": STATS}, fh, indent=1)
    cli_main.exit_now(code)


if __name__ == "__main__":
    main()
