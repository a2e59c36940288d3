"""Benchmark specs: a registered name, a foilbench-format folder, or ``LOADER:PATH``.

Registered names are embedded benchmarks (factories called with no arguments that return a
:class:`~foilbench.data.format.Benchmark`). Suites map a name to several benchmarks (the
embedded default ``synth``). Loaders convert a published release in its native format:
``loader(path, on_invalid=..., check_images=...) -> Benchmark``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from foilbench.data.format import MANIFEST_FILE, Benchmark, load_benchmark
from foilbench.errors import UnknownNameError
from foilbench.registry import Registry, unknown_message


@lru_cache(maxsize=1)
def suites() -> Registry:
    """Suite name -> a factory returning several benchmarks (``synth``)."""
    reg = Registry("suite")
    reg.register("synth", "foilbench.construct.suite:embedded_suite",
                 "the embedded procedural suite (pairs, Auto-Comp swap/confusion, COMPASS)")
    return reg


@lru_cache(maxsize=1)
def benchmark_names() -> Registry:
    """Benchmark name -> factory ``(on_invalid, check_images) -> Benchmark``; plugins add
    names through the ``foilbench.benchmarks`` entry-point group."""
    reg = Registry("benchmark", "foilbench.benchmarks")
    reg.register("tiny-builtin", "foilbench.data.tiny:tiny_benchmark",
                 "a 12-item built-in pair benchmark drawn with PIL (smoke test)")
    return reg


# Published releases with one ``load`` each: name -> (protocol, Table-8 metric) in words.
PUBLISHED: dict[str, str] = {
    "composet": "CompoSET single-edit pairs, 3 caption tiers (pair; Group)",
    "winoground": "Winoground 2x2 (pair; Group)",
    "bivlc": "BiVLC bidirectional pairs (pair; Group)",
    "whatsup": "What's Up Controlled A/B, the paper's 4-caption choice (choice; I2T; Table 8 "
               "uses whatsup_pairs)",
    "colorswap": "ColorSwap colour-word order pairs (pair; Group)",
    "mmvp": "MMVP-VLM CLIP-blind image pairs (pair; Group; the authors' pair accuracy = T2I)",
    "naturalbench": "NaturalBench natural adversarial pairs (image_choice; T2I)",
    "colorbench": "ColorBench colour robustness, original vs each recolouring (image_choice; "
                  "T2I; ?form=i2t for caption choice)",
    "sugarcrepe": "SugarCrepe 7 hard-negative types (choice; I2T; ?subset=table8 for Table 8's "
                  "five)",
    "sugarcrepe_pp": "SugarCrepe++ two positives vs one negative (choice; I2T, one result per "
                     "instance)",
    "aro": "ARO VG-Relation and VG-Attribution (choice; I2T)",
    "vl_checklist": "VL-CheckList objects/attributes/relations (choice; I2T)",
    "vsr": "VSR visual spatial reasoning, one split (image_choice; T2I)",
}


@lru_cache(maxsize=1)
def loaders() -> Registry:
    """Loader name -> ``load(path, on_invalid, check_images) -> Benchmark`` for
    ``LOADER:PATH`` specs; plugins add loaders through ``foilbench.loaders``."""
    reg = Registry("loader", "foilbench.loaders")
    for name, description in PUBLISHED.items():
        reg.register(name, f"foilbench.data.loaders.{name}:load", description)
    reg.register("whatsup_pairs", "foilbench.data.loaders.whatsup:load_pairs",
                 "What's Up image pairs, all six per set (Group; CompoSET Table 8; "
                 "?pairs=axis: App. E)")
    reg.register("aro_coco_order", "foilbench.data.loaders.aro_order:load_coco",
                 "ARO COCO-Order: Karpathy-test captions vs four POS-based shuffles (needs spaCy)",
                 requires=("spacy",))
    reg.register("aro_flickr_order", "foilbench.data.loaders.aro_order:load_flickr",
                 "ARO Flickr30k-Order: test captions vs four POS-based shuffles (needs spaCy)",
                 requires=("spacy",))
    return reg


def resolve_benchmarks(spec: str, *, on_invalid: str = "raise", check_images: bool = True,
                       progress: Any = True) -> list[Benchmark]:
    """All benchmarks a spec names (a suite names several).

    Args:
        spec: Anything :func:`resolve_benchmark` takes, or a suite name (``synth``);
            ``?sample=N&by=...`` takes a seeded stratified subset of each
            (:mod:`foilbench.data.subset`).
        on_invalid: ``"raise"`` or ``"drop"`` (see :func:`~foilbench.data.format.make_benchmark`).
        check_images: Decode every image while validating.
        progress: ``False`` silences a suite's build bars; a progress sink shows them on the
            caller's display (passed to suite loaders that take ``progress``).

    Returns:
        The benchmarks, in the suite's order.
    """
    from foilbench.data.subset import split_subset, stratified_subset

    spec, subset = split_subset(spec)
    if subset is not None:
        return [stratified_subset(b, subset) for b in resolve_benchmarks(
            spec, on_invalid=on_invalid, check_images=check_images, progress=progress)]
    if spec in suites():
        loader = suites().get(spec)
        extra = {"progress": progress} if _takes(loader, "progress") else {}
        return list(loader(on_invalid=on_invalid, check_images=check_images, **extra))
    if _is_member(spec):
        from foilbench.construct.suite import embedded_member

        return [embedded_member(spec, on_invalid=on_invalid, check_images=check_images,
                                progress=progress)]
    return [resolve_benchmark(spec, on_invalid=on_invalid, check_images=check_images)]


def _is_member(spec: str) -> bool:
    """``spec`` names a benchmark of the embedded suite (``world-pairs``, ...) and no folder
    of that name holds a benchmark (a folder wins)."""
    from foilbench.construct.suite import MEMBERS

    return spec in MEMBERS and not (Path(spec) / MANIFEST_FILE).exists()


def _takes(fn, name: str) -> bool:
    import inspect

    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def resolve_benchmark(spec: str, *, on_invalid: str = "raise",
                      check_images: bool = True) -> Benchmark:
    """The one benchmark a spec names.

    Args:
        spec: A registered name (``tiny-builtin``, a plugin's), a foilbench-format folder,
            ``LOADER:PATH[?options]`` for a published release, ``hf://datasets/ORG/NAME@REV``
            or ``LOADER:hf://...`` on the Hugging Face Hub (:mod:`foilbench.data.hub`), or
            the name of a release ``foilbench fetch`` downloaded.
        on_invalid: ``"raise"`` or ``"drop"`` (see :func:`~foilbench.data.format.make_benchmark`).
        check_images: Decode every image while validating.

    Returns:
        The validated benchmark.

    Raises:
        UnknownNameError: Nothing by that name, with close matches.
        BenchmarkError: The benchmark is malformed or invalid.
    """
    from foilbench.data.subset import split_subset, stratified_subset

    spec, subset = split_subset(spec)
    if subset is not None:
        return stratified_subset(resolve_benchmark(spec, on_invalid=on_invalid,
                                                   check_images=check_images), subset)
    names = benchmark_names()
    if spec in names:
        return names.get(spec)(on_invalid=on_invalid, check_images=check_images)
    if spec.startswith("hf://"):  # a foilbench folder in a Hub dataset repo (data/hub.py)
        from foilbench.data.hub import load_hub_benchmark

        return load_hub_benchmark(spec, on_invalid=on_invalid, check_images=check_images)
    if _is_member(spec):
        from foilbench.construct.suite import embedded_member

        return embedded_member(spec, on_invalid=on_invalid, check_images=check_images)
    loader, sep, rest = spec.partition(":")
    if sep and loader in loaders() and len(loader) > 1:  # len > 1: not a Windows drive letter
        if rest.startswith("hf://"):  # the release read from a Hub snapshot (data/hub.py)
            from foilbench.data.hub import localise

            rest, hub = localise(loader, rest)
            bench = loaders().get(loader)(rest, on_invalid=on_invalid, check_images=check_images)
            bench.manifest.extras["hub"] = hub
            return bench
        return loaders().get(loader)(rest, on_invalid=on_invalid, check_images=check_images)
    path = Path(spec)
    if (path / MANIFEST_FILE).exists():
        return load_benchmark(path, on_invalid=on_invalid, check_images=check_images)
    from foilbench.fetch.index import fetched_spec

    fetched = fetched_spec(spec) if not path.exists() else None
    if fetched is not None:  # a release `foilbench fetch NAME` wrote
        return resolve_benchmark(fetched, on_invalid=on_invalid, check_images=check_images)
    if path.exists():
        raise UnknownNameError(f"{spec}: exists but is not a foilbench benchmark folder (no "
                               f"{MANIFEST_FILE}); for a published release use LOADER:PATH with "
                               f"one of: {', '.join(loaders().names())}")
    from foilbench.construct.suite import MEMBERS
    from foilbench.data.spec_hints import unresolved_message

    known = suites().names() + list(MEMBERS) + names.names() + \
        [f"{n}:PATH" for n in loaders().names()] + \
        ["hf://datasets/ORG/NAME@REV", "LOADER:hf://datasets/ORG/NAME@REV"]
    raise UnknownNameError(unresolved_message(spec, loaders().names()) or
                           unknown_message("benchmark", spec, known))
