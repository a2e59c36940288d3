"""``foilbench run`` with a stopwatch on each phase: the same CLI path, timed from inside.

Runs ``foilbench.cli.main.main()`` with the given arguments after wrapping the runner's steps
(model load, benchmark load, engine, metrics, COMPASS tables, store writes, reference rows,
summary, report, printed tables) in timers; the engine's own split (hash, cache, decode wait,
forward passes) comes from its ``eval_stats``. Writes ``{phase: seconds}`` as JSON to the file
named by ``$FB_PHASES_OUT``. Used by ``bench_peers.py`` for the phase table; the timed runs of
the ratios use the plain ``python -m foilbench run``.
"""

from __future__ import annotations

import time

T_START = time.perf_counter()

import functools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

PHASES: dict[str, float] = {}
STATS: list[dict] = []


def _timed(module, name: str, phase: str) -> None:
    real = getattr(module, name)

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            PHASES[phase] = PHASES.get(phase, 0.0) + time.perf_counter() - t0

    setattr(module, name, wrapper)


def main() -> None:
    from foilbench import evaluation, report
    from foilbench.cli import main as cli_main
    from foilbench.runner import cell, runs

    t_imported = time.perf_counter()
    real_load_models = runs.load_models

    def load_models(*args, **kwargs):
        t0 = time.perf_counter()
        if "open_clip" not in sys.modules:
            import open_clip  # noqa: F401 - timed on its own: the dominant import

            PHASES["import open_clip (+torch)"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        out = real_load_models(*args, **kwargs)
        PHASES["model build"] = time.perf_counter() - t1
        return out

    runs.load_models = load_models
    _timed(runs, "load_benchmarks", "benchmark load + validate")
    real_evaluate = evaluation.evaluate

    def evaluate(*args, **kwargs):
        t0 = time.perf_counter()
        result = real_evaluate(*args, **kwargs)
        PHASES["engine"] = PHASES.get("engine", 0.0) + time.perf_counter() - t0
        STATS.append(dict(result.stats))
        return result

    evaluation.evaluate = evaluate
    _timed(evaluation, "metric_table", "metrics (breakdowns, bootstrap)")
    _timed(cell, "compass_summary", "COMPASS tables")
    _timed(runs, "write_cell", "store writes")
    _timed(runs, "benchmark_reference", "reference rows (chance, blind)")
    _timed(runs, "build_summary", "summary.json")
    _timed(report, "write_report", "HTML report")
    import foilbench.cli.run_cmd as run_cmd

    _timed(run_cmd, "print_tables", "printed tables")
    PHASES["foilbench imports (cli, runner)"] = t_imported - T_START
    sys.argv = ["foilbench", "run", *sys.argv[1:]]
    try:
        cli_main.main()
    finally:
        PHASES["in-process total"] = time.perf_counter() - T_START
        out = os.environ.get("FB_PHASES_OUT")
        if out:
            with open(out, "w") as fh:
                json.dump({"phases": PHASES, "eval_stats": STATS}, fh, indent=1)


if __name__ == "__main__":
    main()
