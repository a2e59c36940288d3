"""The code's shape: no import circles in src/ (imports inside functions count too)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules() -> dict[str, Path]:
    mods = {}
    for path in SRC.rglob("*.py"):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    return mods


def _imported(mods: dict[str, Path], current: str, node: ast.AST) -> set[str]:
    """Modules of src/ that ``node`` imports (a package's __init__ is not counted: importing a
    name from a package does not import its other modules)."""
    package = current if mods[current].name == "__init__.py" else current.rsplit(".", 1)[0]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(parts + ([node.module] if node.module else []))
        names = [f"{base}.{a.name}" for a in node.names] + [base]
    else:
        names = [a.name for a in node.names]
    out = set()
    for name in names:
        while name and name not in mods:
            name = name.rsplit(".", 1)[0] if "." in name else ""
        if name and name != current and mods[name].name != "__init__.py":
            out.add(name)
    return out


def import_circles() -> list[list[str]]:
    mods = _modules()
    graph = {m: set() for m in mods}
    for m, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[m] |= _imported(mods, m, node)
    # Tarjan's strongly connected components, iteratively
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_detector_finds_a_planted_circle(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg import b\n")
    (pkg / "b.py").write_text("from pkg.a import f\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    monkeypatch.setattr(__import__(__name__), "SRC", tmp_path)
    assert import_circles() == [["pkg.a", "pkg.b"]]


def test_no_import_circles_in_src():
    circles = import_circles()
    assert circles == [], "import circles: " + "; ".join(" <-> ".join(c) for c in circles)
