"""An uploaded bot's build step, run inside the sandbox: as untrusted as the bot it builds.

A league file's ``build:`` is the organiser's own step and runs as the referee's user; an upload's
``build:`` comes from a stranger, so it runs under bubblewrap like a bot (:mod:`referee.match.sandbox`),
with:

- no network (``--unshare-net``) and its own PID, IPC and UTS namespaces: every process it forks dies
  when the build ends (the namespace's init goes, and the kernel kills the rest), and a sweep by its mark
  checks that none is left;
- a read-only view of the system and of the arena's Python (with the SDK) and Node.js; its own upload
  folder the one place it may write, besides a private, size-capped ``/tmp``; nothing else of the
  machine: not the league's folder, not its results, not the rest of the home;
- where the referee runs as root, a uid of its own with no capabilities (the folder is handed to that uid
  for the build, and back to root, read-only for others, after it);
- limits: time (:attr:`BuildLimits.seconds`, then the whole sandbox is killed), data memory, processes,
  open files, file size, and the folder's size, watched while it runs and checked after it.
"""

from __future__ import annotations

import contextlib
import enum
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from referee.match.sandbox import (
    Limits,
    bubblewrap_problem,
    entrant_uid,
    namespace_args,
    python_paths,
    system_view_args,
)
from referee.match.watchdog import sweep
from referee.uploads.errors import UploadError

BUILD_VARIABLE: Final = "PYRAMID_BUILD_MARK"
"""Every process of a build carries this mark in its environment, so that a sweep finds them all."""
HOME_INSIDE: Final = "/tmp/home"
WATCH_EVERY: Final = 0.25
"""Seconds between two looks at the folder's size while a build runs."""


@dataclass(frozen=True, slots=True)
class BuildLimits:
    """What one uploaded build may use (docs/LEAGUE.md, "Uploading a bot")."""

    seconds: float = 300.0
    disk: int = 256 * 1024**2
    """Bytes of the upload folder after the build (its files and folders)."""
    files: int = 20_000
    process: Limits = field(
        default_factory=lambda: Limits(
            memory=2 * 1024**3, processes=256, open_files=1024, file_size=128 * 1024**2
        )
    )


DEFAULT_LIMITS: Final = BuildLimits()


class BuildStatus(enum.StrEnum):
    OK = "ok"
    FAILED = "failed"
    """The build's command exited with a code other than 0."""
    TIMED_OUT = "timed out"
    TOO_BIG = "too big"
    """The folder outgrew :attr:`BuildLimits.disk` or :attr:`BuildLimits.files`."""
    UNSAFE = "unsafe"
    """It left a link that reaches outside the folder (a symlink out, or a hard link)."""


@dataclass(frozen=True, slots=True)
class BuildOutcome:
    status: BuildStatus
    detail: str = ""
    seconds: float = 0.0
    leftovers: int = 0
    """Processes of the build still alive after it ended, killed by the sweep (the PID namespace should
    leave none)."""

    @property
    def ok(self) -> bool:
        return self.status is BuildStatus.OK


def require_sandbox() -> None:
    """Uploads need bubblewrap: without it, :class:`UploadError` in one line."""
    problem = bubblewrap_problem()
    if problem:
        raise UploadError(
            f"uploads are refused here: {problem}; an upload is built and run in the sandbox only"
        )


def build_argv(folder: Path, command: str, uid: int | None, limits: BuildLimits) -> list[str]:
    """The whole command line of a build: prlimit, then bubblewrap with the folder the one writable bind,
    then (for root) setpriv to the build's uid, then ``/bin/sh -c command`` in the folder."""
    folder = folder.resolve()
    args = [shutil.which("bwrap") or "bwrap", *namespace_args(), *system_view_args()]
    args += ["--perms", "01777", "--size", str(limits.process.tmp), "--tmpfs", "/tmp"]
    args += ["--perms", "01777", "--dir", HOME_INSIDE, "--tmpfs", "/run"]
    made = {Path("/"), Path("/tmp"), Path("/run"), Path("/usr"), Path("/etc")}
    readable = [path for path in python_paths() if not _inside(folder, path) and not _inside(path, folder)]
    binds = sorted(
        [*((path, "--ro-bind") for path in readable), (folder, "--bind")], key=lambda b: len(b[0].parts)
    )
    for root, how in binds:
        for parent in reversed(root.parents):
            if parent not in made and not any(_inside(parent, other) for other, _ in binds if other != root):
                # Folders bwrap makes for a bind's destination are not readable by other uids.
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        args += [how, str(root), str(root)]
        made.add(root)
    args += ["--chdir", str(folder)]
    inner = ["/bin/sh", "-c", command]
    if uid is not None:
        inner = [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
            *inner,
        ]
    return ["prlimit", *limits.process.prlimit_args(), "--", *args, "--", *inner]


