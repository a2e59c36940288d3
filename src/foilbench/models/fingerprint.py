"""Model fingerprints: a string that changes whenever an adapter's scores could change.

A fingerprint is ``"<scheme>-sha256:<hex>"`` over the canonical JSON of its parts (weights
hash or hub id + revision, preprocessing, dtype, score kind...). Weight files are hashed by
streaming; hashes are remembered in a small JSON file in the cache folder, keyed by
(absolute path, size, mtime), so a multi-GB checkpoint is hashed once, not every run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from foilbench.errors import ModelError
from foilbench.hashing import sha256_file, sha256_text
from foilbench.jsonio import write_json
from foilbench.paths import model_state_dir

HASH_CACHE_FILE = "weights_hashes.json"


def cache_root() -> Path:
    """Where weight hashes and API answers are kept (:func:`foilbench.paths.model_state_dir`)."""
    return model_state_dir()


def require_file(path: str | Path, what: str = "weights file") -> Path:
    """The path as a ``Path``; a missing file raises an error that names it."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ModelError(f"{what} not found: {p}")
    return p


def require_weights(path: str | Path, what: str = "weights file") -> Path:
    """:func:`require_file`, and its first bytes those of a weights file: a PyTorch checkpoint
    (a zip archive, or a pickle from before torch 1.6) or safetensors (an 8-byte header length,
    then JSON). Anything else (``/etc/passwd``, a text file, a FIFO) is refused in one
    sentence naming the file, before torch's unpickler fails on it with an IndexError."""
    from foilbench.regular_files import open_regular

    p = require_file(path, what)
    try:
        with open_regular(p) as f:
            head = f.read(9)
    except OSError as e:
        raise ModelError(f"{what} {p} cannot be read: {e.strerror or e}") from None
    zipped = head.startswith(b"PK\x03\x04")
    pickled = head[:1] == b"\x80"
    safetensors = len(head) == 9 and head[8:9] == b"{"
    if not (zipped or pickled or safetensors):
        raise ModelError(f"{what} {p} is not a PyTorch checkpoint or a safetensors file "
                         f"(it starts with {head[:8]!r})")
    return p


def file_sha256(path: str | Path, cache_dir: Path | None = None) -> str:
    """sha256 of a file, reusing a cached value while (path, size, mtime) are unchanged."""
    p = require_file(path).resolve()
    st = p.stat()
    key = str(p)
    cache_file = (cache_dir or cache_root()) / HASH_CACHE_FILE
    table: dict[str, Any] = {}
    if cache_file.is_file():
        try:
            table = json.loads(cache_file.read_text())
        except (json.JSONDecodeError, OSError):
            table = {}  # a corrupt cache is rebuilt, never trusted
    hit = table.get(key)
    if hit and hit.get("size") == st.st_size and hit.get("mtime_ns") == st.st_mtime_ns:
        return hit["sha256"]
    digest = sha256_file(p)
    table[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
    try:
        write_json(cache_file, table, indent=1)
    except OSError:
        pass  # a read-only cache only costs a re-hash next time
    return digest


def make_fingerprint(scheme: str, parts: dict[str, Any]) -> str:
    """``scheme-sha256:...`` over the canonical JSON of ``parts``."""
    blob = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return f"{scheme}-sha256:{sha256_text(blob)}"


VERSIONS_SEEN_FILE = "library_versions_seen.json"


def version_change(scheme: str, parts: dict[str, Any], library: str,
                   cache_dir: Path | None = None) -> tuple[str, str] | None:
    """``(old, new)`` when the model ``parts`` name was last fingerprinted with another
    version of ``library`` (``parts[library]`` holds the new one), else None; remembers the
    new one.

    A library version is part of the fingerprint, so an upgrade keys the embedding cache
    anew and the embeddings are computed once more; this says so, naming both versions. The
    record (``library_versions_seen.json`` in the cache folder) is keyed by the fingerprint
    of the other parts; a corrupt or read-only record only loses the message.
    """
    new = parts.get(library)
    key = make_fingerprint(scheme, {k: v for k, v in parts.items() if k != library})
    record = (cache_dir or cache_root()) / VERSIONS_SEEN_FILE
    table: dict[str, Any] = {}
    if record.is_file():
        try:
            loaded = json.loads(record.read_text())
            table = loaded if isinstance(loaded, dict) else {}
        except (json.JSONDecodeError, OSError):
            table = {}
    found = table.get(key)
    entry: dict[str, Any] = found if isinstance(found, dict) else {}
    seen = entry.get(library)
    if seen != new:
        table[key] = {**entry, library: new}
        try:
            write_json(record, table, indent=1)
        except OSError:
            pass
    if seen is not None and seen != new:
        return str(seen), str(new)
    return None
