"""A league's remote entrants: the door opened around a run's driver (:func:`with_door`, for ``referee
run``), for a server's whole life (:class:`OpenDoor`, for ``referee serve``) or around a conformance
check (:func:`check_remote`, for ``referee check --listen``). Here, in the league part, because it joins
a league's run to the door: ``referee.remote`` itself knows nothing of leagues. Settings that cannot work
are one line (:class:`~referee.remote.settings.RemoteSettingsError`), before anything plays."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from referee.check import CHECK_TIME, CheckReport, check_bot
from referee.league.config import League
from referee.match.launcher import RemoteSource, interrupted
from referee.remote.door import Door, DoorServer, Keepalive, open_door
from referee.remote.files import record_path
from referee.remote.front import MAX_CONNECTIONS
from referee.remote.lobby import Lobby, ping_timeout
from referee.remote.record import RecordFile
from referee.remote.settings import RemoteSettings, RemoteSettingsError
from referee.remote.tokens import TokenBook, TokenError, tokens_path
from referee.run.competition import Progress, RunReport


class LobbyDriver(Protocol):
    """A driver that seats remote entrants from a lobby (``referee.run.local_driver.LocalDriver``, and
    ``referee.run.dask_driver.DaskDriver``, which plays their matches in this process, where the door
    is, and the others on its workers)."""

    remote: RemoteSource | None

    async def run(self, on_progress: Callable[[Progress], None]) -> RunReport: ...


def door_settings(league: League, given: RemoteSettings, entry: bool = False) -> RemoteSettings | None:
    """The door a run opens: the league file's ``remote:`` keys under the options of ``referee run`` or
    ``serve`` (``given``), or ``None`` when the league has no remote entrant and admits no ``entry``
    (``referee serve --entry``: the entrants its authors enter are remote). Each option overrides its
    own key only: ``--listen`` on the command line keeps the file's ``tls_cert`` and ``tls_key``. Raises
    :class:`RemoteSettingsError` for settings that cannot work, before anything is played."""
    names = league.remote_names
    if entry and given.listen is None and league.remote.listen is None:
        raise RemoteSettingsError(
            "--entry: the entrants authors enter play from their machines: give --listen HOST:PORT (with "
            "--tls-cert and --tls-key), or remote: listen: in the league file (docs/REMOTE.md)"
        )
    if not names and not entry:
        if given.listen is not None:
            raise RemoteSettingsError("--listen: this league has no remote entrant (remote: true)")
        return None
    base = league.remote
    settings = RemoteSettings(
        given.listen or base.listen,
        given.tls_cert or base.tls_cert,
        given.tls_key or base.tls_key,
        given.insecure,
        base.wait,
        base.max_matches,
    )
    if settings.listen is None:
        raise RemoteSettingsError(
            f"remote entrant(s) {', '.join(names)}: give --listen HOST:PORT (with --tls-cert and "
            "--tls-key), or remote: listen: in the league file (docs/REMOTE.md)"
        )
    settings.check()
    return settings


def missing_tokens(league: League) -> list[str]:
    """The remote entrants of ``league`` that have no token yet; raises :class:`RemoteSettingsError`
    for a token file that cannot be read."""
    try:
        grants = TokenBook(tokens_path(league.database)).grants()
    except TokenError as exc:
        raise RemoteSettingsError(str(exc)) from None
    return [name for name in league.remote_names if name not in grants]


def no_token(league: League, name: str) -> str:
    """What to do about the remote entrant ``name`` that has no token: one line."""
    return f"remote entrant {name!r} has no token: referee token issue {league.path} {name}"


def with_door(league: League, driver: LobbyDriver, settings: RemoteSettings) -> DoorDriver:
    """``driver`` with the door open around its run; raises :class:`RemoteSettingsError` if a remote
    entrant has no token yet."""
    missing = missing_tokens(league)
    if missing:
        raise RemoteSettingsError(no_token(league, missing[0]))
    return DoorDriver(league, driver, settings)


class OpenDoor:
    """The door and its lobby, open from :meth:`open` to :meth:`close`: around one run of ``referee
    run``, or for the whole life of ``referee serve`` (which calls :meth:`admit` whenever the league file
    changes). The door admits the league's remote entrants that hold a valid token."""

    def __init__(self, league: League, settings: RemoteSettings) -> None:
        self.league, self.settings = league, settings
        self.lobby = Lobby.for_time(settings.wait, league.time_control.per_action)
        self.keepalive = Keepalive.for_time(league.time_control)
        self.door = Door(
            TokenBook(tokens_path(league.database)),
            league.remote_names,
            self.lobby,
            self.keepalive,
            max_matches=settings.max_matches,
        )
        self.lobby.valid = self.door.still_valid
        self.record = self._record(league)
        self._server: DoorServer | None = None
        self._short_keepalive_told = False
        self._told = 0

    @property
    def is_open(self) -> bool:
        return self._server is not None

    async def open(self) -> None:
        """Starts listening and says where on stderr; :class:`RemoteSettingsError` if it cannot."""
        settings = self.settings
        try:
            server, port = await open_door(self.door, settings, self.keepalive)
        except (OSError, RuntimeError) as exc:
            raise RemoteSettingsError(f"--listen {settings.listen}: cannot listen there ({exc})") from None
        host = (settings.listen or "").rpartition(":")[0]
        how = "with TLS" if settings.tls else "in plaintext"
        print(f"listening for remote entrants on {host}:{port} {how}", file=sys.stderr, flush=True)
        self._server = server
        total = server.front.limits.total
        if total < MAX_CONNECTIONS:
            print(
                f"warning: this process may open too few files for the remote door to hold more than "
                f"{total} connections at once (raise the limit: ulimit -n)",
                file=sys.stderr,
                flush=True,
            )

    def _record(self, league: League) -> RecordFile:
        """The league's connection record, which the lobby adds to as it goes."""
        record = RecordFile(record_path(league.database))
        self.lobby.latency = record.seen
        self.lobby.on_change = record.changed
        return record

    def admit(self, league: League) -> None:
        """The league file changed: the door admits its remote entrants as they are now (a new one, once
        it has a token; none that left), and the lobby waits the league's ``remote: wait``."""
        self.league = league
        longest = Keepalive.for_time(league.time_control).timeout
        if longest > self.keepalive.timeout and not self._short_keepalive_told:
            self._short_keepalive_told = True  # another database: another competition, another clock
            print(
                f"warning: {league.path}: its time control allows longer decisions than when the remote "
                f"door opened; a remote bot silent for over {self.keepalive.timeout:g}s is cut: restart "
                "referee serve to lengthen it",
                file=sys.stderr,
                flush=True,
            )
        self.door.book = TokenBook(tokens_path(league.database))
        self.door.names = frozenset(league.remote_names)
        self.lobby.wait = league.remote.wait
        self.lobby.ping_timeout = ping_timeout(league.time_control.per_action)
        if record_path(league.database) != self.record.path:  # another database: its own record
            self.record.close()
            self.record = self._record(league)
        self.lobby.dismiss()  # a bot whose entrant left, or whose token was revoked, is told now

    def new_refusals(self) -> list[str]:
        """The refusals of the admitted connections since the last call (``referee serve`` logs them)."""
        refusals = self.door.refusals[self._told :]
        self._told += len(refusals)
        return refusals

    async def close(self, stopped: bool | None = None) -> None:
        """Ends every connection: CANCELLED when the referee was ``stopped`` (by default: when the task
        closing it is being cancelled), and the SDKs wait for it to come back; else the league is over.
        Then stops listening, and writes what is left of the league's record of the connections."""
        self.lobby.close(interrupted() if stopped is None else stopped)
        if self._server is not None:
            await self._server.stop(grace=2.0)
            self._server = None
        self.record.close()


