"""What every command module shares: the one-line input error, the options several commands take, the
rules parser and the signal-aware runner. Light on purpose: each command module imports it at its top,
so it loads click, the log levels and the sandbox modes, and nothing that plays or reads a league."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from referee.logs import LEVELS
from referee.match.faults import MAX_FAULTS
from referee.match.sandbox import SandboxMode

if TYPE_CHECKING:
    from pyramid_sdk import Rules

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class InputError(click.ClickException):
    """A broken league file or bot: one line naming what and where, exit code 2. (Wrong flags and
    arguments are click's usage errors, which show the usage first.)"""

    exit_code = 2


def log_level_option(default: str, where: str) -> Callable[[F], F]:
    """``--log-level``; once parsed, gRPC's own log lines are kept out of the output unless it is
    ``debug`` (:func:`referee.process.quiet_grpc`, before the command loads gRPC)."""

    def quiet(context: click.Context, parameter: click.Parameter, level: str) -> str:
        from referee.process import quiet_grpc

        quiet_grpc(level)
        return level

    return click.option(
        "--log-level",
        type=click.Choice(sorted(LEVELS)),
        default=default,
        show_default=True,
        callback=quiet,
        help=f"The referee's own log, {where}: debug logs every message to and from each bot "
        "(and lets gRPC print its own lines).",
    )


def parse_rules(players: int, options: tuple[str, ...]) -> Rules:
    """The rules of ``--rule KEY=VALUE`` options for a table of ``players``; a bad one is a usage error."""
    from pyramid_sdk import Rules, RulesError

    values: dict[str, object] = {}
    given: dict[str, str] = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep:
            raise click.BadParameter(
                f"{option!r}: expected KEY=VALUE, e.g. trick_winner=highest-rank", param_hint="--rule"
            )
        key = key.strip().replace("-", "_")
        given[key] = option
        values[key] = int(value) if value.strip().isdigit() else value.strip()
    try:
        return Rules.for_table(players, values)
    except RulesError as exc:
        if exc.field == "players":
            raise click.BadParameter(
                f"{given['players']!r}: not a rule option; the table has {players} seats "
                "(one per bot, or --players)",
                param_hint="--rule",
            ) from None
        raise click.BadParameter(str(exc), param_hint="--rule") from None


rule_option = click.option(
    "--rule",
    "--rules",
    "rules",
    multiple=True,
    metavar="KEY=VALUE",
    help="A rule option, e.g. trick_winner=highest-rank or talk=open; repeat it for several.",
)


def table_options(command: Any) -> Any:
    """The rules, time control, fault limit and bots' log folder of the tables that ``match`` and
    ``compare`` set up themselves (in a league these are keys of the league file)."""
    for option in reversed(
        (
            rule_option,
            click.option(
                "--per-action",
                type=click.FloatRange(min=0.001),
                default=1.0,
                show_default=True,
                help="Seconds.",
            ),
            click.option(
                "--bank",
                type=click.FloatRange(min=0.0),
                default=20.0,
                show_default=True,
                help="Seconds per match.",
            ),
            click.option("--max-faults", type=click.IntRange(min=1), default=MAX_FAULTS, show_default=True),
            click.option(
                "--logs",
                type=click.Path(file_okay=False, path_type=Path),
                help="Folder for the bots' stderr.",
            ),
        )
    ):
        command = option(command)
    return command


def sandbox_options(command: Any) -> Any:
    """``--sandbox`` and ``--ro-path``: the league keys ``sandbox:`` and an entrant's ``paths:``."""
    command = click.option(
        "--ro-path",
        "ro_paths",
        multiple=True,
        type=click.Path(exists=True, path_type=Path),
        help="A further path the bot may read (its folder always is); repeat it for several.",
    )(command)
    return click.option(
        "--sandbox",
        type=click.Choice([mode.value for mode in SandboxMode]),
        default=SandboxMode.AUTO.value,
        show_default=True,
        help="Run bots in the bubblewrap sandbox: auto (where it works), required, or none (trusted bots).",
    )(command)


def listen_options(what: str) -> Callable[[F], F]:
    """``--listen``, ``--tls-cert``, ``--tls-key`` and ``--insecure``: the door for remote bots
    (docs/REMOTE.md); ``what`` says what the door is for."""

    def decorate(command: F) -> F:
        path = click.Path(dir_okay=False, path_type=Path)
        command = click.option(
            "--insecure", is_flag=True, help="Allow --listen on a non-loopback address without TLS."
        )(command)
        command = click.option("--tls-key", type=path, help="TLS private key (PEM).")(command)
        command = click.option("--tls-cert", type=path, help="TLS certificate (PEM).")(command)
        return click.option("--listen", metavar="HOST:PORT", help=f"{what} (docs/REMOTE.md).")(command)

    return decorate


seed_option = click.option(
    "--seed", type=click.IntRange(min=0), default=2026, show_default=True, help="Match seed."
)


def run_until_signal(coroutine: Coroutine[Any, Any, T]) -> T:
    """Runs ``coroutine``; SIGTERM and Ctrl-C cancel it, so every cleanup (bot processes) still runs."""
    import asyncio
    import signal

    async def main() -> T:
        task = asyncio.ensure_future(coroutine)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        return await task

    return asyncio.run(main())


def say(line: str) -> None:
    """A line for the user on stderr (stdout stays the command's result)."""
    click.echo(line, err=True)
