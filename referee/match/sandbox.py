"""The sandbox a bot process runs in: bubblewrap namespaces, a read-only view, resource limits, its own uid.

A bot's author wants to win, so the referee assumes a bot that reads every file it can, looks at every
other process, keeps notes between matches and leaves helpers running. Each bot process therefore runs
under ``bwrap`` with:

- its own PID namespace (it sees no other process, and every descendant dies with it, even when the
  referee is killed with SIGKILL), IPC and UTS namespaces, and no network: it reaches the referee only
  through the Unix socket bound in at :data:`SOCKET_INSIDE`;
- a read-only view of the system (``/usr``, ``/etc``), of the interpreter that runs it, of its own
  entrant folder and of the extra paths its entry lists; the league's folder, database, logs, report
  and the other entrants' folders are masked where they lie inside that view;
- a fresh, empty, size-limited ``/tmp`` (``HOME`` is inside it) that disappears with the process;
- where the referee runs as root, an unprivileged uid of its own per entrant, with no capabilities;
- resource limits (:class:`Limits`) on memory, processes, open files and file size.

A referee that is not root uses an unprivileged user namespace instead of a uid switch. Where bubblewrap
is missing or cannot work here, ``auto`` mode says so once and runs bots as plain processes (their own
process group, killed with the referee); ``required`` refuses to start. ``docs/SECURITY.md`` says what a
bot can and cannot do in each mode.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import util
from pathlib import Path
from typing import Final

SOCKET_INSIDE: Final = "/run/pyramid/referee.sock"
"""Where a sandboxed bot finds the referee's socket (``unix:`` plus this is its address)."""
HOME_INSIDE: Final = "/tmp/home"
SYSTEM_PATHS: Final = ("/usr", "/etc")
"""Read-only for every sandboxed bot: programs, libraries and system configuration."""
ROOT_LINKS: Final = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
BOT_UID_BASE: Final = 2_000_000
"""Uids the referee gives entrants when it runs as root: far above any real user's."""
BOT_UID_SPAN: Final = 1_000_000
SDK_PACKAGES: Final = ("pyramid_sdk", "sample_bots")
"""Packages of this distribution a Python bot may import; their folders are bound read-only."""
NODE_SDK: Final = Path("sdk/node")
"""Where a checkout keeps the Node.js SDK, relative to the folder that holds ``sample_bots``."""


class SandboxError(RuntimeError):
    """The sandbox is required but cannot run here; the message says why and what to install."""


class SandboxMode(enum.StrEnum):
    AUTO = "auto"
    """Use bubblewrap where it works here; otherwise say so once and run bots unsandboxed."""
    REQUIRED = "required"
    """Refuse to start a bot without the sandbox."""
    NONE = "none"
    """Plain processes: for trusted bots only (a bot can then read what the referee's user can)."""


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]i?B?|B)?\s*$", re.IGNORECASE)
_UNITS: Final = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def parse_size(value: object) -> int:
    """Bytes from ``512MiB``, ``1GiB``, ``64M``, ``4096`` (binary units).

    >>> parse_size("512MiB"), parse_size("1G"), parse_size(4096)
    (536870912, 1073741824, 4096)
    """
    if isinstance(value, bool):
        raise ValueError("expected a size like 512MiB or 1GiB")
    if isinstance(value, int):
        return value
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"expected a size like 512MiB or 1GiB, got {value!r}")
    unit = (match.group(2) or "").upper()[:1]
    return int(float(match.group(1)) * _UNITS[unit])


