"""Sets up one table: a server, the bots' processes or objects, and the seats that play a match.

Shared by ``referee match``, ``referee check``, the tournament and the tests, so all go through the same
launcher and server code.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from pyramid_sdk.v1 import pyramid_pb2 as pb
from referee.match.bots import BotSpec, BotSpecError
from referee.match.launcher import CONNECT_TIMEOUT, BotProcess, Confinement, Launcher, RemoteSource
from referee.match.runner import AbsentSeat, LocalSeat, RemoteSeat, Seat
from referee.match.server import HELLO_TIMEOUT, create_server
from referee.match.sessions import SessionRegistry, clean_name

Tap = Callable[[pb.ConnectResponse], None]


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
    """Seats for ``specs`` in order; every process started here is stopped when the block ends.

    A bot that cannot start or connect raises :class:`BotSpecError`, or with ``absent_ok`` takes its seat
    as an :class:`AbsentSeat` that forfeits (a tournament goes on without it).
    """
    async with open_launcher(log_dir, confinement, hello_timeout) as launcher:
        yield await take_seats(launcher, specs, taps, absent_ok, connect_timeout)


def own_name(seat: Seat) -> str:
    """The name a seated bot gives itself, cleaned (its hello's ``bot_name``, an in-process bot's
    ``name``); empty for a seat whose bot is absent or gives none."""
    if isinstance(seat, RemoteSeat):
        return clean_name(seat.session.bot_name)
    if isinstance(seat, LocalSeat):
        return clean_name(str(seat.bot.name))
    return ""


async def take_seats(
    launcher: Launcher,
    specs: Sequence[BotSpec],
    taps: Sequence[Tap | None] | None = None,
    absent_ok: bool = False,
    connect_timeout: float = CONNECT_TIMEOUT,
    processes: list[BotProcess] | None = None,
) -> list[Seat]:
    """Seats for ``specs``, their processes started all at once: a fresh process per command bot, a fresh
    object per in-process bot, and the connection of each remote entrant (claimed together).
    ``processes``, if given, receives every process started, even when another fails to: a caller that
    plays several matches at once on one launcher stops each match's own when it ends."""
    remote = [spec for spec in specs if spec.remote]
    claimed: list[BotProcess | BaseException] = []
    if remote:  # all at once, so that two tables never each hold one entrant the other waits for
        try:
            claimed = list(await launcher.claim(remote))
        except BotSpecError as exc:
            claimed = [exc] * len(remote)
    starts = [launcher.start(spec, connect_timeout) for spec in specs if not spec.module and not spec.remote]
    results = await asyncio.gather(*starts, return_exceptions=True)
    if processes is not None:
        processes.extend(result for result in [*claimed, *results] if isinstance(result, BotProcess))
    local, connections = iter(results), iter(claimed)
    started = (next(connections) if spec.remote else next(local) for spec in specs if not spec.module)
    seats: list[Seat] = []
    for index, spec in enumerate(specs):
        if spec.module:
            seats.append(LocalSeat(spec.load(), spec.name))
            continue
        process = next(started)
        if isinstance(process, BaseException):
            if not absent_ok or not isinstance(process, BotSpecError):
                raise process
            seats.append(AbsentSeat(spec.name, str(process)))
            continue
        assert process.session is not None
        tap = taps[index] if taps else None
        seats.append(RemoteSeat(process.session, spec.name, tap, process.exit_words))
    return seats
