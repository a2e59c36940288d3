"""Reading language-model replies: JSON inside prose or code fences, checked field by field.

Prompts ask for JSON. Models wrap it in ```json fences or add a sentence before it, so the
first balanced JSON object or array in the reply is taken. A reply that holds none, or lacks a
required field, raises :class:`ReplyError`; the stage drops the candidate with that reason
(a reply is never guessed at).
"""

from __future__ import annotations

import json
from typing import Any

from foilbench.errors import FoilbenchError


class ReplyError(FoilbenchError, ValueError):
    """A reply could not be read as the prompt asked."""


def _balanced(text: str, start: int) -> str | None:
    opener = text[start]
    closer = "}" if opener == "{" else "]"
    depth, in_str, escape = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return None


def parse_json(text: str) -> Any:
    """The first JSON object or array in ``text`` (see the module docstring)."""
    for start, ch in enumerate(text):
        if ch in "{[":
            chunk = _balanced(text, start)
            if chunk is None:
                continue
            try:
                return json.loads(chunk)
            except json.JSONDecodeError:
                continue
    raise ReplyError(f"no JSON object or array in the reply: {text[:120]!r}")


def require(obj: Any, fields: dict[str, type | tuple[type, ...]], where: str) -> dict:
    """``obj`` as a dict holding each field with the given type(s)."""
    if not isinstance(obj, dict):
        raise ReplyError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    for name, kind in fields.items():
        if name not in obj:
            raise ReplyError(f"{where}: missing field {name!r}")
        if not isinstance(obj[name], kind):
            raise ReplyError(f"{where}: field {name!r} should be {kind}, got "
                             f"{type(obj[name]).__name__}")
    return obj


def clean_sentence(text: str) -> str:
    """One line of text: whitespace collapsed, surrounding quotes removed."""
    text = " ".join(str(text).split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


#: output tokens for what surrounds a JSON answer: its keys, quotes and braces, a code fence
JSON_FRAME_TOKENS = 32


def is_ascii(*texts: object) -> bool:
    """Whether every one of ``texts`` is plain ASCII (what :func:`json_reply_tokens` sizes
    at one token per two bytes).

    >>> is_ascii("a red mug", "left of"), is_ascii("a caf\u00e9")
    (True, False)
    """
    return all(str(t).isascii() for t in texts)


def content_tokens(content_bytes: int, ascii: bool = False) -> int:
    """Output tokens for ``content_bytes`` of an answer's values (:func:`json_reply_tokens`'
    rule, without the JSON frame): one per two bytes when ``ascii``, else one per byte.

    >>> content_tokens(65, ascii=True), content_tokens(65)
    (33, 65)
    """
    n = max(int(content_bytes), 0)
    return -(-n // 2) if ascii else n


def json_reply_tokens(content_bytes: int, ascii: bool = False) -> int:
    """The output budget of a JSON answer whose values hold at most ``content_bytes`` UTF-8
    bytes (issue 40: size each request's budget from what it asks for, not a flat 512).

    One token per two content bytes when the request's own known inputs (its caption,
    concept, words or facts: ``ascii``, :func:`is_ascii`) are all ASCII, else one token a
    byte; plus :data:`JSON_FRAME_TOKENS` for the JSON around it. Why: English text runs
    about 4 bytes a BPE token, so two bytes a token leaves a compliant English answer twice
    its room; text that is not ASCII can take a token a byte (byte-level BPE and byte
    fallback never make more), so it keeps a token a byte and fits in any language. The
    provider enforces the budget, so the dry run's output bound stays a bound whatever the
    rule. A reply past this budget is off task: it is dropped, not asked again (a model that
    thinks gets its thinking room on top, :mod:`foilbench.construct.backends.api_tokens`).

    >>> json_reply_tokens(64), json_reply_tokens(64, ascii=True)
    (96, 64)
    """
    return JSON_FRAME_TOKENS + content_tokens(content_bytes, ascii)