@dataclass(frozen=True, slots=True)
class Limits:
    """Per bot process (its threads and children share them). Enforced with setrlimit, so they hold in
    every mode; the sandbox adds the ``/tmp`` size."""

    memory: int = 2 * 1024**3
    """Bytes of data memory (RLIMIT_DATA: heap and private mappings, not reserved address space, which
    Node.js and gRPC reserve by the gigabyte)."""
    processes: int = 256
    """Processes and threads of the bot's uid (RLIMIT_NPROC); a fork bomb stops there."""
    open_files: int = 256
    """File descriptors per process (RLIMIT_NOFILE)."""
    file_size: int = 64 * 1024**2
    """The largest file it may write (RLIMIT_FSIZE); writing past it kills it with SIGXFSZ."""
    tmp: int = 256 * 1024**2
    """Size of its private ``/tmp`` (sandbox only)."""

    def prlimit_args(self, *, processes: bool = True) -> list[str]:
        args = [f"--data={self.memory}", f"--nofile={self.open_files}", f"--fsize={self.file_size}"]
        if processes:
            args.append(f"--nproc={self.processes}")
        return args

    def explain(self, returncode: int | None, last_output: str) -> str:
        """Which limit a process that ended like this most likely ran into, or ``""``.

        >>> Limits(file_size=8 * 1024**2).explain(128 + signal.SIGXFSZ, "")
        'the file size limit of 8 MiB'
        >>> Limits().explain(1, "MemoryError")
        'the memory limit of 2 GiB'
        """
        text = last_output.lower()
        if (returncode is not None and exit_signal(returncode) == signal.SIGXFSZ) or "file too large" in text:
            return f"the file size limit of {_human(self.file_size)}"
        if any(word in text for word in _OUT_OF_MEMORY):
            return f"the memory limit of {_human(self.memory)}"
        if "too many open files" in text:
            return f"the open files limit of {self.open_files}"
        if "resource temporarily unavailable" in text or "can't start new thread" in text:
            return f"the process limit of {self.processes}"
        if "no space left on device" in text:
            return f"the /tmp size limit of {_human(self.tmp)}"
        return ""


_OUT_OF_MEMORY: Final = ("memoryerror", "out of memory", "cannot allocate memory", "bad_alloc")


def exit_signal(returncode: int) -> int | None:
    """The signal that ended a process, from its exit code: Python reports it as ``-N``, and bubblewrap
    passes a sandboxed bot's death by signal N on as code ``128 + N``."""
    if returncode < 0:
        return -returncode
    if 128 < returncode < 128 + signal.NSIG:
        return returncode - 128
    return None


def _human(size: int) -> str:
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


@functools.cache
def bubblewrap_problem() -> str:
    """Why the sandbox cannot run on this machine, or ``""`` when it works (tried once per process)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing, so bots cannot get their own uid"
    probe = [bwrap, *_namespaces(), *_system_view(), "--", "/usr/bin/env", "true"]
    try:
        # In a session of its own: a Ctrl-C meanwhile is the referee's to handle, and must not kill the
        # probe and pass for "bubblewrap does not work".
        result = subprocess.run(probe, capture_output=True, timeout=20, check=False, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not run here: {exc}"
    if result.returncode != 0:
        words = result.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bubblewrap does not work here: {words[-1] if words else f'exit code {result.returncode}'}"
    return ""


def resolve_mode(mode: SandboxMode) -> bool:
    """Whether bots will be sandboxed: raises :class:`SandboxError` for ``required`` without bubblewrap."""
    if mode is SandboxMode.NONE:
        return False
    problem = bubblewrap_problem()
    if not problem:
        return True
    if mode is SandboxMode.REQUIRED:
        raise SandboxError(f"sandbox: required, but {problem}")
    _warn_once(f"sandbox: {problem}; bots run unsandboxed (see docs/SECURITY.md)")
    return False


@functools.cache
def _warn_once(text: str) -> None:
    print(f"warning: {text}", file=sys.stderr)


def namespace_args() -> list[str]:
    """bubblewrap's namespaces for anything untrusted it runs: a bot, or an uploaded bot's build."""
    return _namespaces()


def system_view_args() -> list[str]:
    """bubblewrap's read-only view of the system (``/usr``, ``/etc``, the root links, ``/proc``, ``/dev``)."""
    return _system_view()


def _namespaces() -> list[str]:
    args = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if os.geteuid() != 0:
        args.append("--unshare-user")
    return [*args, "--die-with-parent", "--new-session"]


def _system_view() -> list[str]:
    args: list[str] = []
    for path in SYSTEM_PATHS:
        if Path(path).is_dir():
            args += ["--ro-bind", path, path]
    for path in ROOT_LINKS:
        if Path(path).is_symlink():
            args += ["--symlink", os.readlink(path), path]
        elif Path(path).is_dir():
            args += ["--ro-bind", path, path]
    return [*args, "--proc", "/proc", "--dev", "/dev"]


