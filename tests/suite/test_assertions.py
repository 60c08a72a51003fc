"""Every test asserts something that could fail (the project's rule for honest tests).

An ``ast`` scan of every test function of tests/, experiments/ and benchmarks/: a test passes
the scan when its body holds an ``assert``, a ``pytest.raises`` / ``warns`` / ``fail`` /
``deprecated_call``, an ``assert_*`` call (``np.testing.assert_array_equal``, a mock's
``assert_called_once``), or a call to a helper that does one of these -- a helper defined in the
same file, in tests/support/ or in tests/conftest.py, followed to any depth."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT, TESTS

#: The folders whose ``test_*.py`` files pytest collects (pyproject's testpaths).
TEST_FOLDERS = ("tests", "experiments", "benchmarks")
#: pytest's own ways of failing a test.
PYTEST_CHECKS = {"raises", "warns", "fail", "deprecated_call"}


def _called_names(fn: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                names.add(func.id)
            elif isinstance(func, ast.Attribute):
                names.add(func.attr)
    return names


def _checks_directly(fn: ast.AST) -> bool:
    if any(isinstance(node, ast.Assert) for node in ast.walk(fn)):
        return True
    return any(name in PYTEST_CHECKS or name.startswith("assert") for name in _called_names(fn))


def _functions(path: Path) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {node.name: node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _checking(functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> set[str]:
    """The names among ``functions`` that check something, directly or through one another."""
    checking = {name for name, fn in functions.items() if _checks_directly(fn)}
    grown = True
    while grown:
        grown = False
        for name, fn in functions.items():
            if name not in checking and _called_names(fn) & checking:
                checking.add(name)
                grown = True
    return checking


def unchecked_tests(path: Path, shared: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> list[str]:
    """``line name`` of each test function of ``path`` that checks nothing, given the helpers
    ``shared`` with every file (those of the file itself take precedence)."""
    own = _functions(path)
    checking = _checking({**shared, **own})
    return [f"{fn.lineno} {name}" for name, fn in own.items() if name.startswith("test") and name not in checking]


@pytest.mark.slow
def test_every_test_function_checks_something():
    files = sorted(p for folder in TEST_FOLDERS for p in (REPO_ROOT / folder).rglob("test_*.py"))
    assert len(files) > 40 and Path(__file__) in files  # the scan sees the whole suite
    shared: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for path in [TESTS / "conftest.py", *sorted((TESTS / "support").glob("*.py"))]:
        shared.update(_functions(path))
    found = [f"{path.relative_to(REPO_ROOT)}:{entry}" for path in files for entry in unchecked_tests(path, shared)]
    assert found == []


def test_the_scan_finds_a_test_that_checks_nothing(tmp_path):
    path = tmp_path / "test_example.py"
    path.write_text(
        "def helper(x):\n    assert x\n\n"
        "def test_through_a_helper():\n    helper(1)\n\n"
        "def test_raises():\n    with pytest.raises(ValueError):\n        int('x')\n\n"
        "def test_numpy():\n    np.testing.assert_array_equal([1], [1])\n\n"
        "def test_through_a_shared_helper():\n    one_error_line('x')\n\n"
        "def test_nothing():\n    for name in []:\n        print(name)\n",
        encoding="utf-8",
    )
    shared = _functions(TESTS / "support" / "cli.py")
    assert [entry.partition(" ")[2] for entry in unchecked_tests(path, shared)] == ["test_nothing"]
    assert [entry.partition(" ")[2] for entry in unchecked_tests(path, {})] == ["test_through_a_shared_helper",
                                                                               "test_nothing"]
