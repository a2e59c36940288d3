"""Planted bugs for the mutation smoke check (tests/test_mutation_smoke.py).

Each mutation is one small edit a real regression could make to the scoring core
(``scoring/`` protocols, ``stats/``, ``audit/crossfit.py``). It is applied to a copy of the
``foilbench`` package (every other file a symlink to the real one), and the test files that
guard that code run against the copy in a fresh process that imports foilbench from the copy
(forked from a job server that never imported foilbench: :class:`JobServer`); the mutation is
caught when a test fails. A snippet is looked up in the whole package, not at a fixed path, so a file that moves
is still found; a snippet that is missing or ambiguous is an error, never a skip (after a
refactor, update the snippet here).

Run ``python tests/_mutations.py`` for the table of mutations and the test that catches each.
"""

from __future__ import annotations

import json
import os
import queue
import select
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
PROTOCOLS, STATS, BLIND = "test_core_protocols.py", "test_core_stats.py", "test_audit_blind.py"


@dataclass(frozen=True)
class Mutation:
    name: str
    snippet: str  # must occur exactly once in the package
    replacement: str
    tests: tuple[str, ...]  # test files (under tests/) that should catch it


MUTATIONS: tuple[Mutation, ...] = (
    Mutation("pair I2T: ties count as wins (> becomes >=)",
             "i2t = (c0i0 > c1i0) & (c1i1 > c0i1)", "i2t = (c0i0 >= c1i0) & (c1i1 >= c0i1)",
             (PROTOCOLS,)),
    Mutation("pair T2I compares captions instead of images",
             "t2i = (c0i0 > c0i1) & (c1i1 > c1i0)", "t2i = (c0i0 > c1i0) & (c1i1 > c0i1)",
             (PROTOCOLS,)),
    Mutation("choice R@1: a tie with the best negative counts as a win",
             "return s[:, 0] > s[:, 1:].max(axis=1)", "return s[:, 0] >= s[:, 1:].max(axis=1)",
             (PROTOCOLS,)),
    Mutation("pair Group chance 1/6 becomes 1/4",
             '"group": 1 / 6}', '"group": 1 / 4}', (PROTOCOLS,)),
    Mutation("choice chance 1/K instead of 1/(K+1)",
             "return 1.0 / np.asarray(n_candidates, dtype=np.float64)",
             "return 1.0 / (np.asarray(n_candidates, dtype=np.float64) - 1)", (PROTOCOLS,)),
    Mutation("bootstrap percentile off by one tail (alpha, not alpha/2)",
             "lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])",
             "lo, hi = np.quantile(means, [alpha, 1 - alpha])", (STATS,)),
    Mutation("bootstrap never draws the last cluster (off by one)",
             "draws = rng.integers(0, g, size=(b, g))",
             "draws = rng.integers(0, g - 1, size=(b, g))", (STATS,)),
    Mutation("paired bootstrap p-value one-sided (factor 2 lost)",
             "p = min(1.0, 2 * min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0))))",
             "p = min(1.0, min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0))))",
             (STATS,)),
    Mutation("Wilson default z 1.96 becomes 1.645",
             "def wilson_ci(k: float, n: float, z: float = 1.96)",
             "def wilson_ci(k: float, n: float, z: float = 1.645)", (STATS,)),
    Mutation("Wilson centre loses its z^2/2n shift",
             "centre = (p + z2 / (2 * n)) / denom", "centre = p / denom", (STATS,)),
    Mutation("Wald uses n - 1",
             "half = z * math.sqrt(p * (1 - p) / n)",
             "half = z * math.sqrt(p * (1 - p) / (n - 1))", (STATS,)),
    Mutation("cross-fitting: sign fitted on all rows, held-out fold included",
             "signs = fit_signs(feats[~test], strata[~test])",
             "signs = fit_signs(feats, strata)", (BLIND,)),
    Mutation("cross-fitting: learning scorer trained on the held-out fold too",
             "feats = feature_fn(~test)", "feats = feature_fn(np.ones_like(test))", (BLIND,)),
    Mutation("cross-fitting: decision sign flipped",
             "oriented[test] = feats[test] * sign[:, None]",
             "oriented[test] = -feats[test] * sign[:, None]", (BLIND,)),
    Mutation("blind decision: ties count as wins",
             "return pos > neg, pos == neg", "return pos >= neg, pos == neg", (BLIND,)),
    Mutation("folds split clusters (rows dealt, not clusters)",
             "return fold_of_group[codes]", "return np.arange(len(codes)) % k", (BLIND,)),
)


class MutationTargetError(AssertionError):
    """A mutation's snippet is missing or ambiguous: the code it targets has changed."""


@dataclass
class Outcome:
    mutation: Mutation | None  # None: the unmutated baseline
    returncode: int
    failed: list[str]  # node ids of failed tests
    tail: str  # the end of pytest's output


def package_dir() -> Path:
    import foilbench

    return Path(foilbench.__file__).resolve().parent


def locate(pkg: Path, m: Mutation) -> tuple[Path, str]:
    """The one file holding ``m.snippet`` (relative to the package) and its mutated text."""
    hits = []
    for path in sorted(pkg.rglob("*.py")):
        text = path.read_text()
        if m.snippet in text:
            hits.append((path, text))
    if len(hits) != 1 or hits[0][1].count(m.snippet) != 1:
        where = ", ".join(f"{p.relative_to(pkg)} x{t.count(m.snippet)}" for p, t in hits)
        raise MutationTargetError(
            f"mutation {m.name!r}: snippet {m.snippet!r} must occur exactly once in the "
            f"foilbench package, found {where or 'nowhere'}; the targeted code changed, so "
            "update the snippet in tests/_mutations.py")
    path, text = hits[0]
    return path.relative_to(pkg), text.replace(m.snippet, m.replacement)


