"""The watchdog: whatever way a referee process ends, even SIGKILL, no process it started outlives it.

The parent-death signals (``setpriv --pdeathsig`` on each bot process, bubblewrap's ``--die-with-parent``)
cover a running bot, but each is armed only *after* a fork, and so misses a parent that dies in between.
One such window cannot be closed from outside: bubblewrap clones its sandbox's first process (pid 1 of
the new PID namespace) and only arms that process's death signal after the outer bubblewrap has written
it an eventfd to go on. A referee SIGKILLed in that window kills the outer bubblewrap (its own death
signal); the clone is left blocked on the eventfd for ever, with parent pid 1 and no child. Seen in two
of four test-suite runs on two loaded cores; ``benchmarks/stress_sigkill.py`` reproduces it.

So each referee process that starts a bot starts one watchdog first: a small process in a session of its
own, holding the read end of a pipe whose write end only the referee holds. The kernel closes that end
whenever the referee ends, however it ends, so the watchdog wakes without any race; it then SIGKILLs
every live process whose environment carries the referee's random mark, which every bot process (and
anything it forks or clones before its first ``exec``) inherits from its start, until none is left.
A sandboxed process that changed its own environment after its start is still inside a sandbox whose
first process carries the mark, and dies with it; an unsandboxed bot is trusted (docs/SECURITY.md).

The same window opens while the referee lives, whenever it kills a bot whose sandbox is still being set
up (a run or a comparison that stops while a match is being seated): the clone, no longer in the bot's
process group (bubblewrap gives the sandbox a session of its own), is left running the bot with parent
pid 1. So every bot process also carries a mark of its own (:data:`BOT_VARIABLE`), and the launcher
sweeps it (:func:`sweep`) after it has killed a bot (``referee.match.launcher``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import sys
import time
from pathlib import Path
from typing import Final

VARIABLE: Final = "PYRAMID_REFEREE_MARK"
"""The environment variable that marks every process a referee process started (not a secret)."""
BOT_VARIABLE: Final = "PYRAMID_BOT_MARK"
"""The environment variable that marks every process of one bot process's start (not a secret)."""
SWEEP_LIMIT: Final = 10.0
"""Seconds the watchdog goes on killing marked processes that are still being born."""

_watching: dict[int, tuple[str, int, int]] = {}
"""Per referee process id: its mark, its end of the pipe, and its watchdog's pid (never waited for: it
outlives the referee)."""


def environment() -> dict[str, str]:
    """The mark of this referee process, for a bot's environment; starts the watchdog the first time
    (and again in a process forked from a referee: it needs its own)."""
    if sys.platform != "linux":
        return {}  # it finds the marked processes in /proc
    here = os.getpid()
    if here not in _watching:
        for _, inherited, _ in _watching.values():
            with contextlib.suppress(OSError):
                os.close(inherited)  # a parent's: its watchdog must not wait for this process too
        _watching.clear()
        mark = secrets.token_hex(16)
        read_end, write_end = os.pipe()  # neither is inherited by the bots (non-inheritable by default)
        try:
            # posix_spawn, not subprocess.Popen: the watchdog outlives the referee and is never waited
            # for, and a Popen object would say so as a ResourceWarning when the interpreter ends.
            watchdog = os.posix_spawn(
                sys.executable,
                [sys.executable, "-m", __name__, mark],
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, read_end, 0),
                    (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                ],
                setsid=True,  # a Ctrl-C to the referee's process group must not stop it
            )
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        _watching[here] = (mark, write_end, watchdog)
    return {VARIABLE: _watching[here][0]}


def marked(mark: str, variable: str = VARIABLE) -> list[int]:
    """Live processes whose environment holds ``variable=mark`` (a zombie's environment reads empty)."""
    entry = f"{variable}={mark}".encode()
    return [
        int(name)
        for name in os.listdir("/proc")
        if name.isdigit() and int(name) != os.getpid() and _carries(int(name), entry)
    ]


def _carries(pid: int, entry: bytes) -> bool:
    try:
        return entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _kill(pid: int, entry: bytes) -> None:
    """SIGKILLs ``pid`` if it still carries ``entry``: the process is pinned by a pidfd first and its
    environment read again, so a pid freed and reused since the scan is never hit."""
    with contextlib.suppress(OSError):
        handle = os.pidfd_open(pid)
        try:
            if _carries(pid, entry):
                signal.pidfd_send_signal(handle, signal.SIGKILL)
        finally:
            os.close(handle)


def sweep(mark: str, limit: float = SWEEP_LIMIT, variable: str = VARIABLE) -> int:
    """SIGKILLs the processes marked ``variable=mark`` until two scans in a row find none (a process
    killed while forking may still have brought a child into the world), or for ``limit`` seconds;
    returns how many it found."""
    entry = f"{variable}={mark}".encode()
    deadline = time.monotonic() + limit
    quiet = killed = 0
    while quiet < 2 and time.monotonic() < deadline:
        found = marked(mark, variable)
        for pid in found:
            _kill(pid, entry)
        killed += len(found)
        quiet = 0 if found else quiet + 1
        time.sleep(0.02)
    return killed


def main() -> None:
    """``python -m referee.match.watchdog MARK``: waits for the end of standard input, then sweeps."""
    os.chdir("/")  # it holds no folder of the referee's busy
    for number in (signal.SIGINT, signal.SIGHUP):  # a terminal's, meant for the referee
        signal.signal(number, signal.SIG_IGN)
    while os.read(0, 4096):
        pass
    sweep(sys.argv[1])


if __name__ == "__main__":
    main()
