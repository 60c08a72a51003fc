"""statinterp's modules import one another without cycles, and its packages in layers.

The graph is built from the source (``ast``), with every import: at module level, inside
functions (lazy imports) and under ``TYPE_CHECKING`` (a type from another package is a
dependency on it all the same). An edge A -> B means module A imports module B (or a name from
it); ``from statinterp import NAME`` of one of the package root's lazy public names counts as an
import of the module the name lives in (the root's ``_EXPORTS``), so no module reaches a higher
layer through the root. A cycle is reported by its modules, in order.

The layers are the table under "## Layers" in docs/architecture.md (the one place they are
written; this test reads it): a module imports its own package and the packages of the layers
below its own, never a higher layer nor another package of its own layer. A breach is reported
by file and line.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
PACKAGE = ROOT / "statinterp"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


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
    for path, nodes in import_statements(PACKAGE):
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("statinterp"):
                found += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.module}.{a.name}"
                          for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, "private names imported across modules:\n" + "\n".join(found)


# --------------------------------------------------------------------------- layers


def read_layers(text: str) -> list[tuple[int, list[str]]]:
    """The table under "## Layers" of docs/architecture.md: ``(layer, names)`` per row, top row
    first; a name is a package (``rankers/``) or a top-level module (``workflow.py``)."""
    section = text.partition("\n## Layers\n")[2].partition("\n## ")[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].isdigit():
            rows.append((int(cells[0]), re.findall(r"`([^`]+)`", cells[1])))
    return rows


def package_units(package: Path = PACKAGE) -> list[str]:
    """The packages (``name/``) and top-level modules (``name.py``) of ``package``, its root aside."""
    return sorted([f"{d.name}/" for d in package.iterdir() if (d / "__init__.py").is_file()]
                  + [f.name for f in package.glob("*.py") if f.name != "__init__.py"])


def unit_of(module: str, package: Path = PACKAGE) -> str | None:
    """The package or top-level module that ``module`` belongs to (``None``: the package root)."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    return f"{parts[1]}/" if (package / parts[1]).is_dir() else f"{parts[1]}.py"


def layer_breaches(layers: list[tuple[int, list[str]]], package: Path = PACKAGE) -> list[str]:
    """Every import of a higher layer, or of another package of the importer's own layer, as
    ``file:line: what``. Imports of the package root's own names (``__version__``) are no breach."""
    level = {unit: number for number, units in layers for unit in units}
    out = []
    for imp in statinterp_imports(package):
        importer, imported = unit_of(imp.module, package), unit_of(imp.target, package)
        if importer is None or imported is None or importer == imported:
            continue
        if importer not in level or imported not in level:
            continue  # test_the_layers_table_places_every_package_once names it
        if level[imported] >= level[importer]:
            where = "above" if level[imported] > level[importer] else "beside"
            out.append(f"{imp.path.relative_to(package.parent)}:{imp.line}: {imp.module} imports {imp.target}: "
                       f"{imported} (layer {level[imported]}) is {where} {importer} (layer {level[importer]})")
    return out


def test_the_layers_table_places_every_package_once():
    layers = read_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    assert len(layers) > 5, "docs/architecture.md has no '## Layers' table"
    numbers = [number for number, _ in layers]
    assert numbers == sorted(numbers, reverse=True) and len(set(numbers)) == len(numbers), \
        f"the layers are not listed top first, each once: {numbers}"
    placed = [unit for _, units in layers for unit in units]
    repeated = sorted({u for u in placed if placed.count(u) > 1})
    assert not repeated, f"in more than one layer: {repeated}"
    on_disk = package_units()
    assert sorted(placed) == on_disk, (f"statinterp's packages and modules without a layer: "
                                       f"{sorted(set(on_disk) - set(placed))}; layers naming none: "
                                       f"{sorted(set(placed) - set(on_disk))}")


def test_no_module_imports_a_higher_layer_or_a_package_beside_its_own():
    layers = read_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    assert layers, "docs/architecture.md has no '## Layers' table"
    breaches = layer_breaches(layers)
    assert not breaches, "imports against the layers (docs/architecture.md, Layers):\n" + "\n".join(breaches)


def test_the_layer_check_names_file_and_line_of_every_kind_of_import(tmp_path):
    """Lazy, TYPE_CHECKING and root-name imports of a higher layer, and one of a package beside."""
    pkg = tmp_path / "statinterp"
    for folder in ("low", "mid", "side", "high"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text('_EXPORTS = {"run": ".high.api"}\n__version__ = "1"\n')
    (pkg / "base.py").write_text("")
    (pkg / "high" / "api.py").write_text("from statinterp.mid import m\nfrom statinterp import base\ndef run(): ...\n")
    (pkg / "mid" / "m.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from statinterp import __version__\n"       # the root's own name: no breach
        "from ..low import deep\n"                   # a lower layer
        "if TYPE_CHECKING:\n"
        "    from statinterp.high.api import run\n"  # line 5: above, under TYPE_CHECKING
        "def f():\n"
        "    import statinterp.side.s\n"             # line 7: beside, lazily
        "    from statinterp import run\n")          # line 8: above, through the root's lazy names
    (pkg / "side" / "s.py").write_text("")
    (pkg / "low" / "deep.py").write_text("from . import other\n")
    (pkg / "low" / "other.py").write_text("")
    layers = read_layers("# A\n\n## Layers\n| layer | packages |\n|---|---|\n| 3 | `high/` |\n"
                         "| 2 | `mid/`, `side/` |\n| 1 | `low/` |\n| 0 | `base.py` |\n\n## Next\n| 9 | `x/` |\n")
    assert layers == [(3, ["high/"]), (2, ["mid/", "side/"]), (1, ["low/"]), (0, ["base.py"])]
    assert package_units(pkg) == ["base.py", "high/", "low/", "mid/", "side/"]
    assert layer_breaches(layers, pkg) == [
        "statinterp/mid/m.py:5: statinterp.mid.m imports statinterp.high.api: high/ (layer 3) is above mid/ (layer 2)",
        "statinterp/mid/m.py:7: statinterp.mid.m imports statinterp.side.s: side/ (layer 2) is beside mid/ (layer 2)",
        "statinterp/mid/m.py:8: statinterp.mid.m imports statinterp.high.api: high/ (layer 3) is above mid/ (layer 2)",
    ]
