"""The embedded benchmark suite ``synth``: built once from the procedural world, then cached.

Parts (each a foilbench benchmark folder under the suite directory):

- ``world-pairs``: CompoSET-style single-edit pairs
  (:func:`foilbench.construct.composet.pairs.build_pairs`);
- ``autocomp-swap`` / ``autocomp-confusion``: Auto-Comp concepts in both conditions
  (:func:`foilbench.construct.autocomp.bench.build_autocomp`);
- ``autocomp-n1``: Auto-Comp's N = 1 baselines (Table 14: Vary Color, Vary Object), the same
  concept machinery at one object (:func:`foilbench.construct.autocomp.n1.build_autocomp_n1`);
- ``compass-synth``: COMPASS scene-graph captions
  (:func:`foilbench.construct.compass.build.build_compass_benchmark`).

Every part follows one builder contract (:class:`Part`): it renders, the suite writes. Builders
are named by lazy ``"module:function"`` targets (the project's registry pattern), so importing
this module stays cheap; a part whose module is not installed (a plugin part) is skipped with a
note. The cache lives in ``$FOILBENCH_HOME/suite/<version>-<seed>``
(default ``~/.cache/foilbench``), where ``<version>`` is the package version plus a
fingerprint of the source files that shape the suite, so a changed renderer never serves a
stale cache. Same seed and version give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foilbench import __version__
from foilbench.data.format import Benchmark, load_benchmark, write_benchmark
from foilbench.jsonio import write_json
from foilbench.paths import suite_dir
from foilbench.registry import load_target

DEFAULT_SEED = 0
DEFAULT_SIZE = 160
SUITE_FILE = "suite.json"


@dataclass(frozen=True)
class Part:
    """One builder of the suite. ``target`` names a function with the builder contract

        build(out_dir, *, seed, size, progress, **config) -> list[Benchmark]

    It renders its files (images, masks, scene graphs) in folders of its own under
    ``out_dir`` and returns its benchmarks; the suite writes each one to
    ``out_dir / benchmark.name``. ``defaults`` are the part's ``config`` in the suite."""

    name: str
    target: str  # "module:function" with the builder contract
    defaults: dict = field(default_factory=dict)


PARTS: tuple[Part, ...] = (
    Part("pairs", "foilbench.construct.composet.pairs:build", {"n_scenes": 80, "foils_per_scene": 16}),
    Part("autocomp", "foilbench.construct.autocomp.bench:build",
         {"n_concepts": 16, "ns": (2, 3)}),
    Part("autocomp-n1", "foilbench.construct.autocomp.n1:build", {"n_concepts": 16}),
    Part("compass", "foilbench.construct.compass.build:build", {"n_scenes": 40}),
)

# The benchmarks the embedded suite holds, in build order (tests/test_console_names.py checks
# them against a build): each resolves by name, ``--benchmark world-pairs``.
MEMBERS = ("world-pairs", "autocomp-swap", "autocomp-confusion", "autocomp-n1", "compass-synth")

# Source files whose changes change the suite's bytes (fingerprinted into the cache name).
_FINGERPRINT_PACKAGES = ("foilbench.world", "foilbench.construct", "foilbench.data")
_FINGERPRINT_MODULES = ("hashing.py", "jsonio.py")  # scene ids and the JSON files written


