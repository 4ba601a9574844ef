"""Loopback ports for the servers the tests and the benchmarks start."""

from __future__ import annotations

import socket


def free_port(host: str = "127.0.0.1") -> int:
    """A port on ``host`` that nothing listens on now: the kernel's pick, released at once for the
    server about to bind it."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