@functools.cache
def python_paths() -> tuple[Path, ...]:
    """What a Python bot needs to see to run on the referee's interpreter with the SDK: the interpreter's
    installation, the virtual environment, and the SDK's own folders (an editable install keeps them in
    the checkout, which is not otherwise shown). A checkout's Node.js SDK (``sdk/node`` beside the
    sample bots) is shown too: the Node.js sample bot, ``python -m sample_bots.node_heuristic``, runs on
    it from any league's folder."""
    paths = {Path(sys.base_prefix), Path(sys.prefix)}
    for name in SDK_PACKAGES:
        spec = util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            locations = [Path(location) for location in spec.submodule_search_locations]
            paths.update(locations)
            if name == "sample_bots":
                paths.update(p.parent / NODE_SDK for p in locations if (p.parent / NODE_SDK).is_dir())
    return tuple(sorted(path.resolve() for path in paths if path.exists()))


def entrant_uid(name: str, taken: Iterable[int] = ()) -> int:
    """A stable uid for an entrant, distinct from ``taken``: the same entrant runs as the same uid in
    every match, and two entrants never share one."""
    digest = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
    uid = BOT_UID_BASE + digest % BOT_UID_SPAN
    used = set(taken)
    while uid in used:
        uid = BOT_UID_BASE + (uid - BOT_UID_BASE + 1) % BOT_UID_SPAN
    return uid


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    """Everything that decides one bot's sandbox, so that it can be built and inspected as a value."""

    command: tuple[str, ...]
    cwd: Path
    socket: Path
    """The referee's socket on the host; bound at :data:`SOCKET_INSIDE`."""
    visible: tuple[Path, ...] = ()
    """Read-only paths besides the system's: the entrant folder, its extra paths, the interpreter."""
    hidden: tuple[Path, ...] = ()
    """Paths masked where they lie inside a visible one: league folder, database, logs, other entrants."""
    uid: int | None = None
    """Run as this uid (the referee is root), or ``None`` (an unprivileged user namespace)."""
    limits: Limits = field(default_factory=Limits)

    def argv(self, bwrap: str = "bwrap") -> list[str]:
        """The whole command line: ``prlimit`` sets the limits, ``bwrap`` builds the view, and for root
        ``setpriv`` drops to the entrant's uid with no capabilities right before the bot runs."""
        roots = sorted({path.resolve() for path in (self.cwd, *self.visible)}, key=lambda p: len(p.parts))
        args = [bwrap, *_namespaces(), *_system_view()]
        args += ["--perms", "01777", "--size", str(self.limits.tmp), "--tmpfs", "/tmp"]
        args += ["--perms", "01777", "--dir", HOME_INSIDE, "--tmpfs", "/run"]
        args += ["--perms", "0755", "--dir", str(Path(SOCKET_INSIDE).parent)]
        args += ["--ro-bind", str(self.socket), SOCKET_INSIDE]
        made = {Path("/"), Path("/tmp"), Path("/run"), *(Path(p) for p in SYSTEM_PATHS)}
        for root in roots:
            for parent in reversed(root.parents):
                if parent not in made and not any(_inside(parent, m) for m in roots if m != root):
                    # Folders bwrap makes for a bind's destination are not readable by other uids.
                    args += ["--perms", "0755", "--dir", str(parent)]
                    made.add(parent)
            args += ["--ro-bind", str(root), str(root)]
            made.add(root)
        masked: list[Path] = []
        for path in sorted({p.resolve() for p in self.hidden}, key=lambda p: len(p.parts)):
            if not any(_inside(path, root) for root in roots) or any(_inside(path, m) for m in masked):
                continue  # not in view anyway
            if path.is_dir():
                if not any(_inside(root, path) for root in roots):
                    args += ["--tmpfs", str(path)]
                    masked.append(path)
                # else it holds what the bot must see: its secret files are listed one by one
            elif path.exists():
                args += ["--ro-bind", "/dev/null", str(path)]
        args += ["--chdir", str(self.cwd)]
        inner = list(self.command)
        if self.uid is not None:
            inner = [
                "setpriv",
                f"--reuid={self.uid}",
                f"--regid={self.uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
                *inner,
            ]
        return ["prlimit", *self.limits.prlimit_args(), "--", *args, "--", *inner]
