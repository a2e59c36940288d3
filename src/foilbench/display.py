"""Strings from outside, made safe to print: the one place they pass on their way to a terminal.

A benchmark's manifest, its table, a model's or a provider's answer and a plugin's description
are data written by someone else. Printed raw, an ``ESC`` sequence in a benchmark's ``name``
sets the window title or clears the screen, a right-to-left override (U+202E) reverses what
follows it, and a carriage return rewrites the start of the line, so a downloaded benchmark can
hide a ``checksum_mismatch`` warning or print a fake "ok". A million-character name makes
rich's highlighter (quadratic in the length) print nothing for minutes.

:func:`safe_text` writes every control character (C0, DEL, C1) and every bidirectional
formatting character as a visible escape (``\\x1b``, ``\\u202e``) and caps the length with an
ellipsis; the full value stays in the JSON outputs. :func:`safe_markup` also escapes rich
markup, for strings placed inside a rich table or a markup message. Print either with
``highlight=False`` where rich would colour it.
"""

from __future__ import annotations

import re

NAME_LIMIT = 120  # a benchmark or model name, a table cell
MESSAGE_LIMIT = 4000  # an error or log message built around outside strings
ELLIPSIS = "…"

# C0 controls, DEL and C1 controls; the bidirectional embeddings, overrides and isolates
# (U+202A-202E, U+2066-2069), the directional marks (U+200E/F, U+061C). Tab and newline are
# escaped too unless the caller keeps line structure (``keep_newlines``).
_BIDI = "\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_UNSAFE_KEEP_LINES = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_BIDI}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(value: object, limit: int | None = NAME_LIMIT, *,
              keep_newlines: bool = False) -> str:
    """``value`` as text with no control or bidi character left and at most ``limit``
    characters (the last one an ellipsis when cut; ``None``: no cap). ``keep_newlines`` keeps
    line breaks (a multi-line message); a single field is one line. Linear in ``limit``, not in
    the length of ``value``: only what can be shown is looked at."""
    text = value if isinstance(value, str) else str(value)
    cut = limit is not None and len(text) > limit
    if limit is not None:
        text = text[:limit]
    pattern = _UNSAFE_KEEP_LINES if keep_newlines else _UNSAFE
    text = pattern.sub(_escape, text)
    if limit is not None and (cut or len(text) > limit):
        text = text[:max(limit - 1, 0)] + ELLIPSIS
    return text


def safe_markup(value: object, limit: int | None = NAME_LIMIT, *,
                keep_newlines: bool = False) -> str:
    """:func:`safe_text`, with rich markup escaped: for a string shown in a rich table, a
    title or a message printed with markup on (``[bold]`` in a name stays literal)."""
    from rich.markup import escape

    return escape(safe_text(value, limit, keep_newlines=keep_newlines))


def safe_message(value: object, limit: int | None = MESSAGE_LIMIT) -> str:
    """A message (an error, a log line) that may quote outside strings: controls escaped,
    line breaks kept, length capped."""
    return safe_text(value, limit, keep_newlines=True)
