"""What the strict provider fake's parts share (see tests/_strict_providers.py)."""

from __future__ import annotations

import base64
import io
import json
import math

from PIL import Image

KEY = "sk-STRICT-0123456789abcdefghijkl"


class Rejected(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def tokens(text: str) -> int:
    """The fake's tokenizer: 4 bytes a token (never more than the one-per-byte bound)."""
    return max(1, math.ceil(len(text.encode("utf-8")) / 4))


def png_b64(image: Image.Image) -> str:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def openai_reasoning(model: str) -> bool:
    return model.startswith(("o1", "o3", "o4", "gpt-5")) and not model.startswith("gpt-5-chat")


def _only(where: str, got: dict, allowed: set[str]) -> None:
    unknown = sorted(set(got) - allowed)
    if unknown:
        raise Rejected(400, f"{where}: unknown field(s) {unknown}")


def _image_of(b64: str) -> Image.Image:
    with Image.open(io.BytesIO(base64.b64decode(b64, validate=True))) as im:
        return im.convert("RGB")


def _json(headers, raw: bytes, where: str) -> dict:
    ctype = headers.get("Content-Type", "")
    if ctype.split(";")[0].strip() != "application/json":
        raise Rejected(400, f"{where}: content type must be application/json, got {ctype!r}")
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as e:
        raise Rejected(400, f"{where}: body is not JSON ({e})") from None
    if not isinstance(body, dict):
        raise Rejected(400, f"{where}: body must be an object")
    return body


def bearer(headers, where: str) -> None:
    if headers.get("Authorization") != f"Bearer {KEY}":
        raise Rejected(401, f"{where}: missing or wrong Authorization: Bearer key")
