"""The shape of the code (issue 7's "done when"): no import cycles, no module over 600 lines, and
only the API wires the runner — observers and every other module never import it."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "orchestrator"


def _module(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, *, top_level_only: bool) -> set[str]:
    """Modules of the package this file imports (at load time only, when `top_level_only`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes: list[ast.AST] = list(tree.body) if top_level_only else list(ast.walk(tree))
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("orchestrator"):
                out.add(node.module)
                out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("orchestrator"))
    return out


def _graph(top_level_only: bool) -> dict[str, set[str]]:
    files = {_module(p): p for p in SRC.rglob("*.py")}
    return {
        name: {m for m in _imports(path, top_level_only=top_level_only) if m in files and m != name}
        for name, path in files.items()
    }


def test_no_import_cycles_at_load_time() -> None:
    graph = _graph(top_level_only=True)
    for pkg in [m for m in graph if (SRC.parent / m.replace(".", "/") / "__init__.py").is_file()]:
        graph[pkg] = set()  # a package importing its own submodules is not a cycle
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        seen[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if seen.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                raise AssertionError("import cycle: " + " → ".join(cycle))
            if nxt not in seen:
                visit(nxt)
        stack.pop()
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node)


def test_only_the_api_imports_the_runner() -> None:
    importers = {
        name for name, deps in _graph(top_level_only=False).items() if "orchestrator.runner" in deps
    }
    assert importers <= {"orchestrator.api"}, importers


def test_no_module_over_600_lines() -> None:
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert not long, long
