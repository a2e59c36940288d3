"""Helpers for loader tests: tiny PNGs and native-format files written into tmp dirs."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image


def png(path: Path, colour: tuple[int, int, int] = (200, 30, 30), size: int = 4) -> Path:
    """Write a tiny solid-colour PNG (parents created) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (size, size), colour).save(path)
    return path


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def png_bytes(colour: tuple[int, int, int] = (200, 30, 30), size: int = 4) -> bytes:
    """A tiny PNG's bytes, as Hugging Face Parquet embeds images."""
    import io

    buf = io.BytesIO()
    Image.new("RGB", (size, size), colour).save(buf, format="PNG")
    return buf.getvalue()


def hf_image(colour: tuple[int, int, int], name: str) -> dict:
    """An embedded image cell ``{"bytes", "path"}``."""
    return {"bytes": png_bytes(colour), "path": name}
