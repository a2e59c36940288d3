"""Kind names are compared only in ``foilbench.kinds``: code elsewhere asks the kind object
(``bench.item_kind.is_edit_pair``, ``has_caption_candidates``), so a new kind that shares a
trait needs no edit outside its own module (issue 38)."""

from __future__ import annotations

import ast
from pathlib import Path

from foilbench.kinds import KINDS

SRC = Path(__file__).resolve().parents[1] / "src" / "foilbench"
OWNER = SRC / "kinds"  # where kinds are defined and looked up by name


def _strings(node: ast.AST) -> list[str]:
    """The string constants a comparison operand is, or holds (``in ("pair", ...)``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [s for elt in node.elts for s in _strings(elt)]
    return []


def kind_name_comparisons(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of each ``==``, ``!=``, ``in`` or ``not in`` against a kind name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        for operand in (node.left, *node.comparators):
            found += [(node.lineno, s) for s in _strings(operand) if s in names]
    return found


def test_the_check_sees_each_form_of_comparison():
    names = {"pair", "choice"}
    code = ('a = kind == "pair"\nb = "choice" != k\nc = k in ("x", "choice")\n'
            'd = k not in ["pair"]\ne = {"kind": "pair"}\nf = k == "pairs"\n')
    assert kind_name_comparisons(code, names) == [(1, "pair"), (2, "choice"), (3, "choice"),
                                                  (4, "pair")]


def test_no_kind_name_is_compared_outside_kinds():
    names = set(KINDS)
    assert {"pair", "choice", "image_choice"} <= names  # the built-ins were found
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if OWNER in path.parents:
            continue
        for line, name in kind_name_comparisons(path.read_text(encoding="utf-8"), names):
            offenders.append(f"{path.relative_to(SRC)}:{line} compares with {name!r}")
    assert not offenders, ("ask the kind object (foilbench.kinds.ItemKind attributes) "
                           "instead:\n" + "\n".join(offenders))