def code_fingerprint() -> str:
    """First 10 hex digits of sha256 over the suite-shaping source files."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for pkg in _FINGERPRINT_PACKAGES:
        folder = root.joinpath(*pkg.split(".")[1:])
        for path in sorted(folder.glob("*.py")):
            h.update(path.name.encode())
            h.update(path.read_bytes())
    for name in _FINGERPRINT_MODULES:
        h.update(name.encode())
        h.update((root / name).read_bytes())
    return h.hexdigest()[:10]


def suite_version() -> str:
    return f"{__version__}+{code_fingerprint()}"


def cache_dir(seed: int = DEFAULT_SEED) -> Path:
    return suite_dir() / f"{suite_version()}-{seed}"


def _note(msg: str) -> None:
    from tqdm import tqdm  # a line printed above a run's display, which is then redrawn

    tqdm.write(f"foilbench suite: {msg}", file=sys.stderr)


def build_suite(out_dir: str | Path, seed: int = DEFAULT_SEED, size: int = DEFAULT_SIZE,
                config: dict[str, dict] | None = None, parts: tuple[str, ...] | None = None,
                progress: Any = True) -> dict:
    """Write every available part of the suite under ``out_dir`` and a ``suite.json`` index.

    ``config`` overrides a part's builder arguments (``{"pairs": {"n_scenes": 4}}``);
    ``parts`` restricts which parts run. ``progress``: a bool (a bar per part) or a progress
    sink (:mod:`foilbench.scoring.progress`; ``foilbench run`` passes its one display).
    Returns the index written to ``suite.json``.
    """
    known = {p.name: p for p in PARTS}
    config = config or {}
    for name in list(config) + list(parts or ()):
        if name not in known:
            raise ValueError(f"unknown suite part {name!r}; possible: {', '.join(known)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    folders: list[str] = []
    skipped: dict[str, str] = {}
    for part in PARTS:
        if parts is not None and part.name not in parts:
            continue
        try:
            fn = load_target(part.target)
        except (ModuleNotFoundError, AttributeError) as e:
            skipped[part.name] = f"{part.target} not available ({e})"
            _note(f"skipping {part.name}: {skipped[part.name]}")
            continue
        cfg = {**part.defaults, **config.get(part.name, {})}
        for bench in fn(out, seed=seed, size=size, progress=progress, **cfg):
            write_benchmark(bench, out / bench.name)  # copies images only from another root
            folders.append(bench.name)
    index = {"version": suite_version(), "seed": seed, "size": size,
             "benchmarks": folders, "skipped": skipped,
             "config": {p.name: {**p.defaults, **config.get(p.name, {})} for p in PARTS
                        if parts is None or p.name in parts}}
    write_json(out / SUITE_FILE, index, default=list)
    return index


def load_suite(path: str | Path, on_invalid: str = "raise",
               check_images: bool = True) -> list[Benchmark]:
    """The benchmarks listed in a suite folder's ``suite.json``, in build order."""
    root = Path(path)
    index = json.loads((root / SUITE_FILE).read_text())
    return [load_benchmark(root / name, on_invalid=on_invalid, check_images=check_images)
            for name in index["benchmarks"]]


def embedded_suite(on_invalid: str = "raise", check_images: bool = True,
                   seed: int = DEFAULT_SEED, progress: Any = True) -> list[Benchmark]:
    """The ``synth`` suite: loaded from the cache, built there first if absent."""
    return load_suite(built_suite(seed, progress), on_invalid=on_invalid,
                      check_images=check_images)


def embedded_member(name: str, on_invalid: str = "raise", check_images: bool = True,
                    seed: int = DEFAULT_SEED, progress: Any = True) -> Benchmark:
    """One benchmark of the ``synth`` suite by name (one of :data:`MEMBERS`), the suite built
    first if absent; only that benchmark is loaded and checked."""
    root = built_suite(seed, progress)
    names = json.loads((root / SUITE_FILE).read_text())["benchmarks"]
    if name not in names:
        from foilbench.errors import UnknownNameError

        raise UnknownNameError(f"the embedded suite has no benchmark {name!r}; it holds "
                               f"{', '.join(names)}")
    return load_benchmark(root / name, on_invalid=on_invalid, check_images=check_images)


def built_suite(seed: int = DEFAULT_SEED, progress: Any = True) -> Path:
    """The cached suite folder, built first if absent.

    The build goes to a temporary sibling folder that is renamed into place when complete, so
    an interrupted build never leaves a half-written cache."""
    target = cache_dir(seed)
    if not (target / SUITE_FILE).exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        _note(f"building the embedded suite once into {target} (a few minutes)")
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            build_suite(tmp, seed=seed, size=DEFAULT_SIZE, progress=progress)
            try:
                tmp.rename(target)
            except OSError:  # another process finished first; use theirs
                if not (target / SUITE_FILE).exists():
                    raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return target
