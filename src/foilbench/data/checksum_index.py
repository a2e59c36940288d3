"""Is a benchmark's manifest checksum still true of its files?

The checksum in the manifest keys every stored run (a sweep reuses a run with the same
model, checksum and settings), so a benchmark edited after its manifest was written (captions
swapped, an image replaced) must not keep it: its runs would be mixed with the old contents'.
Hashing every image on every load is slow for a large benchmark, so a verified checksum is
remembered under ``$FOILBENCH_HOME/checksums/`` with the size and mtime of ``items.parquet``
and of each image file; while those are unchanged (and the manifest claims the same
checksum) the remembered verdict stands, and any change triggers the full hash. A home that
cannot be written only costs the full hash next time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from foilbench.data.benchmark import Benchmark
from foilbench.hashing import sha256_text
from foilbench.paths import checksum_index_dir

ITEMS_FILE = "items.parquet"


def signature(bench: Benchmark) -> list[list]:
    """``[name, size, mtime_ns]`` of the table and every image file (missing: -1, -1)."""
    out = []
    for rel in [ITEMS_FILE, *sorted(set(bench.image_refs()))]:
        try:
            st = os.stat(bench.root / rel)
            out.append([rel, st.st_size, st.st_mtime_ns])
        except OSError:
            out.append([rel, -1, -1])
    return out


def _index_path(root: Path) -> Path:
    return checksum_index_dir() / f"{sha256_text(str(root.resolve()))[:32]}.json"


def content_checksum(bench: Benchmark) -> str:
    """The checksum of the files as they are now (remembered while size+mtime hold)."""
    sig, claimed = signature(bench), bench.manifest.checksum
    path = _index_path(bench.root)
    try:
        index = json.loads(path.read_text())
    except (OSError, ValueError):
        index = None
    if isinstance(index, dict) and index.get("files") == sig and index.get("claimed") == claimed:
        return str(index["actual"])
    actual = bench.compute_checksum(include_images=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"root": str(bench.root.resolve()), "claimed": claimed,
                                   "actual": actual, "files": sig}))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home: the full hash again next time
    return actual


def verify_checksum(bench: Benchmark) -> str | None:
    """None when the manifest's checksum matches the files; else one sentence saying so.

    On a mismatch the benchmark takes the checksum of its contents (so no run stored for the
    old contents is reused) and keeps the manifest's in ``extras["manifest_checksum"]``.
    """
    claimed = bench.manifest.checksum
    if not claimed:
        return None
    actual = content_checksum(bench)
    if actual == claimed:
        return None
    bench.manifest.extras["manifest_checksum"] = claimed
    bench.manifest.checksum = actual
    return (f"{bench.root}: the benchmark's files changed after its manifest was written "
            f"(manifest checksum {claimed[:19]}..., contents {actual[:19]}...); results are "
            f"keyed by the contents, and no run of the old contents is reused. Rewrite the "
            f"manifest (foilbench build/construct, or data.write_benchmark) if the edit was "
            f"intended")
