"""The code-quality bar is part of the test suite: ruff everywhere, mypy --strict on the library."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
