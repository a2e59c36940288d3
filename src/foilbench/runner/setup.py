"""Setup shared by ``run`` and ``sweep``: models, benchmarks and the embedding cache.

Each step resolves user-typed specs through the registries and reports what it did through
the caller's ``log`` (a dropped item is a warning, never silent).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from foilbench.data.format import Benchmark
from foilbench.data.images import pixels_checked_by
from foilbench.data.registry import resolve_benchmarks
from foilbench.data.validate import format_problems
from foilbench.hashing import remembered_file_hashes
from foilbench.models.registry import resolve_model
from foilbench.runner.log import Log
from foilbench.runner.settings import RunnerError, RunSettings
from foilbench.scoring.prepared import SharedPreparation, shared_preparation
from foilbench.store.cache import EmbeddingCache


def spec_list(specs: str | Iterable[str] | None, what: str) -> list[str]:
    """A list of spec strings (a lone string is one spec, not its characters); each
    ``@FILE`` is replaced by the specs that list file holds (:mod:`foilbench.configfile`)."""
    if specs is None:
        return []
    if isinstance(specs, str):
        return [specs]
    out = list(specs)
    bad = [s for s in out if not isinstance(s, str)]
    if bad:
        raise RunnerError(f"{what} must be spec strings, got {bad[0]!r}")
    from foilbench.configfile import expand_specs

    return expand_specs(out)


def check_folders_first(specs: Sequence[str], settings: RunSettings) -> None:
    """Refuse, before any model loads, a benchmark folder among ``specs`` whose text is
    invalid: a manifest or table that does not read, a problem of the table as a whole
    (:mod:`foilbench.data.table_checks`: a ``score_unit`` naming no column, a bad
    ``unit_chance``, an instance spanning two scenes, no rows) and, unless invalid items are
    to be dropped (``--allow-partial``), any item's (an empty caption, an unknown tier). No
    image is read here; images are checked when the benchmark loads, as before."""
    from pathlib import Path

    from foilbench.data.format import MANIFEST_FILE, read_benchmark_folder
    from foilbench.data.registry import benchmark_names, suites
    from foilbench.data.validate import validate
    from foilbench.errors import BenchmarkError

    for spec in specs:
        path = Path(spec)
        if spec in suites() or spec in benchmark_names() or not (path / MANIFEST_FILE).exists():
            continue
        bench = read_benchmark_folder(path)
        problems = [p for p in validate(bench, check_images=False)
                    if p.is_table_level or settings.on_invalid == "raise"]
        if problems:
            raise BenchmarkError(f"benchmark {bench.name!r} at {path} is invalid: "
                                 + format_problems(problems))


def load_models(specs: Sequence[str], settings: RunSettings) -> list[tuple[str, Any]]:
    """``(spec, adapter)`` per spec, on the settings' device and dtype."""
    return [(spec, resolve_model(spec, device=settings.device, dtype=settings.dtype))
            for spec in specs]


@contextlib.contextmanager
def decoding_once(loaded: list, settings: RunSettings, log: Log
                  ) -> Iterator[SharedPreparation | None]:
    """The block of a run or sweep over ``loaded`` ((spec, adapter) pairs) where each image is
    decoded and read once: image files hashed once (validation's checksum and the engine both
    key by sha256), the models' shared preparation open (:mod:`foilbench.scoring.prepared`),
    and benchmarks loaded inside it (:func:`load_benchmarks` with ``prepared``) have their
    pixels checked by that preparation's decode, which the cells then reuse."""
    with remembered_file_hashes(), shared_preparation(loaded, settings, log) as shared:
        yield shared


def load_benchmarks(specs: Sequence[str], settings: RunSettings, log: Log,
                    progress: Any = None, prepared: SharedPreparation | None = None
                    ) -> list[Benchmark]:
    """Every benchmark the specs name (a suite names several), validated and with a checksum
    (computed when the manifest has none: it keys resume and the stored blind audit); dropped
    items (with ``allow_partial``) are logged as a warning with their counts and reasons.
    ``progress``: the run's display, where a suite built on first use shows its parts (None:
    bars of their own when ``settings.progress``). ``prepared``: the run's shared
    preparation (:func:`decoding_once`), which validation's pixel check decodes into."""
    shown = settings.progress if progress is None else progress
    check = prepared.check_pixels if prepared is not None else None
    with pixels_checked_by(check):
        benches = [b for spec in specs
                   for b in resolve_benchmarks(spec, on_invalid=settings.on_invalid,
                                               progress=shown)]
    disambiguate(benches, log)
    for bench in benches:
        ensure_checksum(bench)
        if bench.checksum_note:
            log("warning", f"{bench.name}: {bench.checksum_note}")
        if bench.dropped:
            log("warning", f"{bench.name}: dropped {bench.dropped.n} invalid item(s); results "
                           f"are PARTIAL.\n{format_problems(bench.dropped.problems)}")
    return benches


def disambiguate(benches: list[Benchmark], log: Log) -> None:
    """Benchmarks that share a name (two folders whose manifests both say ``mybench``) get
    the shortest tail of their folder path that tells them apart, ``mybench [v2/data]``: a
    matrix, a report and ``show`` list benchmarks by name."""
    by_name: dict[str, list[Benchmark]] = {}
    for bench in benches:
        by_name.setdefault(bench.name, []).append(bench)
    for name, same in by_name.items():
        if len(same) < 2:
            continue
        parts = [bench.root.resolve().parts for bench in same]
        depth = 1
        while depth < max(map(len, parts)) and \
                len({p[-depth:] for p in parts}) < len(parts):
            depth += 1
        tails = ["/".join(p[-depth:]) for p in parts]
        if len(set(tails)) < len(tails):  # one folder named twice: number them instead
            tails = [f"{t} #{k + 1}" for k, t in enumerate(tails)]
        for bench, tail in zip(same, tails, strict=True):
            bench.manifest.name = f"{name} [{tail}]"
        log("warning", f"{len(same)} benchmarks are named {name!r}; they are shown as "
                       + ", ".join(repr(b.name) for b in same))


def open_cache(settings: RunSettings, log: Log | None = None) -> EmbeddingCache | None:
    """The embedding cache (None with ``use_cache=False``); a discarded shard is reported
    through ``log`` as a warning (default: a Python ``store.cache.CacheWarning``)."""
    if not settings.use_cache:
        return None
    notify = (lambda msg: log("warning", msg)) if log is not None else None
    return EmbeddingCache(settings.cache_dir, notify=notify)


def ensure_checksum(bench: Benchmark) -> str:
    """The benchmark's checksum, computed (and kept on its manifest) when it has none."""
    if not bench.manifest.checksum:
        bench.manifest.checksum = bench.compute_checksum()
    return bench.manifest.checksum