def build(
    folder: Path, command: str, entrant: str, log: Path, limits: BuildLimits = DEFAULT_LIMITS
) -> BuildOutcome:
    """Runs ``command`` (the manifest's ``build:``) in ``folder`` inside the sandbox; its output goes to
    ``log``. However it ends, no process of it is left, and the folder is read-only to the bot after."""
    require_sandbox()
    folder = folder.resolve()
    uid = entrant_uid(f"build {entrant}") if os.geteuid() == 0 else None
    if uid is not None:
        _own(folder, uid)
    mark = secrets.token_hex(8)
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": HOME_INSIDE,
        "TMPDIR": "/tmp",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        BUILD_VARIABLE: mark,
        **{key: os.environ[key] for key in ("LANG", "LC_ALL", "TZ") if key in os.environ},
    }
    setpriv = shutil.which("setpriv")
    death = [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []
    started = time.monotonic()
    status, detail = BuildStatus.OK, ""
    code: int | None = None
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*death, *build_argv(folder, command, uid, limits)],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            while True:
                try:
                    code = process.wait(WATCH_EVERY)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if time.monotonic() - started > limits.seconds:
                    status, detail = BuildStatus.TIMED_OUT, f"took over {limits.seconds:g}s"
                    break
                problem = _too_big(folder, limits)
                if problem:
                    status, detail = BuildStatus.TOO_BIG, problem
                    break
        finally:
            if process.returncode is None:
                _kill_group(process.pid)
                process.wait()
            _kill_group(process.pid)
    leftovers = sweep(mark, 2.0, BUILD_VARIABLE)
    seconds = time.monotonic() - started
    if status is BuildStatus.OK and code != 0:
        status, detail = BuildStatus.FAILED, f"exited with code {code}"
    if status is BuildStatus.OK:
        problem = _too_big(folder, limits)
        if problem:
            status, detail = BuildStatus.TOO_BIG, problem
    unsafe = _links_out(folder)
    if unsafe:
        status, detail = BuildStatus.UNSAFE, unsafe
    else:
        seal(folder)
    return BuildOutcome(status, detail, seconds, leftovers)


def seal(folder: Path) -> None:
    """Gives the folder back to the referee's user, readable by every uid (a sandboxed bot runs as one of
    its own) and writable by none other: nothing of the build can change the bot after its check."""
    for path in [folder, *folder.rglob("*")]:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            if os.geteuid() == 0:
                os.lchown(path, 0, 0)
            continue
        if os.geteuid() == 0:
            os.lchown(path, 0, 0)
        keep = stat.S_IMODE(info.st_mode) & 0o755
        wanted = keep | 0o644 | (0o111 if stat.S_ISDIR(info.st_mode) or keep & 0o100 else 0)
        os.chmod(path, wanted & ~0o022, follow_symlinks=False)


def _own(folder: Path, uid: int) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.lchown(path, uid, uid)


def _too_big(folder: Path, limits: BuildLimits) -> str:
    total = count = 0
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            count += 1
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                continue
        if total > limits.disk:
            return f"the folder grew over the disk limit of {limits.disk // 1024**2} MiB"
        if count > limits.files:
            return f"the folder holds over {limits.files} files and folders"
    return ""


def _links_out(folder: Path) -> str:
    """A link the build left that reaches out of ``folder``, described, or ``""``."""
    for path in folder.rglob("*"):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            target = (path.parent / os.readlink(path)).resolve()
            if not _inside(target, folder):
                return f"it left a symlink out: {path.relative_to(folder)} -> {os.readlink(path)}"
        elif not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1:
            return f"it left a hard link: {path.relative_to(folder)}"
        elif not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            return f"it left a special file: {path.relative_to(folder)}"
    return ""


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
