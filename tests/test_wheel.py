"""The arena as it is installed, not as it sits in the checkout: the wheel built from the repository
holds every package of ``referee/``, the SDK and the sample bots (the explicit package list in
pyproject.toml) and the referee's templates, and each of its modules imports from the installed copy.

An editable install (the developer's ``pip install -e``) reads the checkout's folders, so a package left
out of the list would go unnoticed there: this test installs the wheel into a fresh virtual environment,
which takes its dependencies from the developer's environment (a path line, so nothing is downloaded)
but none of the checkout.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from support import ROOT

SOURCES = {
    "referee": ROOT / "referee",
    "pyramid_sdk": ROOT / "sdk/python/pyramid_sdk",
    "sample_bots": ROOT / "sample_bots",
}
DATA = ("templates", "static")
"""The folders of package data the referee reads at run time (report and web pages)."""


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(arg) for arg in args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def modules(name: str) -> list[str]:
    """Every module of the package ``name`` in the checkout, by its dotted name (generated stubs too)."""
    root = SOURCES[name]
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if "__pycache__" not in parts:
            found.append(
                ".".join((name, *parts[:-1])) if parts[-1] == "__init__" else ".".join((name, *parts))
            )
    return found


def data_files() -> set[str]:
    """The referee's package data in the checkout, as paths inside the wheel."""
    return {
        path.relative_to(ROOT).as_posix()
        for folder in DATA
        for path in (ROOT / "referee").rglob(f"{folder}/*")
        if path.is_file()
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of what the distribution is made of, so no build folder lands in the checkout."""
    source = tmp_path_factory.mktemp("arena-source")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "node_modules")
    for part in ("referee", "sample_bots", "sdk/python/pyramid_sdk"):
        shutil.copytree(ROOT / part, source / part, ignore=ignore)
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / part, source / part)
    out = tmp_path_factory.mktemp("wheels")
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        source,
        "-w",
        out,
        cwd=source,
    )
    (built,) = out.glob("pyramid_arena-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the wheel, its dependencies read from this environment's
    site-packages (whose own .pth files, the editable install's among them, are not read)."""
    env = tmp_path_factory.mktemp("fresh") / "env"
    venv.create(env, with_pip=False)
    python = env / "bin/python"
    site = Path(
        run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=env).stdout.strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel, cwd=env)
    return python


def test_the_wheel_holds_every_package_and_the_pages_templates(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for name in SOURCES:
        for module in modules(name):
            init = module.replace(".", "/") + "/__init__.py"
            assert f"{module.replace('.', '/')}.py" in names or init in names, f"{module} is not in the wheel"
    missing = data_files() - names
    assert not missing, f"package data not in the wheel: {sorted(missing)}"
    assert len(data_files()) > 5  # the templates were found: a test that cannot fail is no test


def test_every_module_imports_from_the_installed_wheel(installed: Path, tmp_path: Path):
    """``-I``: neither the checkout (the working folder) nor PYTHONPATH is on the path."""
    names = [module for name in SOURCES for module in modules(name)]
    code = (
        "import importlib, json, sys\n"
        "files = {name: importlib.import_module(name).__file__ for name in sys.argv[1:]}\n"
        "print(json.dumps({'prefix': sys.prefix, 'files': files}))\n"
    )
    result = run(installed, "-I", "-c", code, *names, cwd=tmp_path)
    found = json.loads(result.stdout.splitlines()[-1])
    prefix = Path(found["prefix"]).resolve()
    outside = {
        name: path for name, path in found["files"].items() if prefix not in Path(path).resolve().parents
    }
    assert not outside, f"imported from outside the fresh environment: {outside}"
    assert set(found["files"]) == set(names)
    assert "referee.run.serve_driver" in names  # the checkout's modules were listed
