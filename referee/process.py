"""What the referee sets for its own process before it plays: room for open files, and gRPC's own log
lines kept out of its output.

Both are called by the command line (``referee.cli``) before anything loads gRPC, and both are
idempotent, so the library's users and the tests may call them again.
"""

from __future__ import annotations

import os
import resource
import sys
from typing import Final

GRPC_VERBOSITY: Final = "GRPC_VERBOSITY"
MOST_OPEN_FILES: Final = 1 << 20
"""The soft open-file limit the referee raises itself to at most, when the hard limit is unlimited."""


def raise_open_files() -> int:
    """Raises this process's soft open-file limit to its hard limit (the kernel allows it without
    privileges): a common soft limit of 1,024 is spent by a few hundred connections and the bots'
    pipes, and a referee out of descriptors cannot read its own files. Bots get their own limit
    (``limits: open_files``). Returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = MOST_OPEN_FILES if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError):  # a platform that caps it lower (macOS): keep what there is
            return soft
        return wanted
    return soft


def quiet_grpc(level: str) -> None:
    """Keeps gRPC's C-core from printing its own lines (a failed TLS handshake of every stranger, a
    GOAWAY) on the referee's stderr, unless the referee's log level is ``debug``: then gRPC logs at
    INFO. gRPC reads ``GRPC_VERBOSITY`` once, while it loads, so this loads it now, with the variable
    set, and removes the variable again, so that the bots the referee starts inherit the environment it
    was given. Nothing changes when gRPC is loaded already or the user set ``GRPC_VERBOSITY``."""
    if "grpc" in sys.modules or GRPC_VERBOSITY in os.environ:
        return
    os.environ[GRPC_VERBOSITY] = "INFO" if level == "debug" else "NONE"
    try:
        from pyramid_sdk import transport  # noqa: PLC0415  (it must switch gRPC's I/O first)

        transport.configure()
        import grpc  # noqa: F401, PLC0415  (the import is the point: gRPC reads the variable now)
    finally:
        del os.environ[GRPC_VERBOSITY]
