"""statinterp's modules import one another without cycles.

The graph is built from the source (``ast``), with every import: at module level, inside
functions (lazy imports) and under ``TYPE_CHECKING``. An edge A -> B means module A imports
module B (or a name from it). A cycle is reported by its modules, in order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "statinterp"


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the statinterp modules it imports (submodules named in ``from X import sub``
    count as imports of ``X.sub``; ``import a.b.c`` imports ``a.b.c``)."""
    modules = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}

    def target(name: str) -> str | None:
        while name and name not in modules:  # a name inside a module -> the module
            name = name.rpartition(".")[0]
        return name or None

    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            found: list[str] = []
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                found = [f"{base}.{alias.name}" for alias in node.names]
            for imported in found:
                if imported.split(".")[0] != "statinterp":
                    continue
                module = target(imported)
                if module is not None and module != name:
                    graph[name].add(module)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or ``None``."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


# Packages only re-export; importing ``statinterp`` (lazy names) is no edge to its submodules'
# users, so the package roots are left out of the check where they merely re-export.
def _without_package_roots(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    roots = {"statinterp"}
    return {m: {t for t in targets if t not in roots} for m, targets in graph.items() if m not in roots}


def test_the_graph_sees_lazy_and_relative_imports(tmp_path):
    pkg = tmp_path / "statinterp"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "one.py").write_text("def f():\n    from statinterp.a import two\n")
    (pkg / "a" / "two.py").write_text("from .three import x\n")
    (pkg / "a" / "three.py").write_text("import statinterp.a.one\nx = 1\n")
    graph = import_graph(pkg)
    assert graph["statinterp.a.one"] == {"statinterp.a.two"}
    assert graph["statinterp.a.two"] == {"statinterp.a.three"}
    assert find_cycle(graph) == ["statinterp.a.one", "statinterp.a.two", "statinterp.a.three", "statinterp.a.one"]


def test_statinterp_has_no_import_cycle():
    graph = _without_package_roots(import_graph())
    assert len(graph) > 30  # the whole package was read
    cycle = find_cycle(graph)
    if cycle:
        pytest.fail("import cycle: " + " -> ".join(cycle))


def test_the_cache_package_imports_no_domain_module():
    """cache/ keeps files; it never imports the modules whose values it stores."""
    graph = import_graph()
    for module, targets in graph.items():
        if module.startswith("statinterp.cache"):
            outside = {t for t in targets if not t.startswith("statinterp.cache") and t != "statinterp.errors"}
            assert not outside, f"{module} imports {sorted(outside)}"


def test_scorers_never_touch_cache_files():
    graph = import_graph()
    for module, targets in graph.items():
        if module.startswith("statinterp.rankers"):
            caches = {t for t in targets if t.startswith("statinterp.cache")}
            assert not caches, f"{module} imports {sorted(caches)}"


def test_the_library_never_imports_the_app_layer():
    """Data flows one way: the CLI, reports and the review app (statinterp.app) call the library;
    no library module (and no top-level module but the package root's lazy names) imports them."""
    graph = import_graph()
    for module, targets in graph.items():
        if module == "statinterp" or module.startswith("statinterp.app"):
            continue
        app = {t for t in targets if t.startswith("statinterp.app")}
        assert not app, f"{module} imports {sorted(app)}"


def test_no_module_imports_another_modules_private_names():
    """What one module takes from another is public: ``from statinterp.X import _name`` is a name
    that should be made public or moved home (``__future__`` and dunder names aside)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("statinterp"):
                found += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.module}.{a.name}"
                          for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, "private names imported across modules:\n" + "\n".join(found)
