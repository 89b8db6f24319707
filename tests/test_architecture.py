"""The architecture holds: import-linter's contracts, no import cycles, small files, a thin entry script."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests.conftest import ROOT

PACKAGES = ("core", "ui")
MAX_LINES = 300  # a module a newcomer reads in one sitting
MAX_FUNCTION_LINES = 60  # a function read on one screen


def project_graph() -> grimp.ImportGraph:
    # Every import statement counts, those inside functions too: a lazy import is still a dependency.
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each a cycle of imports."""
    modules = sorted(m for m in graph.modules if m.split(".")[0] in PACKAGES)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        work = [(node, iter(sorted(graph.find_modules_directly_imported_by(node))))]
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        while work:
            current, children = work[-1]
            for child in children:
                if child.split(".")[0] not in PACKAGES:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    break
                if child in on_stack:
                    low[current] = min(low[current], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[current])
                if low[current] == index[current]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == current:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return found


def test_the_import_contracts_hold():
    # pyproject.toml states the layers: ui -> cli/runner -> history -> engine -> results -> config.
    lint = shutil.which("lint-imports", path=str(ROOT / ".venv" / "bin")) or shutil.which("lint-imports")
    assert lint, "import-linter is not installed (requirements-dev.txt)"
    done = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]


def test_no_module_imports_itself_back_through_others():
    graph = project_graph()
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path, monkeypatch):
    # The check above could pass by finding nothing at all: show it finds a real cycle.
    pkg = tmp_path / "loopy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from loopy import b\n")
    (pkg / "b.py").write_text("def f():\n    from loopy import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys.modules[__name__], "PACKAGES", ("loopy",))
    assert cycles(grimp.build_graph("loopy", cache_dir=None)) == [["loopy.a", "loopy.b"]]


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_stay_small(package):
    long = [f"{path.relative_to(ROOT)}: {n} lines" for path, n in line_counts(package) if n > MAX_LINES]
    assert long == []


@pytest.mark.parametrize("package", PACKAGES)
def test_functions_fit_on_a_screen(package):
    long = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {n} lines")
    assert long == []


def test_the_size_checks_can_fail(tmp_path, monkeypatch):
    (tmp_path / "fat").mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "fat" / "big.py").write_text(f"def f():\n{body}\n" + "\n" * MAX_LINES, encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    with pytest.raises(AssertionError):
        test_modules_stay_small("fat")
    with pytest.raises(AssertionError):
        test_functions_fit_on_a_screen("fat")


def line_counts(package: str) -> list[tuple[Path, int]]:
    """(path, lines) of every module of package."""
    return [(p, p.read_text(encoding="utf-8").count("\n")) for p in sorted((ROOT / package).rglob("*.py"))]


def test_the_entry_script_only_wires_the_page():
    # streamlit_app.py is a module, which import-linter cannot check: Streamlit, ui/ and the standard library only.
    tree = ast.parse((ROOT / "streamlit_app.py").read_text(encoding="utf-8"))
    imported = {
        alias.name if isinstance(node, ast.Import) else node.module
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    allowed = {"streamlit", "ui", "__future__", *sys.stdlib_module_names}
    stray = {m for m in imported if m and m.split(".")[0] not in allowed}
    assert stray == set()