class DoorDriver:
    """Runs ``driver`` with the door open: its lobby seats the remote entrants; the door's refusals join
    the run's report, and what the run saw of each connection is recorded beside the results."""

    def __init__(self, league: League, driver: LobbyDriver, settings: RemoteSettings) -> None:
        self.league, self.driver, self.settings = league, driver, settings

    async def run(self, on_progress: Callable[[Progress], None]) -> RunReport:
        door = OpenDoor(self.league, self.settings)
        await door.open()
        self.driver.remote = door.lobby
        try:
            report = await self.driver.run(on_progress)
        finally:
            await door.close()
        return replace(report, refusals=(*report.refusals, *door.door.refusals))


CHECK_WAIT = 300.0
"""Seconds ``referee check --listen`` waits for the remote bot to connect for each match."""


async def check_remote(settings: RemoteSettings, log_dir: Path | None = None) -> CheckReport:
    """``referee check --listen``: opens a door with a one-time token, prints how to connect, and plays
    the check's three matches with the remote bot that connects; the report adds its round trip. Raises
    :class:`RemoteSettingsError` for a door that cannot open."""
    settings.check()
    folder = Path(tempfile.mkdtemp(prefix="pyramid-check-"))
    try:
        book = TokenBook(folder / "tokens.json")
        token = book.issue("remote", lifetime=CHECK_WAIT * 4)
        lobby = Lobby.for_time(CHECK_WAIT, CHECK_TIME.per_action)
        door = Door(book, ["remote"], lobby)
        lobby.valid = door.still_valid
        try:
            server, port = await open_door(door, settings, Keepalive.for_time(CHECK_TIME))
        except (OSError, RuntimeError) as exc:
            raise RemoteSettingsError(f"--listen {settings.listen}: cannot listen there ({exc})") from None
        host = (settings.listen or "").rpartition(":")[0]
        print(
            f"waiting up to {CHECK_WAIT:g}s for a remote bot on {host}:{port} "
            f"({'TLS' if settings.tls else 'plaintext'}); start it with PYRAMID_ADDRESS=HOST:{port} and "
            f"PYRAMID_TOKEN_FILE naming a file that holds this one-time token:\n{token}",
            file=sys.stderr,
            flush=True,
        )
        try:
            report = await check_bot((), remote=lobby, log_dir=log_dir)
        finally:
            lobby.close(interrupted())
            await server.stop(grace=1.0)
        latency = lobby.latency.get("remote")
        if latency is not None:
            report.notes.append(f"remote        {latency.line()}")
        return report
    finally:
        shutil.rmtree(folder, ignore_errors=True)
