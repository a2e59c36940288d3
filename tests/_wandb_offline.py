"""Read the history rows back from a W&B offline run file (``run-*.wandb``).

The file is W&B's record log: a 7-byte header, then LevelDB-log-style chunks in 32 KiB
blocks (crc32 4 bytes, length 2, type 1: full=1, first=2, middle=3, last=4), each record a
``wandb_internal_pb2.Record``. wandb ships no public reader for it offline, so the tests read
it here (written from the format, not copied).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

HEADER, BLOCK, CHUNK_HEAD = 7, 32768, 7


def history_rows(path: Path) -> list[dict]:
    from wandb.proto import wandb_internal_pb2 as pb

    raw = Path(path).read_bytes()
    pos, parts, rows = HEADER, b"", []
    while pos + CHUNK_HEAD <= len(raw):
        left = BLOCK - pos % BLOCK
        if left < CHUNK_HEAD:  # a block's tail too short for a chunk header is padding
            pos += left
            continue
        _, size, kind = struct.unpack("<IHB", raw[pos:pos + CHUNK_HEAD])
        pos += CHUNK_HEAD
        data, pos = raw[pos:pos + size], pos + size
        if kind == 0:
            continue
        parts += data
        if kind in (1, 4):
            record = pb.Record()
            record.ParseFromString(parts)
            parts = b""
            if record.WhichOneof("record_type") == "history":
                rows.append({(i.key or "/".join(i.nested_key)): json.loads(i.value_json)
                             for i in record.history.item})
    return rows
