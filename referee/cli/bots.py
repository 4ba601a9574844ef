"""The commands about one bot: ``check`` (its conformance run) and ``submit`` (checked, then added to a
league file)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from referee.cli.common import InputError, listen_options, run_until_signal, sandbox_options

if TYPE_CHECKING:
    from referee.check import CheckReport


@click.command("check", context_settings={"ignore_unknown_options": True})
@click.option(
    "--cwd", type=click.Path(file_okay=False, exists=True, path_type=Path), help="The bot's folder."
)
@click.option(
    "--logs",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the bot's stdout and stderr (NAME.log), as referee match --logs keeps them.",
)
@sandbox_options
@listen_options("Check a remote bot that connects here")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def check_command(
    cwd: Path | None,
    logs: Path | None,
    sandbox: str,
    ro_paths: tuple[Path, ...],
    listen: str | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    insecure: bool,
    command: tuple[str, ...],
) -> None:
    """Conformance run of one bot: referee check -- python my_bot.py

    Plays a 2-, 3- and 4-player match against random opponents, each with a fresh process of COMMAND in
    its sandbox, as a league does; reports the handshake, decision latency p50/p99 and any fault. Exit
    code 0 only if clean. With --listen HOST:PORT and no COMMAND it checks a remote bot instead: it prints
    a one-time token, and the bot that connects with it plays the three matches (docs/REMOTE.md).
    """
    if listen is not None:  # a remote bot: it connects to the door with the one-time token printed
        report = _check_remote(listen, tls_cert, tls_key, insecure, logs)
    elif not command:
        raise click.UsageError("give the bot's COMMAND, or --listen HOST:PORT for a remote bot")
    else:
        report = _check(command, cwd, sandbox, ro_paths, logs)
    click.echo("\n".join(report.lines()))
    sys.exit(0 if report.clean else 1)


def _check_remote(
    listen: str, tls_cert: Path | None, tls_key: Path | None, insecure: bool, logs: Path | None
) -> CheckReport:
    """``referee check --listen``: the remote bot that connects to the door plays the check."""
    import asyncio

    from referee.process import quiet_grpc

    quiet_grpc("warning")  # a stranger's failed TLS handshake is no line of the check's
    from referee.remote.settings import RemoteSettings, RemoteSettingsError
    from referee.run.remote_entrants import check_remote

    try:
        return run_until_signal(check_remote(RemoteSettings(listen, tls_cert, tls_key, insecure), logs))
    except RemoteSettingsError as exc:
        raise click.ClickException(str(exc)) from None
    except (asyncio.CancelledError, KeyboardInterrupt):
        click.echo("interrupted: the check did not finish", err=True)
        sys.exit(130)


def _check(
    command: tuple[str, ...],
    cwd: Path | None,
    sandbox: str,
    ro_paths: tuple[Path, ...],
    logs: Path | None = None,
) -> CheckReport:
    import asyncio

    from referee.check import check_bot
    from referee.match.launcher import Confinement
    from referee.match.sandbox import SandboxError, SandboxMode

    paths = tuple(path.resolve() for path in ro_paths)
    if logs:
        try:
            logs.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise click.ClickException(f"{logs}: cannot make the log folder: {exc.strerror or exc}") from None
    confinement = Confinement(SandboxMode(sandbox), hidden=(logs.resolve(),) if logs else ())
    try:
        return run_until_signal(
            check_bot(tuple(command), cwd, confinement=confinement, paths=paths, log_dir=logs)
        )
    except SandboxError as exc:
        raise click.ClickException(str(exc)) from None
    except (asyncio.CancelledError, KeyboardInterrupt):
        click.echo("interrupted: the check did not finish", err=True)
        sys.exit(130)


@click.command("submit", context_settings={"ignore_unknown_options": True})
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, exists=True))
@click.option("--name", required=True, help="The entrant's name in the league.")
@click.option(
    "--cwd", type=click.Path(file_okay=False, exists=True, path_type=Path), help="The bot's folder."
)
@click.option(
    "--replace",
    "replace_it",
    is_flag=True,
    help="Swap in a new version of the entrant NAME: the next run replays its stored matches.",
)
@sandbox_options
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def submit_command(
    league_file: str,
    name: str,
    cwd: Path | None,
    replace_it: bool,
    sandbox: str,
    ro_paths: tuple[Path, ...],
    command: tuple[str, ...],
) -> None:
    """Checks a bot and, if it passes, adds it to LEAGUE: referee submit league.yaml --name me -- ./run.sh

    The league file keeps its comments and layout; the next `referee run` plays the new entrant's matches.
    """
    from referee.cli.storage import league_of
    from referee.league.config import LeagueError, add_entrant

    league = league_of(league_file)
    exists = any(entrant.name == name for entrant in league.entrants)
    if exists and not replace_it:
        raise InputError(
            f"{league.path}: an entrant is already named {name!r}; choose another --name, or give --replace "
            "to swap in this new version of it"
        )
    if replace_it and not exists:
        raise InputError(f"{league.path}: no entrant named {name!r} to replace")
    report = _check(command, cwd, sandbox, ro_paths)
    click.echo("\n".join(report.lines()))
    if not report.clean:
        raise click.ClickException(f"not submitted: {name} did not pass the check")
    try:
        paths = tuple(extra.resolve() for extra in ro_paths)
        add_entrant(league.path, name, tuple(command), (cwd or Path.cwd()).resolve(), paths, replace_it)
    except LeagueError as exc:
        raise click.ClickException(f"not submitted: {exc}") from None
    click.echo(
        f"submitted: {name} is an entrant of {league.name}; `referee run {league_file}` plays its matches"
    )
