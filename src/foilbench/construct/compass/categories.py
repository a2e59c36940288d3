"""Same-category replacement candidates for COMPASS hard negatives.

COMPASS §3.2: "To generate replacements, we use GPT-4o mini with few-shot prompting to propose
candidate primitives of the same semantic category (e.g., replacing "sofa" with "chair"). We
randomly sample a replacement that does not already appear in the image's entire scene graph."

Two sources answer "which words are of the same category as this one":

* :class:`CategoryTable`, offline: the shipped table ``data/categories.json`` (our categories
  of common Visual Genome and world words; a word may sit in several), looked up by a Visual
  Genome synset's lemma first ("sofa.n.01" -> "sofa"), then by the word's lemma, then by its
  head noun ("coffee cup" -> "cup"); or any table of the same layout given by path;
* :class:`ProposedCategories`, the paper's step: candidates a text backend proposed for each
  primitive (``construct compass`` asks it; prompt ``compass.propose``).

A word neither source knows has no category. The rule then depends on ``policy``: "strict"
(the paper: no same-category candidate, so no negative for that primitive and its caption is
not built) or "any" (any absent word of the same kind, foilbench's pre-issue-25 behaviour,
kept available and counted).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from foilbench.construct.compass.spans import lemma
from foilbench.errors import FoilbenchError

KINDS = ("object", "attribute", "relation")
POLICIES = ("strict", "any")
TABLE_FILE = "categories.json"


class CategoryError(FoilbenchError, ValueError):
    """A category table is malformed; the message names the file and the field."""


def synset_lemma(synset: str) -> str:
    """"sofa.n.01" -> "sofa", "living_room.n.01" -> "living room"."""
    return synset.split(".")[0].replace("_", " ").lower()


class CategoryTable:
    """kind -> category -> words, read from JSON ``{"object": {cat: [words]}, ...}``."""

    name = "table"

    def __init__(self, data: dict, source: str = TABLE_FILE) -> None:
        self.source = source
        self.members: dict[str, dict[str, tuple[str, ...]]] = {}
        self.index: dict[str, dict[str, set[str]]] = {}
        for kind in KINDS:
            cats = data.get(kind, {})
            if not isinstance(cats, dict):
                raise CategoryError(f"{source}: '{kind}' must map category names to word lists")
            self.members[kind], self.index[kind] = {}, {}
            for cat, words in cats.items():
                if not isinstance(words, list) or not all(
                        isinstance(w, str) and w.strip() for w in words):
                    raise CategoryError(f"{source}: {kind} category {cat!r} must be a list of "
                                        "non-empty words")
                norm = tuple(dict.fromkeys(" ".join(w.lower().split()) for w in words))
                self.members[kind][cat] = norm
                for w in norm:
                    self.index[kind].setdefault(lemma(w), set()).add(cat)

    @classmethod
    def shipped(cls) -> CategoryTable:
        text = resources.files("foilbench.construct.compass").joinpath(
            "data", TABLE_FILE).read_text("utf-8")
        return cls(json.loads(text), f"foilbench/construct/compass/data/{TABLE_FILE}")

    @classmethod
    def from_path(cls, path: str | Path) -> CategoryTable:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise CategoryError(f"{path}: cannot read the category table ({e})") from None
        if not isinstance(data, dict):
            raise CategoryError(f"{path}: expected a JSON object with keys {', '.join(KINDS)}")
        return cls(data, str(path))

    def categories(self, kind: str, word: str, synset: str | None = None) -> set[str]:
        index = self.index[kind]
        for key in (synset_lemma(synset) if synset else None, lemma(word),
                    lemma(word.split()[-1]) if word.split() else None):
            if key and key in index:
                return set(index[key])
        return set()

    def candidates(self, kind: str, word: str, synset: str | None = None) -> list[str] | None:
        """Words sharing a category with ``word`` (itself out, table order), or None when the
        table does not know ``word``."""
        cats = self.categories(kind, word, synset)
        if not cats:
            return None
        own = lemma(word)
        out = [w for cat in sorted(cats) for w in self.members[kind][cat] if lemma(w) != own]
        return list(dict.fromkeys(out))


class ProposedCategories:
    """Candidates proposed per (kind, word) by a text backend; None for an unasked word.

    With a ``table``, each proposal is checked against the replaced word's category: a
    proposal the table puts in other categories only is refused (``open`` -> ``purple``: a
    state replaced by a colour; ``left of`` -> ``smaller than``: a spatial relation by a size
    one), counted in ``checks["rejected_category"]``. The paper asks the LLM for "candidate
    primitives of the same semantic category" (COMPASS §3.2) and does not say it checks the
    answer; we do where the table can tell. A proposal, or a replaced word, the table does not
    know passes unchecked (``checks["unchecked"]``)."""

    name = "proposed"

    def __init__(self, proposals: dict[tuple[str, str], list[str]],
                 table: CategoryTable | None = None) -> None:
        self.proposals = {(k, w.lower()): [" ".join(c.lower().split()) for c in cands]
                          for (k, w), cands in proposals.items()}
        self.table = table
        self.checks = {"rejected_category": 0, "unchecked": 0}
        self.rejected: list[tuple[str, str, str]] = []  # (kind, word, proposal), first 50

    def candidates(self, kind: str, word: str, synset: str | None = None) -> list[str] | None:
        got = self.proposals.get((kind, word.lower()))
        if got is None:
            return None
        own = lemma(word)
        out = [c for c in dict.fromkeys(got) if c and lemma(c) != own]
        return out if self.table is None else self._same_category(kind, word, synset, out)

    def _same_category(self, kind: str, word: str, synset: str | None,
                       proposals: list[str]) -> list[str]:
        assert self.table is not None
        cats = self.table.categories(kind, word, synset)
        kept = []
        for c in proposals:
            theirs = self.table.categories(kind, c)
            if not cats or not theirs:
                self.checks["unchecked"] += 1
                kept.append(c)
            elif theirs & cats:
                kept.append(c)
            else:
                self.checks["rejected_category"] += 1
                if len(self.rejected) < 50:
                    self.rejected.append((kind, word, c))
        return kept
