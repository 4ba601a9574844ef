"""``referee serve LEAGUE``: plays the league on and serves the web app (docs/SERVER.md).

One process, one event loop: the league runner and uvicorn's server run side by side. Ctrl-C or SIGTERM
stops both: the server ends its streams and closes, and the match in play is cancelled, its bots stopped
(it is not stored, so the next ``referee serve`` or ``referee run`` plays it again); every stored match
stays stored. The league and the web stack (``referee.web``) are imported inside the command, so that
``referee serve --help`` loads only click.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Final

import click

from referee.cli.common import listen_options, log_level_option

DEFAULT_HTTP: Final = "127.0.0.1:8000"


def parse_http(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8000`` for IPv6; ``:PORT`` means loopback).

    >>> parse_http("127.0.0.1:8000"), parse_http(":9000"), parse_http("[::1]:80")
    (('127.0.0.1', 8000), ('127.0.0.1', 9000), ('::1', 80))
    """
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise click.BadParameter(f"{text!r}: expected HOST:PORT, e.g. {DEFAULT_HTTP}", param_hint="--http")
    return (host.strip("[]") or "127.0.0.1"), int(port)


@click.command("serve")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "--http",
    "http",
    default=DEFAULT_HTTP,
    show_default=True,
    metavar="HOST:PORT",
    help="Where the web app listens; loopback unless you name another address (0.0.0.0: every one).",
)
@click.option(
    "--public-host",
    "public_hosts",
    multiple=True,
    metavar="NAME",
    help="A host name the server is reached by (repeatable): requests naming another are refused.",
)
@click.option(
    "--fresh",
    is_flag=True,
    help="Forget the stored results of this league first (a copy is kept beside them) and start over.",
)
@log_level_option("info", "in the league's log folder (referee.log)")
@click.option(
    "--workers",
    type=click.IntRange(1, 1024),
    help="Play on a Dask cluster of this many worker processes on this machine (docs/SCALING.md).",
)
@click.option(
    "--dask",
    "dask_address",
    metavar="tcp://HOST:8786",
    help="Play on the running Dask cluster whose scheduler is at this address (docs/SCALING.md).",
)
@click.option(
    "--entry",
    type=click.Choice(["closed", "invite", "open"]),
    default="closed",
    show_default=True,
    help="Who may enter a remote entrant at /enter: nobody, holders of an invite code (referee invite "
    "issue), or anyone who reaches the server (a trusted network). Needs --listen.",
)
@listen_options("Listen for the league's remote entrants here, for as long as it serves")
def serve_command(
    league_file: Path,
    http: str,
    public_hosts: tuple[str, ...],
    fresh: bool,
    log_level: str,
    workers: int | None,
    dask_address: str | None,
    entry: str,
    listen: str | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    insecure: bool,
) -> None:
    """Plays LEAGUE on and on and serves it live at http://127.0.0.1:8000/: the leaderboard, the matches
    (those in play card by card), the entrants, a JSON API (/api/v1/) and a seat for you (/play).

    New and replaced entrants of the league file are picked up without a restart. Remote entrants play
    from their authors' machines through --listen (docs/REMOTE.md); one that is not connected waits for
    its matches. With --workers or --dask the matches without a remote seat are played on Dask workers,
    to the same results. Ctrl-C stops it; every stored match stays stored, and the match in play is
    played again next time (docs/SERVER.md).
    """
    from referee.cli.storage import EXIT_BUSY
    from referee.league.config import LeagueError, load_league
    from referee.logs import referee_logging
    from referee.remote.settings import RemoteSettings, RemoteSettingsError
    from referee.results.lock import LeagueBusyError, check_free
    from referee.results.owner import made_by
    from referee.run.entry import EntryMode
    from referee.run.host import log_dir_of
    from referee.run.remote_entrants import OpenDoor, door_settings
    from referee.run.serve_driver import ClusterSettings

    if workers is not None and dask_address is not None:
        raise click.UsageError("give --workers (a cluster on this machine) or --dask (a running one)")
    host, port = parse_http(http)
    mode = EntryMode(entry)
    from referee.web.hosts import is_loopback, public_host

    if mode is not EntryMode.CLOSED and not is_loopback(host) and not insecure:
        raise click.ClickException(
            f"--entry shows each entrant its token, and --http {http} serves plain HTTP beyond this machine: "
            "serve on loopback behind a TLS proxy (--public-host NAME), or add --insecure on a network "
            "you trust"
        )

    for name in public_hosts:
        try:
            public_host(name)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--public-host") from None
    try:
        league = load_league(league_file, made_by=made_by)
        check_free(league.database)  # another serve or run of it is the first thing to hear of
        settings = door_settings(
            league, RemoteSettings(listen, tls_cert, tls_key, insecure), mode is not EntryMode.CLOSED
        )
    except (LeagueError, RemoteSettingsError) as exc:
        raise click.ClickException(str(exc)) from None
    except LeagueBusyError as exc:
        click.echo(f"serve: {exc}", err=True)
        sys.exit(EXIT_BUSY)
    if workers is None and dask_address is None:  # the league file's keys, read once, as run reads them
        workers, dask_address = league.workers, league.dask
    cluster = None if workers is None and dask_address is None else ClusterSettings(workers, dask_address)
    log_file = log_dir_of(league) / "referee.log"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    from referee.web.server import serve_forever

    with referee_logging(log_level, log_file), log_file.open("a", encoding="utf-8") as log:
        door = OpenDoor(league, settings) if settings is not None else None
        code = asyncio.run(
            serve_forever(league_file, host, port, door, fresh, public_hosts, log, cluster, mode)
        )
    if code:
        sys.exit(code)
