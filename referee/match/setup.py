"""Sets up a referee: a server on a private Unix socket and the launcher whose bots reach it; and, for
the tests and the protocol benchmark, a table of seats kept for several matches (:func:`open_table`).

Every match player opens its referee here, so all go through the same launcher and server code; the
seats of a match are taken by :func:`referee.match.arbiter.take_seats`, the one seat-taker.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from referee.match.arbiter import Lineup, Tap, take_seats
from referee.match.bots import BotSpec, BotSpecError
from referee.match.launcher import CONNECT_TIMEOUT, Confinement, Launcher, RemoteSource
from referee.match.playing import Seat
from referee.match.server import HELLO_TIMEOUT, create_server
from referee.match.sessions import SessionRegistry


@contextlib.asynccontextmanager
async def open_launcher(
    log_dir: Path | None = None,
    confinement: Confinement | None = None,
    hello_timeout: float = HELLO_TIMEOUT,
    remote: RemoteSource | None = None,
) -> AsyncIterator[Launcher]:
    """A referee server on a Unix socket in a private folder, and a launcher whose bots reach it there
    (and whose remote entrants come from ``remote``, a lobby); the server, the folder and every process
    started are gone when the block ends."""
    registry = SessionRegistry()
    folder = Path(tempfile.mkdtemp(prefix="pyramid-referee-"))
    socket = folder / "referee.sock"
    try:
        launcher = Launcher(registry, socket, log_dir, confinement)
        launcher.remote = remote
        server, _ = await create_server(registry, f"unix:{socket}", hello_timeout=hello_timeout)
        try:
            async with launcher:
                yield launcher
        finally:
            await server.stop(grace=1.0)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.asynccontextmanager
async def open_table(
    specs: Sequence[BotSpec],
    log_dir: Path | None = None,
    taps: Sequence[Tap | None] | None = None,
    absent_ok: bool = False,
    hello_timeout: float = HELLO_TIMEOUT,
    connect_timeout: float = CONNECT_TIMEOUT,
    confinement: Confinement | None = None,
) -> AsyncIterator[list[Seat]]:
    """Seats for ``specs`` in order, taken as a table takes them; every process started here is stopped
    when the block ends. The seats are the caller's to play as many matches with as it likes (a test
    of what a connection carries from one match to the next, the protocol benchmark).

    A bot that cannot start or connect raises :class:`BotSpecError`, or with ``absent_ok`` takes its seat
    as an :class:`~referee.match.playing.AbsentSeat` that forfeits.
    """
    async with open_launcher(log_dir, confinement, hello_timeout) as launcher:
        lineup = Lineup()
        await take_seats(launcher, specs, lineup, taps, connect_timeout)
        if lineup.failed is not None and not (absent_ok and len(lineup.seats) == len(specs)):
            raise BotSpecError(lineup.failed.reason)
        yield lineup.seats
