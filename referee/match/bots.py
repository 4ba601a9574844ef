"""What a bot is before it runs: a command line or an in-process ``module:Class``, parsed from a league
entry or the command line, checked (does its program, script or module exist?) and, for an in-process
bot, loaded. Configuration reads this module; starting a command bot is the launcher's business.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pyramid_sdk.bot import Bot

_MODULE_CLASS: Final = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class BotSpecError(ValueError):
    """A bot that cannot be started or loaded; the message says which and why."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """How to get a bot: a command line (a separate, untrusted process) or ``module:Class`` (in-process)."""

    name: str
    command: tuple[str, ...] = ()
    module: str = ""
    cwd: Path | None = None
    paths: tuple[Path, ...] = ()
    """Extra paths the sandboxed process may read (its ``cwd`` is always readable)."""
    remote: bool = False
    """A remote entrant: its bot connects from elsewhere with its token (docs/REMOTE.md)."""

    @classmethod
    def parse(cls, text: str, name: str | None = None, cwd: Path | None = None) -> BotSpec:
        text = text.strip()
        if not text:
            raise BotSpecError("empty bot: give a command line or module:Class")
        if _MODULE_CLASS.match(text):
            return cls(name or text.rsplit(":", 1)[1], module=text, cwd=cwd)
        try:
            argv = tuple(shlex.split(text))
        except ValueError as exc:
            raise BotSpecError(f"bot command {text!r}: {exc}") from None
        return cls(name or default_name(argv), command=argv, cwd=cwd)

    def check(self) -> None:
        """Raises :class:`BotSpecError` if the module's class cannot be loaded, or the command's program
        cannot be found, or (for an interpreter: ``python``, ``node``, ``bash``, …) the script it runs
        or the module of ``python -m``. Nothing of a command bot is run or imported."""
        if self.remote:
            return
        if self.module:
            self.load()
            return
        program = self.command[0]
        where = self.cwd or Path.cwd()
        own_python = program in ("python", "python3")  # the referee's own interpreter, see _environment
        if own_python:
            pass
        elif "/" in program:
            path = (where / program) if not Path(program).is_absolute() else Path(program)
            if not path.exists():
                raise BotSpecError(f"bot {self.name!r}: no program {program!r} in {where}")
            if not path.is_file() or not os.access(path, os.X_OK):
                raise BotSpecError(
                    f"bot {self.name!r}: program {program!r} in {where} is not an executable file "
                    "(chmod +x it, or run it with its interpreter)"
                )
        elif shutil.which(program) is None:
            raise BotSpecError(f"bot {self.name!r}: command {program!r} not found on PATH")
        target = script_of(self.command)
        if target is None:
            return
        kind, name = target
        if kind == "module":
            # Only the referee's own Python has a sys.path we know: it is the bot's, with its cwd first.
            roots = [str(where), *(entry for entry in sys.path if entry)]
            if own_python and not module_found(name, roots):
                raise BotSpecError(
                    f"bot {self.name!r}: no module {name!r} in {where} or the referee's Python "
                    f"(for python -m {name})"
                )
        elif not _script_found(Path(program).name, name, where):
            raise BotSpecError(f"bot {self.name!r}: no script {name!r} in {where} (for {program})")

    def load(self) -> Bot:
        """An instance of the in-process bot class. Its folder is on ``sys.path`` only while its module is
        imported, so that one entrant's folder never shadows another's modules."""
        module_name, class_name = self.module.split(":")
        where = str(self.cwd or Path.cwd())
        added = where not in sys.path
        if added:
            sys.path.insert(0, where)
        try:
            module = importlib.import_module(module_name)
        except (Exception, SystemExit) as exc:  # a module that runs a bot when imported exits
            raise BotSpecError(
                f"bot {self.name!r}: cannot import {module_name}: {_error_line(exc)}"
            ) from None
        finally:
            if added:
                sys.path.remove(where)
        cls = getattr(module, class_name, None)
        if not (isinstance(cls, type) and issubclass(cls, Bot)):
            raise BotSpecError(f"bot {self.name!r}: {module_name} has no Bot subclass {class_name}")
        try:
            return cls()
        except (Exception, SystemExit) as exc:
            raise BotSpecError(
                f"bot {self.name!r}: {class_name}() failed: {_error_line(exc)} "
                "(an in-process bot is made with no arguments)"
            ) from None


_INTERPRETER: Final = re.compile(
    r"^(?P<family>python|pypy|node|nodejs|bun|deno|ruby|perl|php|lua|luajit|bash|sh|dash|zsh|ksh)"
    r"[\d.]*$"
)
_WITH_VALUE: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"-W", "-X", "--check-hash-based-pycs"}),
    "node": frozenset(
        {
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
            "-C",
            "--conditions",
            "--input-type",
            "--title",
            "--env-file",
            "--stack-size",
            "--max-old-space-size",
        }
    ),
    "ruby": frozenset({"-I", "-r", "-C", "-E", "-F", "-x"}),
    "perl": frozenset({"-I", "-M", "-m", "-x"}),
    "shell": frozenset({"-o", "+o", "-O", "+O"}),
}
"""Options of each interpreter family that take the next word as their value (not a script)."""
_INLINE: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"-c"}),
    "node": frozenset({"-e", "--eval", "-p", "--print", "-i", "--interactive"}),
    "ruby": frozenset({"-e"}),
    "perl": frozenset({"-e", "-E"}),
    "shell": frozenset({"-c", "-s"}),
}
"""Options that mean the program text is on the command line or stdin: there is no script to check."""
_SEARCHES_PATH: Final = ("-S",)
"""Perl's and Ruby's option to look the script up on ``PATH``: then it is not looked for."""


def interpreter_family(program: str) -> str | None:
    """The interpreter a program is, by its name (``python``, ``node``, ``ruby``, ``shell``, ...), or
    ``None`` for any other program (a compiled bot, say).

    >>> interpreter_family("/usr/bin/python3.11"), interpreter_family("nodejs"), interpreter_family("./bot")
    ('python', 'node', None)
    """
    match = _INTERPRETER.match(Path(program).name)
    if match is None:
        return None
    family = match.group("family")
    if family in ("bash", "sh", "dash", "zsh", "ksh"):
        return "shell"
    return {"pypy": "python", "nodejs": "node", "bun": "node", "deno": None}.get(family, family)


def script_of(argv: Sequence[str]) -> tuple[str, str] | None:
    """What an interpreter's command line runs: ``("script", path)``, ``("module", name)`` for
    ``python -m name``, or ``None`` (not an interpreter we know, code given inline, or nothing to tell).

    >>> script_of(["python", "-u", "bots/alpha.py", "--level", "3"])
    ('script', 'bots/alpha.py')
    >>> script_of(["python3", "-m", "bots.alpha"]), script_of(["node", "--require", "x", "bot.js"])
    (('module', 'bots.alpha'), ('script', 'bot.js'))
    >>> script_of(["python", "-c", "print()"]), script_of(["./run.sh"]), script_of(["bash", "-c", "x"])
    (None, None, None)
    """
    family = interpreter_family(argv[0]) if argv else None
    if family is None:
        return None
    args = list(argv[1:])
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return ("script", args[index + 1]) if index + 1 < len(args) else None
        if not arg.startswith(("-", "+")) or arg in ("-", "+"):
            return None if arg == "-" else ("script", arg)
        if arg in _INLINE.get(family, ()) or arg in _SEARCHES_PATH:
            return None
        if family == "python" and arg.startswith("-m"):
            name = arg[2:] or (args[index + 1] if index + 1 < len(args) else "")
            return ("module", name) if name else None
        if family == "python" and arg.startswith("-c"):
            return None
        index += 2 if arg in _WITH_VALUE.get(family, ()) else 1
    return None


def module_found(name: str, roots: Sequence[str]) -> bool:
    """Whether ``python -m name`` would find its module from ``roots`` (the ``sys.path`` it gets),
    looked up on disk without importing anything (a bot's packages are not the referee's to run)."""
    try:
        return module_spec(name, roots) is not None
    except (ImportError, ValueError, OSError):
        return True  # cannot tell: let the bot's own start say


def module_spec(name: str, roots: Sequence[str]) -> importlib.machinery.ModuleSpec | None:
    """Where ``python -m name`` would find its module from ``roots``: in them, or (for the top-level
    package) among the interpreter's installed packages; ``None`` where it would not. Nothing is
    imported; ``ImportError``, ``ValueError`` or ``OSError`` when the finders cannot tell."""
    locations = list(roots)
    parts = name.split(".")
    spec = None
    for number, part in enumerate(parts):
        if not part.isidentifier():
            return None
        spec = importlib.machinery.PathFinder.find_spec(part, locations)
        if spec is None and number == 0:
            spec = _installed(part)
        if spec is None:
            return None
        if number < len(parts) - 1:
            if spec.submodule_search_locations is None:
                return None
            locations = list(spec.submodule_search_locations)
    return spec


def _installed(name: str) -> importlib.machinery.ModuleSpec | None:
    """A top-level module that the interpreter's other finders know, such as those of an editable
    install (``pip install -e``: ``sample_bots`` stays in the checkout, found by a finder of its own)."""
    for finder in sys.meta_path:
        if finder is importlib.machinery.PathFinder or not hasattr(finder, "find_spec"):
            continue
        spec = finder.find_spec(name, None)
        if spec is not None:
            return spec
    return None


def _script_found(program: str, script: str, where: Path) -> bool:
    path = Path(script) if Path(script).is_absolute() else where / script
    if path.exists():
        return True
    family = interpreter_family(program)
    if family == "node":  # node bot runs bot.js, or bot/index.js
        return any(path.with_name(path.name + suffix).exists() for suffix in (".js", ".mjs", ".cjs", ".json"))
    if family == "shell" and "/" not in script:  # bash looks a script up on PATH too
        return any(
            (Path(folder) / script).is_file() for folder in os.environ.get("PATH", "").split(os.pathsep)
        )
    return False


def _error_line(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


_SCRIPT_SUFFIXES: Final = frozenset(
    {".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".sh", ".jar", ".exe"}
)


def default_name(argv: tuple[str, ...]) -> str:
    """A bot's name from its command: the script it runs (``python bots/alpha.py --level 3`` is
    ``alpha``), the module (``python -m bots.alpha``), or else the program (``./alpha``)."""
    args = argv[1:]
    if "-m" in args[:-1]:
        return args[args.index("-m") + 1].rsplit(".", 1)[-1]
    for arg in args:
        if not arg.startswith("-") and " " not in arg and Path(arg).suffix in _SCRIPT_SUFFIXES:
            return Path(arg).stem
    return Path(argv[0]).name
