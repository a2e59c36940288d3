"""Options after ``?`` in a model spec, e.g. ``hf:/models/siglip?score=cosine&batch=16``."""

from __future__ import annotations

from foilbench.errors import ModelError


def split_options(rest: str, allowed: dict[str, tuple[str, ...] | None]) -> tuple[str, dict]:
    """``"body?k=v&k2=v2"`` -> (body, {k: v}). ``allowed`` maps each option to its permitted
    values (None: any value). Unknown options or values raise, naming what is possible."""
    body, _, query = rest.partition("?")
    opts: dict[str, str] = {}
    for pair in filter(None, query.split("&")):
        key, eq, value = pair.partition("=")
        if not eq:
            raise ModelError(f"model option {pair!r} must look like key=value")
        if key not in allowed:
            raise ModelError(f"unknown model option {key!r}; possible: {', '.join(allowed)}")
        values = allowed[key]
        if values is not None and value not in values:
            raise ModelError(f"model option {key}={value!r} is not one of {', '.join(values)}")
        opts[key] = value
    return body, opts


def int_option(opts: dict, key: str, default: int) -> int:
    try:
        value = int(opts.get(key, default))
    except ValueError:
        raise ModelError(f"model option {key}={opts[key]!r} must be an integer") from None
    if value < 1:
        raise ModelError(f"model option {key} must be at least 1, got {value}")
    return value
