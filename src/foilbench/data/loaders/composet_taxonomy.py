"""CompoSET's edit-type taxonomy: edit type -> category, from the release when it has one.

The release ships a taxonomy file (it names the count edit ``modify_cardinality``). Its exact
layout is not fixed here, so any file named ``taxonomy.*`` or ``edit_types.*`` in the release
folder is read in whichever of these shapes it has:

* JSON ``{"<category>": ["<edit type>", ...]}`` or ``{"<edit type>": "<category>"}``
* JSON list of records, or CSV / Parquet, with columns ``edit_type`` (or ``name``) and
  ``category``

Without a taxonomy file the category falls back to the edit type's target word
(:data:`CATEGORY_OF`), which is a foilbench convention, not CompoSET's table: the manifest
records which source was used (``extras["category_source"]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from foilbench.data.loaders.common import read_json, read_table
from foilbench.errors import BenchmarkError

EDIT_TYPE_ALIASES = {"modify_cardinality": "modify_count"}
CATEGORY_OF = {
    "color": "attribute", "colour": "attribute", "material": "attribute",
    "pattern": "attribute", "texture": "attribute", "size": "attribute",
    "shape": "attribute", "transparency": "attribute",
    "position": "spatial", "relation": "spatial", "spatial": "spatial", "orientation": "spatial",
    "count": "count", "number": "count",
    "state": "state", "object": "object", "category": "object",
}
PATTERNS = ("taxonomy.*", "edit_types.*")


def normalise_edit_type(edit_type: str) -> str:
    return EDIT_TYPE_ALIASES.get(edit_type, edit_type)


def category_by_word(edit_type: str) -> str | None:
    """``modify_color`` -> ``attribute`` (the last known word decides); None if none known."""
    for word in reversed(edit_type.split("_")):
        if word in CATEGORY_OF:
            return CATEGORY_OF[word]
    return None


def find_taxonomy(folder: Path) -> Path | None:
    for pattern in PATTERNS:
        hits = sorted(p for p in folder.glob(pattern)
                      if p.suffix in {".json", ".csv", ".tsv", ".parquet"})
        if hits:
            return hits[0]
    return None


def _from_records(records: list, file: Path) -> dict[str, str]:
    table = pd.DataFrame(records)
    return _from_table(table, file)


def _from_table(table: pd.DataFrame, file: Path) -> dict[str, str]:
    key = next((c for c in ("edit_type", "name", "edit") if c in table.columns), None)
    if key is None or "category" not in table.columns:
        raise BenchmarkError(f"{file}: expected columns edit_type (or name) and category "
                             f"(have: {', '.join(map(str, table.columns))})")
    return dict(zip(table[key].astype(str), table["category"].astype(str), strict=True))


def read_taxonomy(file: Path) -> dict[str, str]:
    """Edit type (normalised) -> category from one taxonomy file."""
    if file.suffix == ".json":
        data = read_json(file)
        if isinstance(data, Mapping) and all(isinstance(v, list) for v in data.values()):
            raw = {str(e): str(cat) for cat, edits in data.items() for e in edits}
        elif isinstance(data, Mapping) and all(isinstance(v, str) for v in data.values()):
            raw = {str(k): v for k, v in data.items()}
        elif isinstance(data, list):
            raw = _from_records(data, file)
        else:
            raise BenchmarkError(f"{file}: unrecognised taxonomy layout (expected "
                                 f"{{category: [edit types]}}, {{edit type: category}} or a "
                                 f"list of {{edit_type, category}})")
    else:
        raw = _from_table(read_table(file), file)
    return {normalise_edit_type(k): v for k, v in raw.items()}
