"""Backends from specs, one per role, built with a run's options, and what they counted."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foilbench.construct.backends.base import Backend


def resolve_backends(specs: Mapping[str, str | None], *, device: str = "auto",
                     dtype: str = "float32", ledger: Any = None,
                     max_concurrency: int | None = None,
                     cache_dir: str | Path | None = None,
                     retries: int | None = None) -> dict[str, Backend]:
    """One backend per role (``None`` specs are left out), built with the run's options.

    Local models get ``device`` and ``dtype``. API backends get ``max_concurrency``,
    ``cache_dir`` (their response and image caches), the transport's ``retries`` (429 / 5xx /
    network) and the output folder's
    :class:`~foilbench.construct.engine.ledger.SpendLedger` (its prices price the dry run; the
    stage engine binds it again when the run starts): one cap for text, images, edits and VQA
    together, across resumes and processes. Offline backends ignore every option.
    """
    from foilbench.construct.backends.registry import resolve_backend

    wanted = {role: spec for role, spec in specs.items() if spec}
    options: dict[str, Any] = {"device": device, "dtype": dtype}
    if max_concurrency is not None:
        options["max_concurrency"] = int(max_concurrency)
    if cache_dir is not None:
        options["cache_dir"] = Path(cache_dir)
    if any(spec.startswith("api:") for spec in wanted.values()):
        from foilbench.models.api.transport import RetryPolicy

        options["ledger"] = ledger
        options["policy"] = RetryPolicy() if retries is None else RetryPolicy(
            max_retries=int(retries))
    return {role: resolve_backend(role, spec, **options) for role, spec in wanted.items()}


def backend_usage(backends: dict[str, Backend]) -> dict[str, dict]:
    """HTTP requests, cache hits and billed spend per role, for backends that count them."""
    return {role: usage() for role, b in sorted(backends.items())
            if callable(usage := getattr(b, "usage", None))}
