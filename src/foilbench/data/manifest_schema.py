"""The schema of ``manifest.json``: each field's type, checked before the manifest is used.

A manifest is read from disk and may hold anything JSON can: a list where ``name`` belongs
passed the old presence-only check and surfaced later as a confusing error (or not at all).
The pydantic model below names each known field's type; fields it does not know go to
``extras`` unchanged (loaders keep their own metadata there). Errors name the file and the
field, one line each.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from foilbench.errors import BenchmarkError

# Printed fields are capped: a name is shown on every progress line and table title, and a
# million characters of it made ``run`` print nothing for minutes. Generous for any real
# benchmark; what is printed is escaped and cut shorter still (:mod:`foilbench.display`).
NAME_MAX = 200
SHORT_MAX = 100  # identifiers: kind, version, protocol, checksum, primary_metric
TEXT_MAX = 20_000  # free text: description, source


class ManifestSchema(BaseModel):
    """Types of the fields :class:`~foilbench.data.benchmark.Manifest` reads."""

    model_config = ConfigDict(extra="allow", strict=True)

    name: StrictStr = Field(min_length=1, max_length=NAME_MAX)
    kind: StrictStr = Field(max_length=SHORT_MAX)
    version: Annotated[StrictStr, Field(max_length=SHORT_MAX)] | StrictInt = "1"
    protocol: StrictStr = Field(default="", max_length=SHORT_MAX)
    license: StrictStr = Field(default="unknown", max_length=NAME_MAX)
    source: StrictStr = Field(default="", max_length=TEXT_MAX)
    checksum: StrictStr = Field(default="", max_length=SHORT_MAX)
    description: StrictStr = Field(default="", max_length=TEXT_MAX)
    primary_metric: StrictStr = Field(default="", max_length=SHORT_MAX)
    partial: StrictBool = False
    extras: dict[str, Any] = Field(default_factory=dict)
    format_version: StrictInt = Field(default=0, ge=0)
    n_items: StrictInt | None = Field(default=None, ge=0)


def check_manifest(data: Any, where: str) -> None:
    """Raise :class:`BenchmarkError` naming every field of ``data`` whose type is wrong."""
    if not isinstance(data, dict):
        raise BenchmarkError(f"{where}: a manifest is a JSON object, got "
                             f"{type(data).__name__}")
    try:
        ManifestSchema.model_validate(data)
    except ValidationError as e:
        by_field: dict[str, list[str]] = {}
        got: dict[str, str] = {}
        for err in e.errors():  # a union (version: text or number) gives one error per type
            field = str(err["loc"][0]) if err["loc"] else "(manifest)"
            by_field.setdefault(field, []).append(err["msg"])
            if err["type"] != "missing" and field in data:
                got[field] = f" (got {data[field]!r:.60})"
        lines = [f"field {field!r}: {' or '.join(dict.fromkeys(msgs))}{got.get(field, '')}"
                 for field, msgs in by_field.items()]
        raise BenchmarkError(f"{where}: " + "; ".join(lines)
                             + " (fix manifest.json, or rewrite the benchmark with "
                               "`foilbench build`/`construct`)") from None
