"""The Node.js sample bot (``node/heuristic.js``), by module name, so that a league in any folder can enter
it without a path into the checkout, as it enters the Python sample bots::

    - name: node-heuristic
      command: python -m sample_bots.node_heuristic
      build: python -m sample_bots.node_heuristic --install

It replaces its own process with ``node node/heuristic.js`` (the same process: the token's pipe, the
environment and the sandbox carry over), so it costs a league one Python start-up of the standard library
alone. ``--install`` installs the Node.js SDK's packages (``npm ci`` in the checkout's ``sdk/node``, whose
folder the sandbox shows every bot): the build step a league runs once before its matches. It does nothing
when the packages its lock file names are already there: ``npm ci`` first deletes ``node_modules``, and the
folder is shared by every league, test and bot of the checkout, so a second league's build would pull the
SDK from under the Node.js bots of a first one in play.

The script and the SDK it runs on are files of the checkout the referee was installed from
(``pip install -e``), beside this package; without them it says so in one line.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Final, NoReturn

SCRIPT: Final = Path(__file__).resolve().parent / "node" / "heuristic.js"
NODE_SDK: Final = Path(__file__).resolve().parent.parent / "sdk" / "node"
"""The Node.js SDK of the checkout this package belongs to (``referee init`` names the same copy:
``referee.starter.NODE_SDK``)."""


def _stop(problem: str) -> NoReturn:
    raise SystemExit(f"node-heuristic: {problem}")


def _program(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        _stop(f"{name} is not on PATH: install Node.js 18 or later (with npm) to run the Node.js sample bot")
    return path


def installed(sdk: Path) -> bool:
    """Whether every package ``sdk``'s lock file names (the bot's, not the development tools) is in its
    ``node_modules`` at the locked version, as npm's own record of what it installed there says."""
    try:
        locked = json.loads((sdk / "package-lock.json").read_bytes())["packages"]
        present = json.loads((sdk / "node_modules" / ".package-lock.json").read_bytes())["packages"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    for path, package in locked.items():
        if not path or package.get("dev"):
            continue  # the root itself, or a development tool
        if (package.get("optional") or package.get("devOptional")) and path not in present:
            continue  # an optional package npm left out on this platform
        if package.get("link"):  # a link to a folder: the folder's own entry is checked
            if not (sdk / path).exists():
                return False
            continue
        if present.get(path, {}).get("version") != package.get("version"):
            return False
        if not (sdk / path / "package.json").is_file():
            return False
    return True


def main(arguments: list[str]) -> NoReturn:
    if not SCRIPT.is_file() or not (NODE_SDK / "package.json").is_file():
        _stop(
            f"no Node.js SDK at {NODE_SDK}: the Node.js sample bot runs from a checkout of Pyramid Arena "
            "installed with pip install -e"
        )
    if arguments == ["--install"]:
        if installed(NODE_SDK):
            print(f"node-heuristic: the Node.js SDK's packages are installed in {NODE_SDK / 'node_modules'}")
            raise SystemExit(0)
        npm = _program("npm")
        os.execv(npm, [npm, "ci", "--prefix", str(NODE_SDK), "--no-audit", "--no-fund"])
    if arguments:
        _stop(f"unknown arguments {' '.join(arguments)!r}: give none, or --install")
    if not (NODE_SDK / "node_modules").is_dir():
        _stop(
            f"the Node.js SDK's packages are not installed: run python -m sample_bots.node_heuristic "
            f"--install (npm ci --prefix {NODE_SDK}), the league's build step"
        )
    node = _program("node")
    os.execv(node, [node, str(SCRIPT)])


if __name__ == "__main__":
    main(sys.argv[1:])
