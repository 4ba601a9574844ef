"""The referee's command line, run as a user runs it: one helper for every test that calls ``referee``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from support import ROOT

REFEREE = str(Path(sys.executable).parent / "referee")
"""The ``referee`` command of the interpreter running the tests (the venv's console script)."""


def referee(
    *args: object,
    cwd: Path | None = ROOT,
    timeout: float = 300,
    check: bool = False,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``referee ARGS`` run to its end from ``cwd``, its output captured as text. With ``check`` the test
    fails unless it exited with 0, showing what it printed; without, the caller asserts on the result."""
    result = subprocess.run(
        [REFEREE, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env=env,
        input=input,
    )
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def export(league: Path | str, *options: object, cwd: Path | None = ROOT) -> list[dict[str, Any]]:
    """The stored matches of ``league`` as ``referee export`` prints them, one dict a line (the export
    must succeed). Where a test compares exports byte for byte it reads ``referee("export", …).stdout``."""
    result = referee("export", league, *options, cwd=cwd, check=True)
    return [json.loads(line) for line in result.stdout.splitlines()]
