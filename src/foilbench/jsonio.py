"""The one JSON file writer: sorted keys, UTF-8, atomic.

The output is standard JSON (RFC 8259): a NaN or infinite float, which Python's encoder
would write as the non-JSON tokens ``NaN`` / ``Infinity``, is written as ``null`` (an undefined
statistic, e.g. a rate over zero items), so every JSON reader loads it. Sorted keys make the
same value give the same bytes (manifests and the suite index are part of
byte-identical rebuilds). Output is ASCII with ``\\u`` escapes, a subset of UTF-8, so any reader
decodes it whatever its locale. The text goes to a temporary file in the same folder that is
moved into place with ``os.replace``, so a killed process leaves the old file or the new one,
never half of one.
"""

from __future__ import annotations

import json
import math
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any


def dumps(value: Any, *, indent: int | None = 2,
          default: Callable[[Any], Any] | None = None) -> str:
    """``value`` as sorted JSON text with a final newline (``indent=None``: one line).

    >>> dumps({"b": 1, "a": [1, 2]}, indent=None)
    '{"a": [1, 2], "b": 1}\\n'
    >>> dumps({"caption": "a caf\\u00e9"}, indent=None)
    '{"caption": "a caf\\\\u00e9"}\\n'
    >>> dumps({"rate": float("nan"), "n": [1.5, float("inf")]}, indent=None)
    '{"n": [1.5, null], "rate": null}\\n'
    """
    fallback = None if default is None else (lambda o: finite(default(o)))
    return json.dumps(finite(value), indent=indent, sort_keys=True, default=fallback,
                      allow_nan=False) + "\n"


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float (numpy's too) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def write_json(path: str | Path, value: Any, *, indent: int | None = 2,
               default: Callable[[Any], Any] | None = None) -> Path:
    """Write :func:`dumps` of ``value`` to ``path`` atomically (parent folders are created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(value, indent=indent, default=default)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # only left when writing failed
    return path
