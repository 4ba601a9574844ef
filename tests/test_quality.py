"""The code-quality bar is part of the test suite: ruff everywhere, mypy --strict on the library, and
the referee's rooms (docs/ARCHITECTURE.md, "Rooms") kept apart by an AST scan."""

import ast
import itertools
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

BIN = Path(sys.executable).parent


def run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which(tool, path=str(BIN)) or shutil.which(tool)
    assert exe, f"{tool} is not installed: install the dev extra, pip install -e '.[dev]'"
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_ruff_is_clean():
    result = run("ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean():
    result = run("ruff", "format", "--no-cache", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_on_the_library_and_referee():
    result = run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports, at its top or inside a function, by absolute name (``from a import
    b`` counts as ``a`` and as ``a.b``, which may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _room(module: str) -> str | None:
    """The room of one of the referee's modules: its folder (``referee.run``) or, for a module of
    ``referee/`` itself, that module (``referee.check``)."""
    parts = module.split(".")
    if parts[0] != "referee" or len(parts) < 2:
        return None
    room = ".".join(parts[:2])
    path = ROOT.joinpath(*parts[:2])
    return room if path.is_dir() or path.with_suffix(".py").is_file() else None


@pytest.mark.quick
def test_no_module_of_the_league_opens_a_database():
    """``referee/league/`` says what a league file says; the database is ``referee/results/``'s."""
    modules = sorted((ROOT / "referee/league").rglob("*.py"))
    assert len(modules) > 5  # the folder is where this test thinks
    opening = [
        str(path.relative_to(ROOT))
        for path in modules
        if any(name == "sqlite3" or name.startswith("sqlite3.") for name in _imports(path))
    ]
    assert not opening, f"these modules of referee/league/ import sqlite3: {opening}"


@pytest.mark.quick
def test_every_sqlite_file_is_opened_in_one_place():
    """One ``connect`` (``referee/results/connection.py``) gives every SQLite file of the referee the
    same busy timeout, integrity check and one-line errors."""
    calls = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "referee").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr == "connect"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sqlite3"
    )
    assert calls == ["referee/results/connection.py"], calls


@pytest.mark.quick
def test_no_import_circle_among_the_referee_s_rooms():
    """Imports between the rooms of ``referee/`` (its folders and its own modules) point one way
    (docs/ARCHITECTURE.md, "Rooms"): a circle names each arrow of it and a file that draws it."""
    arrows: dict[str, dict[str, str]] = {}
    for path in sorted((ROOT / "referee").rglob("*.py")):
        source = _room(".".join(path.relative_to(ROOT).with_suffix("").parts))
        assert source is not None
        for name in _imports(path):
            target = _room(name)
            if target is not None and target != source:
                arrows.setdefault(source, {}).setdefault(target, str(path.relative_to(ROOT)))
    assert arrows.get("referee.results", {}).keys() >= {"referee.league"}  # the scan sees real arrows

    def circle(start: str, path: list[str]) -> list[str] | None:
        for target in sorted(arrows.get(path[-1], {})):
            if target == start:
                return [*path, start]
            if target not in path and (found := circle(start, [*path, target])):
                return found
        return None

    for room in sorted(arrows):
        if found := circle(room, [room]):
            steps = [f"{a} -> {b} ({arrows[a][b]})" for a, b in itertools.pairwise(found)]
            raise AssertionError("an import circle: " + "; ".join(steps))


def _callers(path: Path, name: str) -> set[str]:
    """The functions of ``path`` (by qualified name; ``<module>`` for its top level) that call ``name``,
    as a plain name (``rate(…)``) or as a module's attribute (``ratings.rate(…)``)."""

    def walk(node: ast.AST, scope: str) -> set[str]:
        found: set[str] = set()
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = child.name if scope == "<module>" else f"{scope}.{child.name}"
            if isinstance(child, ast.Call):
                called = child.func
                if (isinstance(called, ast.Name) and called.id == name) or (
                    isinstance(called, ast.Attribute)
                    and called.attr == name
                    and isinstance(called.value, ast.Name)
                ):
                    found.add(scope)
            found |= walk(child, inner)
        return found

    return walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), "<module>")


@pytest.mark.quick
def test_the_standings_are_computed_in_one_function():
    """Every reader of the standings (the commands, the report, the web API, ``referee analyze``) goes
    through ``referee.results.reading.standings``: a fix to how they are read lands once."""
    ratings = ROOT / "referee/league/ratings.py"
    assert _callers(ratings, "rate_game")  # the scan sees real calls
    rating = {
        f"{path.relative_to(ROOT)}:{function}"
        for path in sorted((ROOT / "referee").rglob("*.py"))
        if path != ratings
        for function in _callers(path, "rate")
    }
    assert rating == {"referee/results/reading.py:standings"}, f"rate() is called in {sorted(rating)}"


@pytest.mark.quick
def test_one_function_makes_a_seat_of_a_started_process():
    """One seat-maker (issue #33): ``RemoteSeat(`` is called in one function of ``referee/`` alone,
    ``referee.match.arbiter.seat_of``, so that every seat of a process gets what that function gives."""

    def makes(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Name) and node.func.id == "RemoteSeat")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "RemoteSeat")
        )

    def makers(node: ast.AST, where: str) -> set[str]:
        found = {where} if makes(node) else set()
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else where
            found |= makers(child, inner)
        return found

    found: set[str] = set()
    for path in sorted((ROOT / "referee").rglob("*.py")):
        module = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found |= {f"{module}:{name}" for name in makers(tree, "<module>")}
    assert found == {"referee/match/arbiter.py:seat_of"}, f"RemoteSeat( is made in: {sorted(found)}"


@pytest.mark.quick
def test_no_module_of_the_tests_imports_a_test_module():
    """What tests share is in ``tests/support/``, one module per concern: a test module imported by
    another runs its tests' imports and fixtures there, and ties the two files' helpers together."""
    modules = sorted([*(ROOT / "tests").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")])
    assert any(path.name == "test_quality.py" for path in modules)  # the scan looks where it thinks
    importing = {
        str(path.relative_to(ROOT)): sorted(name for name in _imports(path) if name.startswith("test_"))
        for path in modules
    }
    found = {path: names for path, names in importing.items() if names}
    assert not found, f"these modules import test modules (move what they share to tests/support/): {found}"


SHARED = ("ROOT", "REFEREE", "referee", "export", "write_league", "free_port", "serve", "chromium")
SHARED += ("make_certificates", "bot_processes", "worker_processes", "doorway", "refusal", "admitted")
"""What ``tests/support/`` holds that tests and benchmarks once wrote for themselves, each in several
files."""


def _defined(path: Path) -> set[str]:
    """The names a module defines at its top: functions, classes and assigned names."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


@pytest.mark.quick
def test_the_shared_helpers_are_written_once_in_tests_support():
    """One of each: a helper ``tests/support/`` holds is not written again in a test or a benchmark,
    where a fix would land in one copy only."""
    defined = set().union(*map(_defined, (ROOT / "tests/support").glob("*.py")))
    assert set(SHARED) <= defined, set(SHARED) - defined
    again = [
        f"{path.relative_to(ROOT)}: {sorted(_defined(path) & set(SHARED))}"
        for path in sorted([*(ROOT / "tests").glob("*.py"), *(ROOT / "benchmarks").glob("*.py")])
        if _defined(path) & set(SHARED)
    ]
    assert not again, f"written again outside tests/support/: {again}"
