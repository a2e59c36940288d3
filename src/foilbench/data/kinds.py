"""The metadata columns every item may carry, and the item kinds (re-exported).

The kinds themselves (columns, layout, outcomes, ...) live in :mod:`foilbench.kinds`, one
module per kind; ``KINDS`` and ``KindSpec`` stay importable from here for older imports.
"""

from __future__ import annotations

from foilbench.kinds import KINDS, ItemKind

KindSpec = ItemKind  # the old name of a kind's description

__all__ = ["KINDS", "METADATA_COLUMNS", "KindSpec"]

# Metadata columns used for breakdowns. All optional; any other column is kept as a free extra.
METADATA_COLUMNS: tuple[str, ...] = (
    "scene_id",
    "edit_type",
    "category",
    "operation",
    "tier",
    "n_objects",
    "condition",
    "level",
    "n_o",
    "n_a",
    "n_r",
    "split",
)
