"""A ``LOADER:PATH?options`` benchmark spec checked without reading the release.

``run`` and ``sweep`` load their models before their benchmarks (validation decodes each
image once, in the models' own preparation). A spec the loader would refuse, an unknown
option (``composet:DIR?tier=...``), a bad value (``sugarcrepe:DIR?subset=nope``), a path or
an ``?images=`` folder that is not there, was then found only after every model had been
built, which for a large model is minutes of loading for one typo, and some of them ended in
a traceback. :func:`check_loader_spec` reads only the spec: the options the loader declares
(:func:`foilbench.data.loaders.common.takes_options`) and the same check of their values
the loader makes, and that the paths exist. A plugin's loader that declares nothing is
checked when it loads, as before; a Hub spec (``LOADER:hf://...``) when it is fetched.
"""

from __future__ import annotations

from pathlib import Path

from foilbench.data.loaders.common import LoaderOptionError, loader_options


def check_loader_spec(spec: str) -> None:
    """Raise :class:`LoaderOptionError` (one sentence) for a loader spec its loader would
    refuse for its options or paths; anything else passes untouched."""
    from foilbench.data.registry import loaders
    from foilbench.data.subset import split_subset

    spec, _ = split_subset(spec)  # ?sample=N&by=... are the runner's, checked there
    name, sep, rest = spec.partition(":")
    if not sep or len(name) < 2 or name not in loaders() or rest.startswith("hf://"):
        return
    load = loaders().get(name)
    if getattr(load, "spec_options", None) is None:  # a plugin's: checked when it loads
        return
    try:
        folder, options = loader_options(rest, load)
    except ValueError as e:  # a check written as a plain ValueError is the same refusal
        said = str(e)
        raise LoaderOptionError(f"{name}:{said}" if said.startswith(rest) else said) from None
    if not folder.exists():
        raise LoaderOptionError(f"{name}: {folder} does not exist (the benchmark spec "
                                f"{spec!r} names it as the release)")
    images = options.get("images")
    if images and not Path(images).expanduser().is_dir():
        raise LoaderOptionError(f"{name}: ?images={images} is not a folder (it should hold "
                                "the release's images)")
