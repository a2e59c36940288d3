"""A small reader of the WordNet 3.0 database files, for deriving the COMPASS lexical
exclusions (:mod:`foilbench.construct.compass.lexicon`) offline.

Only what the exclusions need: which synsets a lemma has (``index.noun`` / ``index.adj``),
each synset's words, its hypernyms (``@``, ``@i``) and, for adjectives, its "similar to"
links (``&``: a satellite such as "tiny" and its head "small"). The layout is WordNet's
``wndb(5)``: a data line is ``offset lex_filenum ss_type w_cnt word lex_id ... p_cnt
[pointer_symbol offset pos source/target] ... | gloss`` with ``w_cnt`` in hexadecimal.

Debian ships the files in the ``wordnet-base`` package (``apt-get install -y wordnet-base``:
``/usr/share/wordnet``). Nothing at run time needs them: the derived table is shipped, and
this reader runs only when it is regenerated (``python -m
foilbench.construct.compass.lexicon_build``).

WordNet 3.0 is Copyright 2006 by Princeton University, under a licence that allows use and
redistribution with its notice; the derived table names its source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from foilbench.errors import FoilbenchError

DEFAULT_DIR = Path("/usr/share/wordnet")
POS_FILES = {"noun": ("index.noun", "data.noun"), "adj": ("index.adj", "data.adj")}
HYPERNYM = ("@", "@i")
SIMILAR = "&"


class WordNetMissing(FoilbenchError):
    """The WordNet database files are not where they were looked for."""


@dataclass
class Synset:
    words: tuple[str, ...]
    hypernyms: tuple[str, ...] = ()
    similar: tuple[str, ...] = ()


@dataclass
class WordNet:
    """One part of speech: lemma -> synset offsets, offset -> :class:`Synset`."""

    index: dict[str, tuple[str, ...]] = field(default_factory=dict)
    synsets: dict[str, Synset] = field(default_factory=dict)

    def senses(self, word: str) -> tuple[str, ...]:
        return self.index.get(key(word), ())

    def hypernym_closure(self, offset: str) -> set[str]:
        """Every synset above ``offset`` (transitively), itself excluded."""
        seen: set[str] = set()
        todo = list(self.synsets[offset].hypernyms) if offset in self.synsets else []
        while todo:
            o = todo.pop()
            if o in seen or o not in self.synsets:
                continue
            seen.add(o)
            todo.extend(self.synsets[o].hypernyms)
        return seen


def key(word: str) -> str:
    """WordNet's spelling of a lemma: lower case, spaces as underscores."""
    return "_".join(word.lower().split())


def parse_data_line(line: str) -> tuple[str, Synset] | None:
    """``(offset, Synset)`` of one data line; None for the licence header lines."""
    if not line or line.startswith(" "):
        return None
    head = line.split(" | ", 1)[0].split()
    offset, n_words = head[0], int(head[3], 16)
    words = tuple(head[4 + 2 * i].lower().split("(")[0] for i in range(n_words))
    pos = 4 + 2 * n_words
    n_ptr = int(head[pos])
    hyper, similar = [], []
    for i in range(n_ptr):
        symbol, target = head[pos + 1 + 4 * i], head[pos + 2 + 4 * i]
        if symbol in HYPERNYM:
            hyper.append(target)
        elif symbol == SIMILAR:
            similar.append(target)
    return offset, Synset(words, tuple(hyper), tuple(similar))


def parse_index_line(line: str) -> tuple[str, tuple[str, ...]] | None:
    """``(lemma, synset offsets)`` of one index line; None for header lines."""
    if not line or line.startswith(" "):
        return None
    parts = line.split()
    n_synsets, n_ptr = int(parts[2]), int(parts[3])
    offsets = parts[4 + n_ptr + 2:]
    return parts[0], tuple(offsets[:n_synsets])


def load(pos: str, directory: str | Path = DEFAULT_DIR) -> WordNet:
    """The index and data of ``pos`` ("noun" or "adj") from ``directory``."""
    folder = Path(directory)
    index_name, data_name = POS_FILES[pos]
    paths = [folder / index_name, folder / data_name]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise WordNetMissing(f"WordNet files not found: {', '.join(missing)} (Debian: "
                             "apt-get install -y wordnet-base; or give the folder that "
                             "holds index.noun, data.noun, index.adj and data.adj)")
    wn = WordNet()
    with open(paths[0], encoding="utf-8") as f:
        for line in f:
            got = parse_index_line(line.rstrip("\n"))
            if got:
                wn.index[got[0]] = got[1]
    with open(paths[1], encoding="utf-8") as f:
        for line in f:
            got = parse_data_line(line.rstrip("\n"))
            if got:
                wn.synsets[got[0]] = got[1]
    return wn


def relation(wn: WordNet, old: str, new: str) -> str | None:
    """How ``new`` relates to ``old`` in any of their senses, or None: ``synonym`` (a shared
    synset), ``similar`` (adjectives: one's synset is "similar to" the other's),
    ``hypernym`` (``new`` is above ``old``: man -> person) or ``hyponym`` (below: person ->
    man). Checked in this order; any sense counts, since a caption does not say which."""
    a, b = set(wn.senses(old)), set(wn.senses(new))
    if not a or not b:
        return None
    if a & b:
        return "synonym"
    if any(set(wn.synsets[o].similar) & b for o in a if o in wn.synsets) or any(
            set(wn.synsets[o].similar) & a for o in b if o in wn.synsets):
        return "similar"
    if any(wn.hypernym_closure(o) & b for o in a):
        return "hypernym"
    if any(wn.hypernym_closure(o) & a for o in b):
        return "hyponym"
    return None
