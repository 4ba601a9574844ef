"""The process of ``referee serve``: the league driver and uvicorn's server on one event loop, and the
way both stop together (Ctrl-C, SIGTERM): the event streams end, the server closes within a few seconds,
the match in play is cancelled and its bots stopped. A cancelled match is not stored: the next run plays
it. Every stored match stays stored. With remote entrants, their door is open for the process's whole
life: opened once the league is held, closed after the league stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import signal
import socket
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import IO, Any, Final

import click
import uvicorn

from referee.remote.settings import RemoteSettingsError
from referee.results.errors import StoreError
from referee.results.lock import LeagueBusyError
from referee.run.driver import ClusterError
from referee.run.entry import Entry, EntryMode
from referee.run.remote_entrants import OpenDoor
from referee.run.serve_driver import ClusterSettings, ServeDriver
from referee.web.app import create_app
from referee.web.events import Hub
from referee.web.hosts import allowed, shown
from referee.web.human import HumanMatches
from referee.web.limits import Connections, capped_protocol
from referee.web.practice import Practice
from referee.web.readers import Answers, Readers, ReadFailed
from referee.web.site import LiveSite

LOGGER = logging.getLogger(__name__)
EXIT_BUSY: Final = 5
"""As for ``referee run``: another run or serve holds the league."""
EXIT_STORAGE: Final = 6
"""As for ``referee run``: the results database is busy, damaged or cannot be written."""


class _Server(uvicorn.Server):
    """uvicorn's server, leaving the signals to ``referee serve``, which stops the driver too."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound here so that a taken port is one line before anything starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


async def serve_forever(
    league_file: Path,
    host: str,
    port: int,
    door: OpenDoor | None = None,
    fresh: bool = False,
    public: Sequence[str] = (),
    log: IO[Any] | None = None,
    cluster: ClusterSettings | None = None,
    entry: EntryMode = EntryMode.CLOSED,
) -> int:
    """Runs until a signal or a failure of the league; the exit status. ``door``: the door of the
    league's remote entrants, which the driver opens once it holds the league (a second serve of a busy
    league names the holder, exit 5, and admits no bot) and which is closed when serve stops (its bots
    told CANCELLED: they wait for the referee to come back), what its lobby saw of each connection added
    to the league's record. ``fresh``: the league's stored results are forgotten when it is first opened,
    as ``referee run --fresh`` forgets them (a copy kept beside them). ``public``: the host names the
    server is reached by besides its address (``--public-host``); ``log``: where the reader processes'
    own output goes; ``cluster``: the Dask cluster the matches without remote seats are played on;
    ``entry``: who may enter a remote entrant by themselves (``--entry``, docs/REMOTE.md)."""
    try:
        sock = listen(host, port)
    except OSError as exc:
        click.echo(
            f"serve: cannot listen on {host}:{port}: {exc.strerror or exc}; try --http {host}:PORT", err=True
        )
        return 1
    readers = Readers(log=log)
    try:
        await readers.start()
        return await _serve(league_file, host, sock, door, fresh, public, readers, cluster, entry)
    except ReadFailed as exc:
        click.echo(f"serve: {exc}", err=True)
        return 1
    finally:
        sock.close()
        await readers.close()
        if door is not None:
            await door.close(stopped=True)
            for refusal in door.new_refusals():
                LOGGER.warning("remote door: refused: %s", refusal)


async def _serve(
    league_file: Path,
    host: str,
    sock: socket.socket,
    door: OpenDoor | None,
    fresh: bool,
    public: Sequence[str],
    readers: Readers,
    cluster: ClusterSettings | None = None,
    entry: EntryMode = EntryMode.CLOSED,
) -> int:
    hub = Hub()
    site = LiveSite(hub)
    driver = ServeDriver(league_file, hub, on_stored=site.stale, door=door, fresh=fresh, cluster=cluster)
    tables = HumanMatches()
    practice = Practice()
    connections = Connections()
    hosts = allowed(host, public)
    entrance = Entry(driver.league_file, entry, driver.take_in)
    app = create_app(
        driver, hub, site, Answers(readers), tables, hosts, connections, practice=practice, entrance=entrance
    )
    config = uvicorn.Config(
        app,
        log_level="warning",
        timeout_graceful_shutdown=3,
        lifespan="off",
        http=capped_protocol(connections),
        proxy_headers=False,  # the client's address is its socket's: a header would let it pick one
    )
    server = _Server(config)
    playing = asyncio.create_task(driver.run())
    serving = asyncio.create_task(server.serve(sockets=[sock]))

    def stop() -> None:
        hub.close()
        server.should_exit = True
        if not playing.cancelling():  # once: a second cancel would cut short the stopping of the bots
            playing.cancel()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    port = sock.getsockname()[1]
    click.echo(f"serve: {league_file} at http://{shown(host)}:{port}/ (Ctrl-C stops it)")
    if entrance.is_open:
        click.echo(
            f"serve: entry {'by invite' if entry is EntryMode.INVITE else 'open to all'} at http://{shown(host)}:{port}/enter"
        )
    hint = public_hint(host, public)
    if hint:
        click.echo(f"serve: {hint}")
    await asyncio.wait({playing, serving}, return_when=asyncio.FIRST_COMPLETED)
    stop()
    await tables.close()
    await practice.close()
    results = await asyncio.gather(playing, serving, return_exceptions=True)
    await site.close()
    return _ending(results[0], driver.played)


def public_hint(host: str, public: Sequence[str]) -> str:
    """The line that says how to name the public host: for a server bound to an address other than
    loopback and given no ``--public-host``; else nothing.

    >>> public_hint("127.0.0.2", []), public_hint("10.0.0.5", ["arena.example.org"])
    ('', '')
    >>> public_hint("10.0.0.5", [])
    'only requests for 10.0.0.5 are answered: to serve under a host name, add --public-host NAME (repeatable)'
    """
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:  # bound to a name: requests for that name are answered
        return ""
    if public or ip.is_loopback:
        return ""
    which = "an address of this machine" if ip.is_unspecified else shown(host)
    return (
        f"only requests for {which} are answered: to serve under a host name, "
        "add --public-host NAME (repeatable)"
    )


def _ending(failure: object, played: int) -> int:
    """The last line and the exit status: 0 after a signal, as ``referee run``'s codes after a failure."""
    if isinstance(failure, LeagueBusyError):
        click.echo(f"serve: {failure}", err=True)
        return EXIT_BUSY
    if isinstance(failure, RemoteSettingsError | ClusterError):  # the door could not open, the cluster
        click.echo(f"serve: {failure}", err=True)
        return 1
    if isinstance(failure, StoreError):
        click.echo(f"serve: {failure}", err=True)
        return EXIT_STORAGE
    if isinstance(failure, BaseException) and not isinstance(failure, asyncio.CancelledError):
        click.echo(f"serve: the league stopped: {type(failure).__name__}: {failure}", err=True)
        return 1
    click.echo(f"serve: stopped; {played} match(es) played and stored in this session")
    return 0
