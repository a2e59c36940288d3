"""What to tell a user whose ``--benchmark`` spec names nothing that exists: a folder that is
not there, or a published release that is not fetched yet (with the command that fetches it,
or, for a release foilbench cannot fetch, the ``LOADER:PATH`` form to use)."""

from __future__ import annotations

import os
from collections.abc import Sequence


def looks_like_path(spec: str) -> bool:
    """``./x``, ``../x``, ``/x``, ``~/x``, ``x/y`` (or a Windows separator): a folder, not a
    name."""
    return spec.startswith((".", "~")) or "/" in spec or os.sep in spec


def unresolved_message(spec: str, loader_names: Sequence[str]) -> str | None:
    """One sentence for a spec that names a missing folder or an unfetched release; None when
    it is neither (the caller lists close names instead)."""
    from foilbench.fetch.catalog import releases

    fetchable = {name: rel for name, rel in releases().items() if rel.spec is not None}
    if spec in fetchable:
        return (f"{spec} is not fetched yet: run `foilbench fetch {spec}` (then "
                f"`--benchmark {spec}` finds it), or name a copy you already have as "
                f"{_loader_of(fetchable[spec].spec) or spec}:PATH")
    if spec in loader_names:
        return (f"{spec} is a loader, not a benchmark: name the folder of its release as "
                f"{spec}:PATH (foilbench cannot fetch it; `foilbench benchmarks` describes "
                "each loader and `foilbench fetch --list` names the releases it can fetch)")
    if looks_like_path(spec) and ":" not in spec.split("/", 1)[0]:
        return (f"folder {spec} does not exist (a benchmark is a folder holding "
                "manifest.json; a release is LOADER:PATH)")
    return None


def _loader_of(spec_template: str | None) -> str | None:
    if not spec_template:
        return None
    loader, sep, _ = spec_template.partition(":")
    return loader if sep else None
