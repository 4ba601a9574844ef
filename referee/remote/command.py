"""``referee token`` (issue, revoke and list remote entrants' tokens) and the door that ``referee run``
opens for them (:func:`with_door`)."""

from __future__ import annotations

import datetime
import shutil
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import click

from referee.check import CheckReport, check_bot
from referee.league.config import League, LeagueError, load_league
from referee.league.tournament import Progress, Tournament
from referee.match.launcher import interrupted
from referee.remote.door import Door, open_door
from referee.remote.files import record_path
from referee.remote.lobby import Lobby
from referee.remote.record import remote_lines, save
from referee.remote.settings import RemoteSettings, RemoteSettingsError
from referee.remote.tokens import TokenBook, TokenError, tokens_path

Executor = Callable[[Callable[[Progress], None]], Coroutine[Any, Any, Progress]]
DURATIONS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _league(path: str) -> League:
    try:
        return load_league(path, check_commands=False)
    except LeagueError as exc:
        raise click.ClickException(str(exc)) from None


def _remote_entrant(league: League, name: str) -> None:
    names = [entrant.name for entrant in league.entrants if entrant.spec.remote]
    if name not in names:
        listed = ", ".join(names) or "none"
        raise click.ClickException(
            f"{league.path}: {name!r} is not a remote entrant of this league (remote: true); "
            f"its remote entrants: {listed}"
        )


def _lifetime(text: str | None) -> float | None:
    """``30d``, ``12h``, ``90m`` or seconds, as seconds."""
    if text is None:
        return None
    unit = DURATIONS.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in DURATIONS else text
    try:
        value = float(number) * unit
    except ValueError:
        raise click.BadParameter(f"{text!r}: give a duration like 30d, 12h or 90m") from None
    if value <= 0:
        raise click.BadParameter(f"{text!r}: a token must live a while")
    return value


@click.group("token")
def token_group() -> None:
    """Tokens of remote entrants (docs/REMOTE.md): issue, revoke, list."""


@token_group.command("issue")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True))
@click.argument("name")
@click.option("--expires", metavar="DURATION", help="The token stops working after this long: 30d, 12h, 90m.")
def issue_command(league_file: str, name: str, expires: str | None) -> None:
    """Prints a new token for remote entrant NAME, once: only its salted hash is kept. Any earlier token
    of NAME stops working (a connection that used it is dropped before its next match)."""
    league = _league(league_file)
    _remote_entrant(league, name)
    book = TokenBook(tokens_path(league.database))
    try:
        token = book.issue(name, _lifetime(expires))
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(token)
    click.echo(
        f"token of {name!r} issued (shown this once; any earlier one is revoked): give it to the bot's "
        "author, who keeps it in a file named by PYRAMID_TOKEN_FILE (docs/REMOTE.md)",
        err=True,
    )


@token_group.command("revoke")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True))
@click.argument("name")
def revoke_command(league_file: str, name: str) -> None:
    """Revokes NAME's token: its hellos are refused, and a connection that used it is dropped."""
    league = _league(league_file)
    try:
        revoked = TokenBook(tokens_path(league.database)).revoke(name)
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"token of {name!r} revoked" if revoked else f"{name!r} had no token")


@token_group.command("list")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True))
def list_command(league_file: str) -> None:
    """Lists the remote entrants, when each token was issued and expires (never a token), and what the
    league's runs saw of each connection."""
    league = _league(league_file)
    try:
        grants = TokenBook(tokens_path(league.database)).grants()
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    for entrant in (e for e in league.entrants if e.spec.remote):
        grant = grants.get(entrant.name)
        if grant is None:
            click.echo(f"{entrant.name}: no token (referee token issue {league_file} {entrant.name})")
            continue
        ends = f", expires {_when(grant.expires)}" if grant.expires else ""
        click.echo(f"{entrant.name}: token issued {_when(grant.issued)}{ends}")
    for line in remote_lines(league):
        click.echo(line)


def _when(stamp: float) -> str:
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def with_door(
    tournament: Tournament,
    executor: Executor,
    listen: str | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    insecure: bool,
    on_dask: bool,
) -> Executor:
    """``executor`` with the remote door open around it, if the league has remote entrants; raises a
    one-line :class:`click.ClickException` for settings that cannot work (before anything is played)."""
    league = tournament.league
    names = [entrant.name for entrant in league.entrants if entrant.spec.remote]
    if not names:
        if listen is not None:
            raise click.ClickException("--listen: this league has no remote entrant (remote: true)")
        return executor
    if on_dask:
        raise click.ClickException(
            "remote entrants play only in the referee's own process: run without --workers/--dask "
            "(docs/SCALING.md)"
        )
    base = league.remote
    settings = RemoteSettings(
        listen or base.listen,
        tls_cert or (base.tls_cert if listen is None else None),
        tls_key or (base.tls_key if listen is None else None),
        insecure,
        base.wait,
    )
    if settings.listen is None:
        raise click.ClickException(
            f"remote entrant(s) {', '.join(names)}: give --listen HOST:PORT (with --tls-cert and "
            "--tls-key), or remote: listen: in the league file (docs/REMOTE.md)"
        )
    try:
        settings.check()
    except RemoteSettingsError as exc:
        raise click.ClickException(str(exc)) from None
    book = TokenBook(tokens_path(league.database))
    try:
        missing = [name for name in names if name not in book.grants()]
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    if missing:
        raise click.ClickException(
            f"remote entrant {missing[0]!r} has no token: referee token issue {league.path} {missing[0]}"
        )

    async def run(on_progress: Callable[[Progress], None]) -> Progress:
        lobby = Lobby(settings.wait)
        door = Door(book, names, lobby)
        lobby.valid = door.still_valid
        try:
            server, port = await open_door(door, settings)
        except (OSError, RuntimeError) as exc:
            raise click.ClickException(f"--listen {settings.listen}: cannot listen there ({exc})") from None
        host = settings.listen.rpartition(":")[0] if settings.listen else ""
        how = "with TLS" if settings.tls else "in plaintext"
        print(f"listening for remote entrants on {host}:{port} {how}", file=sys.stderr, flush=True)
        tournament.remote = lobby
        try:
            return await executor(on_progress)
        finally:
            lobby.close(interrupted())
            await server.stop(grace=2.0)
            tournament.refusals.extend(door.refusals)
            try:
                save(record_path(league.database), lobby.latency)
            except OSError as exc:
                print(f"warning: the remote latency record was not written: {exc}", file=sys.stderr)

    return run


CHECK_WAIT = 300.0
"""Seconds ``referee check --listen`` waits for the remote bot to connect for each match."""


async def check_remote(settings: RemoteSettings, log_dir: Path | None = None) -> CheckReport:
    """``referee check --listen``: opens a door with a one-time token, prints how to connect, and plays
    the check's three matches with the remote bot that connects; the report adds its round trip."""
    try:
        settings.check()
    except RemoteSettingsError as exc:
        raise click.ClickException(str(exc)) from None
    folder = Path(tempfile.mkdtemp(prefix="pyramid-check-"))
    try:
        book = TokenBook(folder / "tokens.json")
        token = book.issue("remote", lifetime=CHECK_WAIT * 4)
        lobby = Lobby(CHECK_WAIT)
        door = Door(book, ["remote"], lobby)
        lobby.valid = door.still_valid
        try:
            server, port = await open_door(door, settings)
        except (OSError, RuntimeError) as exc:
            raise click.ClickException(f"--listen {settings.listen}: cannot listen there ({exc})") from None
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
