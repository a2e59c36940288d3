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
# (module, attribute, phase) wrapped in a stopwatch; tests/test_bench_speed.py checks that
# each still exists, so a renamed runner step fails a test, not a measuring session
TIMED = (
    # as foilbench imports it (without transformers when the model needs none)
    ("foilbench.models.openclip.adapter", "import_open_clip", IMPORT),
    ("foilbench.runner.runs", "load_benchmarks", "benchmark load + validate"),
    # validation's pixel check inside a run is the engine's decode done early (decode-once):
    # timed on its own, so the table can count it as engine work, not as validation
    ("foilbench.scoring.prepared", "SharedPreparation.check_pixels", EARLY_DECODE),
    ("foilbench.evaluation", "metric_table", "metrics (breakdowns, bootstrap)"),
    ("foilbench.runner.cell", "compass_summary", "COMPASS tables"),
    ("foilbench.runner.cell", "cell_notes", "reliability notes (text report, data notes)"),
    ("foilbench.runner.runs", "write_cell", "store writes"),
    ("foilbench.runner.runs", "benchmark_reference", "reference rows (chance, blind)"),
    ("foilbench.runner.runs", "build_summary", "summary.json"),
    ("foilbench.report", "write_report", "HTML report"),
    ("foilbench.cli.run_output", "print_tables", "printed tables"),
)
# context-manager factories: entering the block is timed (the thread setup imports torch)
TIMED_ENTER = (("foilbench.runner.runs", "run_threads", "thread setup (imports torch)"),)
# wrapped by hand in main(): the engine keeps its stats, the model build leaves out the import
WRAPPED = (("foilbench.runner.runs", "load_models"), ("foilbench.evaluation", "evaluate"))


def _owner(path: str, attr: str) -> tuple[object, str]:
    """(object holding the last name of ``attr``, that name): ``attr`` may be
    ``Class.method`` inside module ``path``."""
    import importlib

    owner: object = importlib.import_module(path)
    *parents, name = attr.split(".")
    for part in parents:
        owner = getattr(owner, part)
    return owner, name


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


def _timed_enter(module, name: str, phase: str) -> None:
    """Like :func:`_timed` for a context-manager factory: times entering the block (the
    thread setup and its torch import), not the block itself."""
    import contextlib

    real = getattr(module, name)

    @functools.wraps(real)
    @contextlib.contextmanager
    def wrapper(*args, **kwargs):
        t0, c0 = time.perf_counter(), time.thread_time()
        with real(*args, **kwargs) as value:
            _add(phase, t0, c0)
            yield value

    setattr(module, name, wrapper)


def main() -> None:
    import importlib

    from foilbench import evaluation
    from foilbench.cli import main as cli_main
    from foilbench.runner import runs

    for path, _, _ in (*TIMED, *TIMED_ENTER):  # imported here, as the CLI would
        importlib.import_module(path)
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
    real_evaluate = evaluation.evaluate

    def evaluate(*args, **kwargs):
        t0, c0 = time.perf_counter(), time.thread_time()
        result = real_evaluate(*args, **kwargs)
        _add("engine", t0, c0)
        STATS.append(dict(result.stats))
        return result

    evaluation.evaluate = evaluate
    for path, attr, phase in TIMED:
        _timed(*_owner(path, attr), phase)
    for path, attr, phase in TIMED_ENTER:
        _timed_enter(*_owner(path, attr), phase)
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
