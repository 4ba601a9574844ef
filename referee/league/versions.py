"""Bot versions: each entrant's fingerprint, kept with its results, so a changed bot replays its matches.

The fingerprint hashes what the league says of the entrant — ``command`` or ``module``, ``cwd``,
``build`` and the optional ``version:`` key — and the contents of the code it names: the script of an
interpreter's command line (``python bots/alpha.py``: ``bots/alpha.py``; ``node bot``: ``bot.js``), the
program itself when it is a file in ``cwd`` (``./run.sh``), or the source file of a ``python -m`` module
or of a ``module:`` entrant (in ``cwd``, else among the referee's installed packages: a sample bot named
by module from any league). At most :data:`HASH_LIMIT` bytes of each file are read. Nothing else is
hashed: other files of the folder (a helper module, a model's weights) change nothing; bump ``version:``
when they change.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Final

from referee.league.config import Entrant
from referee.match.bots import module_spec, script_of

HASH_LIMIT: Final = 16 * 1024 * 1024
"""Bytes of each hashed file that count (its size counts whole)."""


def code_files(entrant: Entrant) -> list[Path]:
    """The files of the entrant's code that its fingerprint hashes (those that exist)."""
    spec = entrant.spec
    cwd = spec.cwd or Path.cwd()
    candidates: list[Path] = []
    if spec.module:
        candidates += _module_files(cwd, spec.module.split(":", 1)[0])
    elif spec.command:
        found = script_of(spec.command)
        if found is not None and found[0] == "script":
            script = cwd / found[1]
            candidates += [script, *(script.with_name(script.name + ext) for ext in (".js", ".py"))]
        elif found is not None:
            candidates += _module_files(cwd, found[1])
        elif "/" in spec.command[0]:
            candidates.append(cwd / spec.command[0])
    seen: list[Path] = []
    for path in candidates:
        if path.is_file() and path.resolve() not in seen:
            seen.append(path.resolve())
    return seen[:1] if spec.command and not spec.module and len(seen) > 1 else seen


def _module_files(cwd: Path, module: str) -> list[Path]:
    base = cwd.joinpath(*module.split("."))
    local = [base.with_suffix(".py"), base / "__init__.py"]
    if any(path.is_file() for path in local):
        return local
    try:  # an installed module, such as a sample bot named from a league anywhere
        spec = module_spec(module, [str(cwd), *(entry for entry in sys.path if entry)])
    except (ImportError, ValueError, OSError):
        return local
    return [Path(spec.origin)] if spec is not None and spec.has_location and spec.origin else local


def fingerprint(entrant: Entrant) -> str:
    """16 hex digits that change when the entrant's declared identity or its code's contents change."""
    spec = entrant.spec
    digest = hashlib.sha256()
    identity = {
        "kind": "module" if spec.module else "command",
        "source": spec.module or list(spec.command),
        "cwd": str(spec.cwd or ""),
        "build": entrant.build,
        "version": entrant.version,
    }
    digest.update(json.dumps(identity, sort_keys=True).encode())
    for path in code_files(entrant):
        digest.update(f"\0{path}\0{path.stat().st_size}\0".encode())
        with path.open("rb") as code:
            digest.update(code.read(HASH_LIMIT))
    return digest.hexdigest()[:16]
