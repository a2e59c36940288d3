"""The prompts API models answer, and how an answer is read.

Caption choice (one image, two captions):
    [image]
    Which caption describes this image correctly?
    A: <caption A>
    B: <caption B>
    Answer with a single letter: A or B.

Image choice (two images, one caption):
    Image A: [image]  Image B: [image]
    Which image matches the caption "<caption>"?
    Answer with a single letter: A or B.

Reading: the answer is A or B when the reply, stripped of punctuation and a leading
"Answer:", is that letter; otherwise when exactly one of the standalone capital letters A
and B occurs in it (e.g. "The answer is B."). Anything else is unparseable (None), which
the protocol scores as wrong and counts.
"""

from __future__ import annotations

import re

CAPTION_CHOICE = ("Which caption describes this image correctly?\nA: {a}\nB: {b}\n"
                  "Answer with a single letter: A or B.")
IMAGE_CHOICE = 'Which image matches the caption "{caption}"?\nAnswer with a single letter: A or B.'

_BARE = re.compile(r"^\W*(?:answer\s*(?:is)?\s*:?\s*)?\(?\s*([AB])\s*\)?\W*$", re.IGNORECASE)
_LETTER = re.compile(r"\b([AB])\b")


def parse_choice(reply: str) -> int | None:
    """0 for A, 1 for B, None when the reply does not name exactly one of them.

    >>> [parse_choice(s) for s in ["A", " b. ", "Answer: B", "(A)", "The answer is B.",
    ...                            "A or B", "neither", ""]]
    [0, 1, 1, 0, 1, None, None, None]
    """
    m = _BARE.match(reply.strip())
    if m:
        return "AB".index(m.group(1).upper())
    letters = set(_LETTER.findall(reply))
    if len(letters) == 1:
        return "AB".index(letters.pop())
    return None
