"""Sets up one table: a server, the bots' processes or objects, and the seats that play a match.

Shared by ``referee match`` and the tests, so both go through the same launcher and server code.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from pyramid_sdk.v1 import pyramid_pb2 as pb
from referee.launcher import CONNECT_TIMEOUT, BotSpec, BotSpecError, Launcher
from referee.match_runner import AbsentSeat, LocalSeat, RemoteSeat, Seat
from referee.server import HELLO_TIMEOUT, create_server
from referee.sessions import SessionRegistry

Tap = Callable[[pb.ConnectResponse], None]


@contextlib.asynccontextmanager
async def open_table(
    specs: Sequence[BotSpec],
    log_dir: Path | None = None,
    taps: Sequence[Tap | None] | None = None,
    absent_ok: bool = False,
    hello_timeout: float = HELLO_TIMEOUT,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> AsyncIterator[list[Seat]]:
    """Seats for ``specs`` in order; every process started here is stopped when the block ends.

    A bot that cannot start or connect raises :class:`BotSpecError`, or with ``absent_ok`` takes its seat
    as an :class:`AbsentSeat` that forfeits (a tournament goes on without it).
    """
    registry = SessionRegistry()
    server, port = await create_server(registry, hello_timeout=hello_timeout)
    try:
        async with Launcher(registry, f"127.0.0.1:{port}", log_dir) as launcher:
            seats: list[Seat] = []
            for index, spec in enumerate(specs):
                if spec.module:
                    seats.append(LocalSeat(spec.load(), spec.name))
                    continue
                try:
                    process = await launcher.start(spec, connect_timeout)
                except BotSpecError as exc:
                    if not absent_ok:
                        raise
                    seats.append(AbsentSeat(spec.name, str(exc)))
                    continue
                assert process.session is not None
                tap = taps[index] if taps else None
                seats.append(RemoteSeat(process.session, spec.name, tap, process.exit_words))
            yield seats
    finally:
        await server.stop(grace=1.0)
