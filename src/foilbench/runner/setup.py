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
    to be dropped (``--allow-partial``), any item's (an empty caption, an unknown tier); and
    a ``LOADER:PATH?options`` spec's options, their values and its paths
    (:mod:`foilbench.data.loader_specs`). No image is read here; images are checked when the
    benchmark loads, as before."""
    from pathlib import Path

    from foilbench.data.format import MANIFEST_FILE, read_benchmark_folder
    from foilbench.data.loader_specs import check_loader_spec
    from foilbench.data.registry import benchmark_names, suites
    from foilbench.data.validate import validate
    from foilbench.errors import BenchmarkError

    for spec in specs:
        path = Path(spec)
        check_loader_spec(spec)  # LOADER:PATH?options: options, values and paths
        if spec in suites() or spec in benchmark_names() or not (path / MANIFEST_FILE).exists():
            continue
        bench = read_benchmark_folder(path)
        problems = [p for p in validate(bench, check_images=False)
                    if p.is_table_level or settings.on_invalid == "raise"]
        if problems:
            raise BenchmarkError(f"benchmark {bench.name!r} at {path} is invalid: "
                                 + format_problems(problems))


def model_list(models: Any, what: str = "models") -> list[Any]:
    """Spec strings and adapter objects (a model held in memory: ``foilbench.from_open_clip``,
    ``from_hf``, a :class:`~foilbench.models.base.CallableDualEncoder`, any adapter), in
    order; a lone string or object is one model."""
    if models is None:
        return []
    single = isinstance(models, str) or hasattr(models, "info") \
        or hasattr(models, "state_dict")  # a torch container is iterable: one (bad) entry
    if single or not isinstance(models, Iterable):
        models = [models]
    from foilbench.configfile import expand_specs

    out: list[Any] = []
    for entry in models:
        if isinstance(entry, str):
            out += expand_specs([entry])  # an @FILE list file in place
        else:
            adapter_name(entry, what)
            out.append(entry)
    return out


def adapter_name(adapter: Any, what: str = "models") -> str:
    """The display name of an adapter object (its ``info.spec``), checked: it must be an
    adapter of a known family with a non-empty one-line name and fingerprint."""
    from foilbench.errors import ModelError
    from foilbench.models.base import family_of
    from foilbench.models.live import display_name

    info = getattr(adapter, "info", None)
    if info is None:
        raise RunnerError(f"{what} must be spec strings or model adapters, got "
                          f"{type(adapter).__name__} (wrap a live model with "
                          "foilbench.from_open_clip or foilbench.from_hf)")
    try:
        family_of(adapter)
        spec = getattr(info, "spec", None)
        name = display_name(spec if spec is not None else "", "")
    except ModelError as e:
        raise RunnerError(f"{what}: {type(adapter).__name__}: {e}") from None
    fingerprint = getattr(info, "fingerprint", None)
    if not isinstance(fingerprint, str) or not fingerprint:
        raise RunnerError(f"{what}: {name} has no fingerprint (info.fingerprint must be a "
                          "non-empty string that changes whenever its scores could)")
    return name


def load_models(entries: Sequence[Any], settings: RunSettings) -> list[tuple[str, Any]]:
    """``(name, adapter)`` per entry: a spec string is built on the settings' device and
    dtype; an adapter object is used as it is (its own device and dtype) under its
    ``info.spec``. Two entries may not share a name when one of them is an object (their
    rows would merge in a matrix)."""
    loaded = [(entry, resolve_model(entry, device=settings.device, dtype=settings.dtype))
              if isinstance(entry, str) else (adapter_name(entry), entry) for entry in entries]
    objects = {name for entry, (name, _) in zip(entries, loaded, strict=True)
               if not isinstance(entry, str)}
    names = [name for name, _ in loaded]
    clash = sorted({n for n in objects if names.count(n) > 1})
    if clash:
        raise RunnerError(f"two models are named {clash[0]!r}; give each model held in "
                          "memory its own name= (it labels its rows in the store and matrix)")
    if settings.precision:
        fixed = [name for (name, adapter), entry in zip(loaded, entries, strict=True)
                 if not isinstance(entry, str) and not callable(getattr(adapter, "set_dtype",
                                                                        None))]
        if fixed:
            raise RunnerError(f"precision={settings.precision!r}: {fixed[0]} is held in "
                              "memory and cannot switch precision (it would cast your model); "
                              "leave precision unset")
    return loaded


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
    from foilbench.runner.progress import bars_wanted

    shown = bars_wanted(settings.progress) if progress is None else progress
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