def mutated_copy(pkg: Path, dest: Path, rel: Path | None, text: str | None) -> Path:
    """``dest/foilbench``: symlinks to every package file, ``rel`` replaced by ``text``."""
    shutil.copytree(pkg, dest / "foilbench", copy_function=os.symlink,
                    ignore=shutil.ignore_patterns("__pycache__"))
    if rel is not None:
        target = dest / "foilbench" / rel
        target.unlink()
        target.write_text(text)
    return dest


# A job server: one interpreter that imports what every job imports anyway (numpy, pandas,
# pytest, and PRELOAD: the pytest plugins every pytest run loads, scipy.special that the
# stats jobs import, the stdlib modules foilbench imports: over half of a job's CPU time) but
# never foilbench, then forks a child per job.
# The child puts the copy first on sys.path, checks foilbench really comes from it and runs
# pytest, its output into a file; the server answers with the child's exit code. So each
# job still gets a foilbench imported afresh from its own copy, without paying the
# interpreter and library start-up again.
PRELOAD = ("asyncio", "anyio", "anyio.pytest_plugin", "xdist.plugin", "xdist.looponfail",
           "execnet", "unittest", "doctest", "pdb", "platformdirs", "statistics",
           "xml.etree.ElementTree", "numpy.testing", "pyarrow.parquet", "PIL.Image",
           "scipy.special")
SERVER = r"""
import importlib, json, os, sys, traceback
import numpy, pandas, pytest
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError:  # not installed here: the jobs that need it import it themselves
        pass
assert "foilbench" not in sys.modules
for line in sys.stdin:
    root, log, args = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.environ["PYTHONPATH"] = os.pathsep.join(
                [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
            sys.path.insert(0, root)
            import foilbench
            assert foilbench.__file__.startswith(root), (
                "foilbench not from the copy", foilbench.__file__)
            code = int(pytest.main(args))
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        sys.exit(code)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


class JobServer:
    """One :data:`SERVER` process; :meth:`run` is one job at a time."""

    def __init__(self) -> None:
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER, *PRELOAD],
                                     cwd=TESTS_DIR.parent,
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def run(self, root: Path, args: list[str], timeout: float) -> tuple[int, str]:
        """(exit code, output) of ``pytest args`` with ``root`` first on the path."""
        log = Path(root) / "pytest.log"
        self.proc.stdin.write(json.dumps([str(root), str(log), args]) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        reply = self.proc.stdout.readline() if ready else ""
        out = log.read_text() if log.exists() else ""
        if not reply.strip():
            self.close()
            raise RuntimeError(f"the job server gave no exit code (hang or crash):\n{out}")
        return int(reply), out

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def run_tests(root: Path, tests: tuple[str, ...], server: JobServer,
              timeout: float = 600) -> tuple[int, list[str], str]:
    """pytest -x on ``tests`` with ``root`` first on the path: (exit code, failed node ids,
    output tail). ``timeout`` only guards against a hang; it is not a timed assertion."""
    missing = [t for t in tests if not (TESTS_DIR / t).is_file()]
    if missing:
        raise MutationTargetError(f"test files not found under {TESTS_DIR}: {missing}")
    args = [*(str(TESTS_DIR / t) for t in tests),
            "-x", "-q", "-rf", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]
    code, out = server.run(root, args, timeout)
    failed = [line[len("FAILED "):].split(" - ")[0] for line in out.splitlines()
              if line.startswith("FAILED ")]
    return code, failed, out[-3000:]


def run_one(pkg: Path, m: Mutation | None, tests: tuple[str, ...],
            server: JobServer) -> Outcome:
    rel, text = locate(pkg, m) if m is not None else (None, None)
    with tempfile.TemporaryDirectory(prefix="foilbench-mutant-") as tmp:
        root = mutated_copy(pkg, Path(tmp), rel, text)
        rc, failed, tail = run_tests(root, tests, server)
    return Outcome(m, rc, failed, tail)


def run_all(workers: int | None = None) -> dict[str, Outcome | Exception]:
    """Baseline (key ``""``) and every mutation, ``workers`` subprocesses at a time (default:
    the CPU count, at most 2). A mutation whose snippet is missing maps to its error."""
    pkg = package_dir()
    every = tuple(dict.fromkeys(t for m in MUTATIONS for t in m.tests))
    jobs: list[tuple[str, Mutation | None, tuple[str, ...]]] = [("", None, every)]
    jobs += [(m.name, m, m.tests) for m in MUTATIONS]
    workers = workers or max(1, min(2, os.cpu_count() or 1))
    servers: queue.Queue[JobServer] = queue.Queue()

    def job(spec):
        key, m, tests = spec
        server = servers.get()
        try:
            return key, run_one(pkg, m, tests, server)
        except MutationTargetError as e:
            return key, e
        finally:
            servers.put(server)

    started = [JobServer() for _ in range(workers)]
    for server in started:
        servers.put(server)
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return dict(pool.map(job, jobs))
    finally:
        for server in started:
            server.close()


if __name__ == "__main__":
    results = run_all()
    for key, res in results.items():
        if isinstance(res, Exception):
            print(f"ERROR   {key}: {res}")
        elif key == "":
            print(f"baseline: exit {res.returncode} ({'pass' if res.returncode == 0 else 'FAIL'})")
        else:
            verdict = "caught " if res.returncode == 1 and res.failed else "SURVIVED"
            print(f"{verdict} {key}  <-  {', '.join(res.failed) or '(no failing test)'}")
