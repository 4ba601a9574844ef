"""Sets up one table: a server, the bots' processes or objects, and the seats that play a match.

Shared by ``referee match`` and the tests, so both go through the same launcher and server code.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from referee.launcher import BotSpec, Launcher
from referee.match_runner import LocalSeat, RemoteSeat, Seat
from referee.server import create_server
from referee.sessions import SessionRegistry


@contextlib.asynccontextmanager
async def open_table(
    specs: Sequence[BotSpec], log_dir: Path | None = None, taps: Sequence[object] | None = None
) -> AsyncIterator[list[Seat]]:
    """Seats for ``specs`` in order; every process started here is stopped when the block ends."""
    registry = SessionRegistry()
    server, port = await create_server(registry)
    try:
        async with Launcher(registry, f"127.0.0.1:{port}", log_dir) as launcher:
            seats: list[Seat] = []
            for index, spec in enumerate(specs):
                if spec.module:
                    seats.append(LocalSeat(spec.load(), spec.name))
                else:
                    process = await launcher.start(spec)
                    assert process.session is not None
                    tap = taps[index] if taps else None
                    seats.append(RemoteSeat(process.session, spec.name, tap))  # type: ignore[arg-type]
            yield seats
    finally:
        await server.stop(grace=1.0)
