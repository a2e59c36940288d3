"""Caption helpers for the reviewer: word-level differences and the edit-phrase check.

Both are hints that speed a human decision, never decisions themselves:

- :func:`word_diff` marks the words of one caption that differ from the other, so the edited
  phrase stands out in the instance view (a reviewer checks criterion (iii), "the visual edit
  matches the textual edit", against exactly these words).
- :func:`phrase_kept` says whether the short caption occurs verbatim (case and spacing aside)
  inside a longer tier: CompoSET App. B.4, "The edit phrase must appear unchanged across the
  three tiers; surrounding context grows around it without rewording." A leading article may
  differ ("a red cube" inside "... and the red cube"), since an anchor clause can change it.
"""

from __future__ import annotations

import difflib
import re

_ARTICLES = ("a ", "an ", "the ")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower()).rstrip(".")


def word_diff(text: str, other: str) -> list[dict]:
    """Segments of ``text``: ``{"text": ..., "changed": bool}`` relative to ``other``.

    >>> [s["text"] for s in word_diff("a red cube", "a blue cube") if s["changed"]]
    ['red']
    """
    words, others = text.split(), other.split()
    matcher = difflib.SequenceMatcher(a=[w.lower() for w in words],
                                      b=[w.lower() for w in others], autojunk=False)
    segments = []
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if i1 == i2:
            continue
        segments.append({"text": " ".join(words[i1:i2]), "changed": tag != "equal"})
    return segments


def _core(phrase: str) -> str:
    p = _norm(phrase)
    for art in _ARTICLES:
        if p.startswith(art):
            return p[len(art):]
    return p


def phrase_span(phrase: str, text: str) -> tuple[int, int] | None:
    """Character span of ``phrase`` (article aside) inside ``text``, case-insensitively."""
    core = _core(phrase)
    if not core:
        return None
    pattern = r"\s+".join(re.escape(w) for w in core.split())
    m = re.search(rf"(?<![\w-]){pattern}(?![\w-])", text, flags=re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def phrase_kept(short: str, longer: str) -> bool:
    """True when the short caption occurs unchanged inside ``longer`` (see module doc).

    >>> phrase_kept("a red cube", "A red cube next to a green cone.")
    True
    >>> phrase_kept("a red cube", "a crimson cube next to a green cone")
    False
    """
    return phrase_span(short, longer) is not None


def highlight(short: str, longer: str) -> list[dict]:
    """Segments of ``longer`` with the short phrase marked (``"phrase": True``) when found."""
    span = phrase_span(short, longer)
    if span is None:
        return [{"text": longer, "phrase": False}]
    a, b = span
    parts = [(longer[:a], False), (longer[a:b], True), (longer[b:], False)]
    return [{"text": t, "phrase": p} for t, p in parts if t]
