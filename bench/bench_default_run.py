"""The README's default run, timed: ``foilbench run`` from a fresh home, per phase, wall and CPU.

    python bench/bench_default_run.py                      # fresh home, idle: the README's number
    python bench/bench_default_run.py --neighbour          # also next to one busy process
    python bench/bench_default_run.py --src /tmp/old/src   # the same for another source tree

Each measured run is a child process ``foilbench run`` (the user's command, default models and
suite, report included) with a new empty ``FOILBENCH_HOME``, on the cores given by ``--cores``
(default: two, ``taskset``). Inside the child, the runner's steps are wrapped in timers that
keep wall seconds and the *process* CPU seconds (user + system of every thread, so torch's
threads count): suite build (benchmark load), model load, evaluation (all cells), reference
rows, summary, report, printed tables. The parent prints one table per measured run and, with
``--neighbour``, the same run next to one busy competing process (a pure-Python loop pinned to
the same cores) and the ratio busy / idle, side by side. On a machine shared with other jobs
wall seconds depend on them; CPU seconds much less: read both, and the load average printed
with each run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
PHASES = ("suite build", "model load", "evaluation", "reference rows", "summary.json",
          "HTML report", "printed tables")


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def child(out_json: str, args: list[str]) -> None:
    """In the measured process: time the runner's steps, then run the CLI as a user would."""
    t_start, c_start = time.perf_counter(), _cpu()
    phases: dict[str, list[float]] = {}

    def timed(module, name: str, phase: str) -> None:
        real = getattr(module, name)

        def wrapper(*a, **k):
            t0, c0 = time.perf_counter(), _cpu()
            try:
                return real(*a, **k)
            finally:
                wall, cpu = phases.setdefault(phase, [0.0, 0.0])
                phases[phase] = [wall + time.perf_counter() - t0, cpu + _cpu() - c0]

        setattr(module, name, wrapper)

    import foilbench.report as report
    from foilbench.cli import main as cli_main
    from foilbench.cli import run_output
    from foilbench.runner import runs

    timed(runs, "load_benchmarks", "suite build")
    timed(runs, "load_models", "model load")
    timed(runs, "evaluate_cell", "evaluation")
    timed(runs, "write_cell", "evaluation")  # store writes belong to the cells
    timed(runs, "benchmark_reference", "reference rows")
    timed(runs, "build_summary", "summary.json")
    timed(report, "write_report", "HTML report")
    timed(run_output, "print_tables", "printed tables")
    sys.argv = ["foilbench", "run", *args]
    code = 0
    try:
        cli_main._main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    phases["total (in process)"] = [time.perf_counter() - t_start, _cpu() - c_start]
    Path(out_json).write_text(json.dumps({"phases": phases, "code": code}))
    cli_main.exit_now(code)


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measure(src: Path, cores: str, workdir: Path, label: str,
            extra: list[str]) -> dict:
    """One fresh-home run in a child process; its phases plus the outside wall and CPU."""
    home, out = workdir / f"home-{label}", workdir / f"out-{label}"
    phases_json = workdir / f"phases-{label}.json"
    env = dict(os.environ, FOILBENCH_HOME=str(home), PYTHONPATH=str(src))
    for var in ("FOILBENCH_CACHE", "FOILBENCH_CACHE_DIR", "FOILBENCH_DATA_CACHE",
                "OMP_NUM_THREADS", "OMP_WAIT_POLICY"):
        env.pop(var, None)  # as a new user has it
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(phases_json),
           "--", "--out", str(out), *extra]
    if cores:
        cmd = ["taskset", "-c", cores, *cmd]
    load0 = os.getloadavg()[0]
    c0, t0 = _children_cpu(), time.perf_counter()
    with (workdir / f"log-{label}.txt").open("w") as log:
        proc = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if proc.returncode:
        tail = (workdir / f"log-{label}.txt").read_text()[-3000:]
        raise SystemExit(f"{label}: foilbench run failed ({proc.returncode})\n{tail}")
    data = json.loads(phases_json.read_text())
    data.update(wall=wall, cpu=cpu, load=(load0, os.getloadavg()[0]))
    return data


def print_run(label: str, data: dict) -> None:
    phases = data["phases"]
    print(f"\n{label}: load average {data['load'][0]:.1f} before, {data['load'][1]:.1f} after")
    print(f"{'phase':<22}{'wall s':>9}{'CPU s':>9}")
    for name in (*PHASES, "total (in process)"):
        if name in phases:
            wall, cpu = phases[name]
            print(f"{name:<22}{wall:>9.1f}{cpu:>9.1f}")
    print(f"{'process (outside)':<22}{data['wall']:>9.1f}{data['cpu']:>9.1f}")


def busy_neighbour(cores: str) -> subprocess.Popen:
    """One competing process: a pure-Python loop, pinned to the same cores."""
    cmd = [sys.executable, "-c", "while True: pass"]
    return subprocess.Popen(["taskset", "-c", cores, *cmd] if cores else cmd)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        rest = sys.argv[3:]
        child(sys.argv[2], rest[1:] if rest[:1] == ["--"] else rest)
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", default="0,1", help="taskset core list ('' = no pinning)")
    ap.add_argument("--src", type=Path, default=SRC, help="the source tree to run")
    ap.add_argument("--neighbour", action="store_true",
                    help="also run next to one busy process and print the ratio")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="kept afterwards; default: a temp dir, removed at the end")
    ap.add_argument("run_args", nargs="*", help="extra `foilbench run` arguments (after --)")
    args = ap.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="fb-default-run-"))
    workdir.mkdir(parents=True, exist_ok=True)
    kept = "kept" if args.workdir else "removed at the end"
    print(f"foilbench run from a fresh home, source {args.src}, cores {args.cores or 'all'}, "
          f"{os.cpu_count()} CPUs here; files in {workdir} ({kept})", flush=True)
    try:
        bench(args, workdir)
    finally:
        if args.workdir is None:  # each fresh home holds a built suite (~170 MB)
            shutil.rmtree(workdir, ignore_errors=True)


def bench(args: argparse.Namespace, workdir: Path) -> None:
    """The measured runs in ``workdir``, printed."""
    idle = measure(args.src, args.cores, workdir, "idle", args.run_args)
    print_run("fresh home", idle)
    if args.neighbour:
        neighbour = busy_neighbour(args.cores)
        try:
            time.sleep(2)
            busy = measure(args.src, args.cores, workdir, "busy", args.run_args)
        finally:
            neighbour.kill()
            neighbour.wait()
        print_run("fresh home, next to one busy process", busy)
        print(f"\nnext to a busy process / alone: wall {busy['wall'] / idle['wall']:.2f}x, "
              f"evaluation wall {busy['phases']['evaluation'][0] / idle['phases']['evaluation'][0]:.2f}x")


if __name__ == "__main__":
    main()
