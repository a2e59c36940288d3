"""A benchmark folder whose strings are hostile (terminal escapes, bidi, NUL), and counts of
the bytes only such a benchmark could have put in a command's output (issue 42)."""

from __future__ import annotations

import json

import pandas as pd

from _core_helpers import colour_pair_folder

HOSTILE_NAME = "\x1b]0;PWNED\x07evil\x1b[2J\u202egnp.\x00x\r ok"
HOSTILE_EDIT = "\x1b[2J\x1b]0;T\x07ok\u202e\u2066\u200f\x00\x9b31m"
BIDI = ("\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
        "\u2069", "\u200e", "\u200f")


def hostile_folder(root, name=HOSTILE_NAME, edit=HOSTILE_EDIT):
    colour_pair_folder(root)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["name"] = name
    (root / "manifest.json").write_text(json.dumps(manifest))
    items = pd.read_parquet(root / "items.parquet")
    items["edit_type"] = edit
    items["tier"] = edit  # shown per tier by `run` on a tiered benchmark
    items.to_parquet(root / "items.parquet", index=False)
    return root


def hostile_bytes(text: str, *, tty: bool = False) -> dict[str, int]:
    """Counts of what only the benchmark could have put there. On a terminal rich writes its
    own colour codes (ESC [ ... m), so there the benchmark's sequences are counted instead."""
    data = text.encode("utf-8", "surrogateescape")
    counts = {"bidi": sum(data.count(c.encode()) for c in BIDI), "NUL": data.count(b"\0"),
              "C1 CSI": data.count("\x9b".encode()), "BEL": data.count(b"\x07"),
              "CR ok": data.count(b"\r ok")}  # the progress bar's own CRs are not counted
    if tty:
        counts |= {"OSC": data.count(b"\x1b]"), "clear": data.count(b"\x1b[2J")}
    else:
        counts["ESC"] = data.count(b"\x1b")
    return counts
