"""Whose output folder is this? ``construct --out`` writes only into a folder it made for the
same build.

Resuming is rerunning the same command into the same folder (the call cache answers every
finished call), so a folder is tied to one build: the pipeline, its options and the backends'
fingerprints, stored in ``OUT/.construct/run.json`` when the run starts. A later run into a
non-empty folder goes on only when that record matches; otherwise it is refused with what
differs, and how to resume or where to write instead. Without that check a second build with
other options (or another pipeline, or into a folder of the user's own files) would mix its
items, images and construction log with the first one's, or overwrite them.

The spend options (``--max-spend``, ``--retries``, concurrency) are not part of the identity:
raising the cap and rerunning is how a stopped run is resumed. A folder made by an older
foilbench (a ``.construct/`` call cache but no record) is adopted when its provenance names
the same pipeline.

The folder's spend ledger (``.construct/spend.jsonl`` and its lock, :mod:`.ledger`) is
foilbench's own too: a folder that holds nothing else is taken as made by foilbench (its
committed spend still counts against the cap), but a ledger alone is no call cache, so a
ledger next to files of the user's own does not make their folder foilbench's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from foilbench.construct.engine.cache import CACHE_DIR
from foilbench.construct.engine.ledger import LEDGER, TORN
from foilbench.construct.engine.ledger_lock import HOLDER, LOCK
from foilbench.errors import FoilbenchError

RUN_FILE = "run.json"


class OutFolderError(FoilbenchError):
    """``--out`` holds something other than this build."""


def build_identity(pipeline: str, options: dict[str, Any], backends: dict[str, Any]) -> dict:
    """What ties a folder to one build, as plain JSON values."""
    ident = {"pipeline": pipeline, "options": options,
             "backends": {role: b.fingerprint for role, b in sorted(backends.items())}}
    return json.loads(json.dumps(ident, sort_keys=True, default=str))


def _differences(stored: dict, ident: dict) -> list[str]:
    out = []
    if stored.get("pipeline") != ident["pipeline"]:
        return [f"pipeline {stored.get('pipeline')!r} there, {ident['pipeline']!r} now"]
    for part in ("options", "backends"):
        old, new = stored.get(part) or {}, ident[part]
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                out.append(f"{key} {old.get(key, '(unset)')!r} there, "
                           f"{new.get(key, '(unset)')!r} now")
    return out


def _cache_parts(out: Path) -> set[str]:
    """Names in ``out/.construct`` other than the spend ledger's files."""
    cache = out / CACHE_DIR
    return {p.name for p in cache.iterdir()} - {LEDGER, LOCK, HOLDER, TORN} if cache.is_dir() else set()


def _only_ledger(out: Path) -> bool:
    """``out`` holds nothing but a spend ledger that foilbench wrote."""
    return [p.name for p in out.iterdir()] == [CACHE_DIR] and not _cache_parts(out)


def check_out(out: str | Path, ident: dict, *, claim: bool) -> None:
    """Refuse ``out`` unless it is empty, absent, or made for ``ident``; with ``claim`` write
    the record (creating the folder)."""
    out = Path(out)
    record = out / CACHE_DIR / RUN_FILE
    if out.exists() and not out.is_dir():
        raise OutFolderError(f"--out {out} is a file; give a folder")
    if record.is_file():
        try:
            stored = json.loads(record.read_text(encoding="utf-8"))
            if not isinstance(stored, dict):
                raise ValueError("not a JSON object")
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise OutFolderError(f"{record} is damaged ({e}); it records which build the "
                                 "folder holds: write to a new --out, or restore the file"
                                 ) from None
        diff = _differences(stored, ident)
        if diff:
            raise OutFolderError(
                f"--out {out} holds a {stored.get('pipeline')} build with other options ("
                + "; ".join(diff[:6]) + "). To resume it, rerun with its options (see "
                f"{record}); to build this, give a new or empty --out")
        return
    if out.is_dir() and any(out.iterdir()) and not _only_ledger(out):
        prov_file = out / "construction.json"
        legacy = bool(_cache_parts(out))  # a call cache, not only a ledger
        if legacy and prov_file.is_file():
            try:
                legacy = json.loads(prov_file.read_text()).get("pipeline") == ident["pipeline"]
            except (OSError, UnicodeDecodeError, ValueError, AttributeError):
                legacy = False
        if not legacy:
            raise OutFolderError(
                f"--out {out} is not empty and was not made by `foilbench construct "
                f"{ident['pipeline']}`: give a new or empty folder (construct writes its "
                "benchmark, images and log there)")
    if claim:
        from foilbench.jsonio import write_json

        record.parent.mkdir(parents=True, exist_ok=True)
        write_json(record, ident)
