"""One ``referee run`` at a time per results database: an exclusive ``flock`` on ``<database>.lock``.

Two runs of one league would each play every missing match (the results stay right, since a match is
stored whole and the second copy replaces the first, but the work doubles and the machine is shared by
twice the bots, whose clocks suffer). So a run holds this lock from before it opens the database until
it ends, whichever driver plays (the Dask client is the only writer, and it is this process).

The kernel drops an ``flock`` when its holder dies, however it dies: a lock file left by a killed run
blocks nobody. The holder writes its pid and its command (``referee run``, ``referee serve``) into the
file, so that the run it blocks can name it. A run that
ends removes the file, while it still holds the lock; a run that finds it has locked a file that is no
longer at the path (removed by the holder between its ``open`` and its ``flock``) tries again.

The lock lives beside the database, on the same file system, so every run of the league meets it; on a
network file system ``flock`` holds between machines only where that file system supports it (NFS does
on Linux).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from pathlib import Path
from typing import Final

from referee.league.location import lock_path
from referee.results.errors import StoreError

PID_WAIT: Final = 1.0
"""Seconds a blocked run waits for the holder to write its pid (it writes it right after locking)."""


class LeagueBusyError(StoreError):
    """Another live process holds the league's results database (``pid`` and ``command``, if they could
    be read): the message names what holds it."""

    def __init__(self, database: Path, pid: int | None, command: str | None = None) -> None:
        self.database = database
        self.pid = pid
        self.command = command
        at = f" (pid {pid})" if pid else ""
        stop = f"stop it (kill {pid})" if pid else "stop it"
        if command == SERVE:
            holder, wait = f"`referee serve`{at}", "it serves the league until it is stopped"
        elif command in (RUN, None):  # a lock file of a referee that wrote no command was a run's
            holder, wait = f"another `referee run`{at}", "let it finish"
        else:
            holder, wait = f"another process, `{command}`{at},", "let it finish"
        super().__init__(
            f"{database}: {holder} is playing this league and holds its results; {wait}, or {stop} and "
            "run again: it resumes"
        )


RUN: Final = "referee run"
SERVE: Final = "referee serve"


def this_command() -> str:
    """What this process is, as its user started it: ``referee run`` or ``referee serve`` for the CLI,
    else its program and first argument (a script that plays a league through the library)."""
    argv = sys.argv
    program = Path(argv[0]).name if argv and argv[0] else "python"
    if program in ("referee", "__main__.py") and len(argv) > 1:
        return f"referee {argv[1]}"
    return " ".join([program, *argv[1:2]])[:80]


class RunLock:
    """The exclusive lock of one results database, held from :meth:`take` until :meth:`release`."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def take(cls, database: Path) -> RunLock:
        """Locks ``database`` for this process, or raises :class:`LeagueBusyError` naming the live holder;
        an :class:`OSError` if the lock file cannot be made (a read-only folder, say)."""
        path = lock_path(database)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid, command = _holder(fd)
                os.close(fd)
                raise LeagueBusyError(database, pid, command) from None
            except BaseException:
                os.close(fd)
                raise
            try:
                current = os.stat(path).st_ino
            except FileNotFoundError:
                current = None
            if current == os.fstat(fd).st_ino:
                break
            os.close(fd)  # locked a file its holder had just removed: take the one at the path now
        with contextlib.suppress(OSError):  # a full disk may refuse even these bytes; the lock holds
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n{this_command()}\n".encode(), 0)
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Removes the lock file and unlocks; a second call does nothing."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == os.fstat(self._fd).st_ino:
                self.path.unlink()
        os.close(self._fd)  # closing the last descriptor of the file drops the flock
        self._fd = None


def check_free(database: Path) -> None:
    """Raises :class:`LeagueBusyError` if another live process holds ``database`` now, so that a run
    says so before it checks options that would not matter while it is held; takes the lock for a
    moment only (the run takes it for good when it opens the database). Nothing is made if the
    database's folder does not exist yet."""
    if not database.parent.is_dir():
        return
    try:
        lock = RunLock.take(database)
    except OSError:  # a folder it cannot write: the run's own opening says so
        return
    lock.release()


def _holder(fd: int) -> tuple[int | None, str | None]:
    """The pid and the command the holder wrote into the lock file, waiting briefly for them."""
    deadline = time.monotonic() + PID_WAIT
    while True:
        pid, _, rest = os.pread(fd, 256, 0).decode("utf-8", "replace").partition("\n")
        command = rest.partition("\n")[0].strip() or None
        if pid.strip().isdigit():
            return int(pid), command
        if time.monotonic() > deadline:
            return None, None
        time.sleep(0.05)
