"""The processes a test session starts, found by the mark they inherit: bot processes and Dask workers
left behind are a test's failure, and must not become the next test's.

Importing this module marks the session (``PYRAMID_TEST_RUN`` in this process's environment), so it is
imported by the tests' conftest.py before any test starts a process."""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

# Every process started by this test session inherits this mark, so the leak check sees our bots only
# (other sessions on the machine may run bots too), including bots whose referee was killed.
RUN_MARK = f"PYRAMID_TEST_RUN={uuid.uuid4().hex}"
os.environ["PYRAMID_TEST_RUN"] = RUN_MARK.split("=", 1)[1]

Found = TypeVar("Found")


def _marked(kind: Callable[[list[bytes], str], bool]) -> list[str]:
    """``pid: command line`` of every live (not zombie) process of this session, other than this one,
    whose environment items and command line ``kind`` accepts."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            status = Path(f"/proc/{pid}/status").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if RUN_MARK.encode() in environ and "\nState:\tZ" not in status and kind(environ, cmdline):
            found.append(f"{pid}: {cmdline}")
    return found


def bot_processes() -> list[str]:
    """Command lines of live bot processes started by this test session (they hold a token's fd)."""
    return _marked(lambda environ, _: any(item.startswith(b"PYRAMID_TOKEN_FD=") for item in environ))


def worker_processes() -> list[str]:
    """Dask worker processes started by this test session (they inherit its mark)."""
    return _marked(lambda _, cmdline: "spawn_main" in cmdline)


def stop_bot_processes(found: Sequence[str]) -> None:
    """SIGKILLs the bot processes ``found`` lists (as :func:`bot_processes` gives them): a test that left
    them behind has failed for it, and the tests after it must not fail for the same processes."""
    for line in found:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)


def settle(check: Callable[[], Found], seconds: float = 10.0) -> Found:
    """What ``check`` finds once it finds nothing, or after ``seconds``: processes take a moment to end
    after whatever stopped them."""
    deadline = time.monotonic() + seconds
    while check() and time.monotonic() < deadline:
        time.sleep(0.1)
    return check()
