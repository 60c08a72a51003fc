"""statinterp's modules import one another without cycles, and its packages in layers.

The graph is built from the source (``ast``), with every import: at module level, inside
functions (lazy imports) and under ``TYPE_CHECKING`` (a type from another package is a
dependency on it all the same). An edge A -> B means module A imports module B (or a name from
it); ``from statinterp import NAME`` of one of the package root's lazy public names counts as an
import of the module the name lives in (the root's ``_EXPORTS``), so no module reaches a higher
layer through the root. A cycle is reported by its modules, in order.

The layers themselves are import-linter's contract in pyproject.toml (``lint-imports``, run by
CI); this file checks what that contract cannot see: cycles between modules, private names taken
across modules, and lazy public names taken through the package root.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
PACKAGE = ROOT / "statinterp"


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


def _lazy_exports(package: Path) -> dict[str, str]:
    """The package root's lazy public names -> the module each lives in (its ``_EXPORTS`` dict of
    relative module names), or nothing if the root has none."""
    root = package / "__init__.py"
    if not root.is_file():
        return {}
    for node in ast.walk(ast.parse(root.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets):
            exports = ast.literal_eval(node.value)
            return {name: package.name + module for name, module in exports.items()}
    return {}


@functools.cache  # the source is read once per session, whichever test asks first
def import_statements(package: Path = PACKAGE) -> tuple[tuple[Path, tuple[ast.Import | ast.ImportFrom, ...]], ...]:
    """Every ``.py`` file of ``package`` (in path order) with every import statement in it, wherever it stands."""
    out = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        out.append((path, tuple(n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom))))
    return tuple(out)


@dataclass(frozen=True)
class Import:
    """``module`` (file ``path``) imports ``target``, a statinterp module, at line ``line``."""

    module: str
    path: Path
    line: int
    target: str


@functools.cache
def statinterp_imports(package: Path = PACKAGE) -> tuple[Import, ...]:
    """Every import of one statinterp module by another (submodules named in ``from X import sub``
    count as imports of ``X.sub``; ``import a.b.c`` imports ``a.b.c``; a name imported from the
    package root is an import of the module the root takes it from)."""
    statements = import_statements(package)
    modules = {_module_name(p, package): p for p, _ in statements}
    lazy = _lazy_exports(package)
    top = package.name

    def target(name: str) -> str | None:
        while name and name not in modules:  # a name inside a module -> the module
            name = name.rpartition(".")[0]
        return name or None

    found: list[Import] = []
    for path, nodes in statements:
        name = _module_name(path, package)
        is_package = path.name == "__init__.py"
        for node in nodes:
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                names = [lazy.get(alias.name, f"{base}.{alias.name}") if base == top else f"{base}.{alias.name}"
                         for alias in node.names]
            for imported in names:
                if imported.split(".")[0] != top:
                    continue
                module = target(imported)
                if module is not None and module != name:
                    found.append(Import(name, path, node.lineno, module))
    return tuple(dict.fromkeys(found))  # several names of one module on one line: one import


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the statinterp modules it imports (as :func:`statinterp_imports` finds them)."""
    graph: dict[str, set[str]] = {_module_name(p, package): set() for p in package.rglob("*.py")}
    for imp in statinterp_imports(package):
        graph[imp.module].add(imp.target)
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


@pytest.mark.slow
def test_statinterp_has_no_import_cycle():
    graph = _without_package_roots(import_graph())
    assert len(graph) > 30  # the whole package was read
    cycle = find_cycle(graph)
    if cycle:
        pytest.fail("import cycle: " + " -> ".join(cycle))


def test_no_module_imports_another_modules_private_names():
    """What one module takes from another is public: ``from statinterp.X import _name`` is a name
    that should be made public or moved home (``__future__`` and dunder names aside)."""
    found = []
    for path, nodes in import_statements(PACKAGE):
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("statinterp"):
                found += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.module}.{a.name}"
                          for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_names_from_the_package_root_are_submodules_or_its_version():
    """The layers are import-linter's contract (pyproject.toml, ``lint-imports`` in CI), which sees
    ``from statinterp import NAME`` as an import of the package root only. So a module takes from
    the root only a submodule or ``__version__``, never one of its lazy public names: through them
    a lower layer could reach a higher one unseen."""
    lazy = _lazy_exports(PACKAGE)
    found = []
    for path, nodes in import_statements(PACKAGE):
        if path == PACKAGE / "__init__.py":
            continue
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "statinterp":
                found += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {a.name}"
                          for a in node.names if a.name in lazy]
    assert lazy, "statinterp/__init__.py lists no lazy names (_EXPORTS)"
    assert not found, "lazy public names imported from the package root:\n" + "\n".join(found)
