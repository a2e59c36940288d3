"""On-disk response cache for API models: one JSON line per answered request.

Key: sha256 of the canonical JSON of (provider, model, prompt text parts, sha256 of each
image's PNG bytes, max_tokens). A line holds the key, the answer text and the token counts,
nothing else: no key, no headers, no image bytes. A repeated request is answered from the
file with zero HTTP requests and zero spend.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from foilbench.models.api.wire import Reply


def request_key(provider: str, model: str, parts: list[tuple[str, Any]], max_tokens: int) -> str:
    shown = [[k, v if k == "text" else hashlib.sha256(v).hexdigest()] for k, v in parts]
    blob = json.dumps([provider, model, shown, max_tokens], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._table: dict[str, Reply] = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                    self._table[row["key"]] = Reply(row["text"], row["input_tokens"],
                                                    row["output_tokens"])
                except (json.JSONDecodeError, KeyError):
                    continue  # a torn last line from an interrupted run is skipped

    def __len__(self) -> int:
        return len(self._table)

    def get(self, key: str) -> Reply | None:
        return self._table.get(key)

    def put(self, key: str, reply: Reply) -> None:
        self._table[key] = reply
        self.path.parent.mkdir(parents=True, exist_ok=True)
        row = {"key": key, "text": reply.text, "input_tokens": reply.input_tokens,
               "output_tokens": reply.output_tokens}
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
