"""The commands that play one match outside any league: ``demo`` (in-process random players) and
``match`` (2-4 bots, as processes over gRPC or in-process classes), one call of
:func:`referee.api.play`, so that it plays as ``referee.api.match`` does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from referee.cli.common import (
    InputError,
    log_level_option,
    parse_rules,
    rule_option,
    run_until_signal,
    sandbox_options,
    seed_option,
    table_options,
)

if TYPE_CHECKING:
    from referee.api import Played
    from referee.match.bots import BotSpec


@click.command()
@click.option(
    "--players", type=click.IntRange(2, 4), default=4, show_default=True, help="Seats at the table."
)
@seed_option
@rule_option
def demo(players: int, seed: int, rules: tuple[str, ...]) -> None:
    """Plays one match between random players inside the referee and prints it."""
    import random

    from pyramid_sdk import Match
    from referee.report.transcript import brief

    match = Match(parse_rules(players, rules), seed, [f"random{seat}" for seat in range(players)])
    rng = random.Random(seed)
    match.play_out(lambda match, seat: rng.choice(match.legal_actions(seat)))
    click.echo(brief(match.record()))


@click.command("match")
@click.argument("bots", nargs=-1, required=True)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    help="Match seed, to replay a match; default: a fresh secret one, printed when the match is over.",
)
@table_options
@click.option(
    "--name",
    "names",
    multiple=True,
    metavar="NAME",
    help="A seat's name, in the order of BOTS; repeat it (default: the name each bot gives itself).",
)
@click.option(
    "--html",
    "html",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the match as one page with the replay viewer, card by card (opens from disk).",
)
@click.option(
    "--record",
    "record_file",
    metavar="FILE.jsonl",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the match's record, a line of JSON as referee export writes (docs/FORMATS.md); "
    "referee replay FILE.jsonl shows it.",
)
@sandbox_options
@log_level_option("warning", "on stderr")
def match_command(
    bots: tuple[str, ...],
    names: tuple[str, ...],
    seed: int | None,
    rules: tuple[str, ...],
    per_action: float,
    bank: float,
    max_faults: int,
    logs: Path | None,
    html: Path | None,
    record_file: Path | None,
    sandbox: str,
    ro_paths: tuple[Path, ...],
    log_level: str,
) -> None:
    """Plays one match between 2-4 BOTS and prints it deal by deal.

    Each BOT is a command line run as its own process over gRPC (quote it: "python my_bot.py") or a
    module:Class played in-process, e.g. sample_bots.heuristic:HeuristicBot. --html FILE keeps the match
    as a page to step through card by card in a browser; --record FILE.jsonl keeps its record, which
    `referee replay FILE.jsonl --deal N` prints card by card.
    """
    import asyncio
    import secrets

    from pyramid_sdk.bot import TimeControl
    from pyramid_sdk.seeds import SEED_BITS
    from referee.api import play
    from referee.logs import referee_logging
    from referee.match.bots import BotSpecError
    from referee.match.launcher import Confinement
    from referee.match.outcome import MatchStatus
    from referee.match.sandbox import SandboxError, SandboxMode
    from referee.report.transcript import brief

    outputs = tuple(path for path in (html, record_file) if path is not None)
    _check_options(bots, names, html, record_file)
    parsed = parse_rules(len(bots), rules)
    specs = _checked_specs(bots, ro_paths)
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    # A bot must not read an earlier match's page or record there: with the same --seed it holds every hand.
    hidden = ((logs.resolve(),) if logs else ()) + tuple(path.resolve() for path in outputs)
    confinement = Confinement(SandboxMode(sandbox), hidden=hidden)
    if seed is None:
        seed = secrets.randbits(SEED_BITS)  # a bot that knew the seed would know every hand
    try:
        with referee_logging(log_level):
            outcome = run_until_signal(
                play(
                    specs,
                    seed=seed,
                    rules=parsed,
                    time_control=TimeControl(per_action, bank),
                    max_faults=max_faults,
                    log_dir=logs,
                    confinement=confinement,
                    names=names,
                )
            )
    except (BotSpecError, SandboxError) as exc:
        raise click.ClickException(str(exc)) from None
    except (asyncio.CancelledError, KeyboardInterrupt):
        # Every bot is stopped by now (their streams ended with CANCELLED): the seed may be told.
        click.echo(
            f"interrupted: the match was not finished; seed {seed} (--seed {seed} plays it again)", err=True
        )
        sys.exit(130)
    seats = outcome.record.seats
    click.echo("seats: " + ", ".join(f"{seat}={name}" for seat, name in enumerate(seats)))
    click.echo(brief(outcome.record))
    for fault in outcome.faults:
        click.echo(
            f"fault: {outcome.record.seats[fault.seat]} deal {fault.deal} {fault.kind}: {fault.detail}"
        )
    # Only now, with every bot stopped: --seed replays these deals (and seeded bots' choices).
    click.echo(f"seed {seed} (--seed {seed} replays this match)")
    _keep_match(outcome, seed, html, record_file)
    if outcome.status is MatchStatus.VOID:
        raise click.ClickException(f"the match is void: {outcome.void_reason}")


def _check_options(
    bots: tuple[str, ...], names: tuple[str, ...], html: Path | None, record_file: Path | None
) -> None:
    """The checks of ``referee match``'s arguments that need no bot: one line for what is wrong."""
    from referee.match.sessions import clean_name

    for path, option in ((html, "--html"), (record_file, "--record")):
        if path is not None and not path.resolve().parent.is_dir():
            raise click.BadParameter(
                f"{path}: no folder {path.resolve().parent} to write it in", param_hint=option
            )
    if not 2 <= len(bots) <= 4:
        raise click.UsageError(f"a match needs 2 to 4 bots, got {len(bots)}")
    if len(names) > len(bots) or not all(clean_name(name) for name in names):
        raise click.BadParameter(
            f"one printable name per bot at most: {len(names)} name(s) for {len(bots)} bots",
            param_hint="--name",
        )


def _checked_specs(bots: tuple[str, ...], ro_paths: tuple[Path, ...]) -> list[BotSpec]:
    """The bots of ``referee match``, parsed and checked: one line for what is wrong with one."""
    from dataclasses import replace

    from referee.match.bots import BotSpec, BotSpecError

    try:
        specs = _unique_names([BotSpec.parse(text) for text in bots])
        for spec in specs:
            spec.check()
    except BotSpecError as exc:
        raise InputError(str(exc)) from None
    return [replace(spec, paths=tuple(path.resolve() for path in ro_paths)) for spec in specs]


def _keep_match(outcome: Played, seed: int, html: Path | None, record_file: Path | None) -> None:
    """Writes the page and the record ``referee match`` was asked for, void or not (what was played is
    kept), each whole or not at all; a file that cannot be written is one line, after the match."""
    from referee.api import MATCH_ID
    from referee.files import write_atomic
    from referee.report.site import write_match_page
    from referee.report.text import ONE_MATCH, match_line

    record = outcome.record
    try:
        if record_file is not None:
            line = match_line(MATCH_ID, ONE_MATCH, seed, outcome.status, record, outcome.faults)
            write_atomic(record_file, line + "\n")
            click.echo(f"record: {record_file} (referee replay {record_file} --deal N: a deal card by card)")
        if html is not None:
            write_match_page(html, record, outcome.faults, outcome.status, seed)
            click.echo(f"page: {html} (open it in a browser: the replay viewer steps card by card)")
    except OSError as exc:
        raise click.ClickException(
            f"{exc.filename or html or record_file}: cannot write: {exc.strerror or exc}"
        ) from None


def _unique_names(specs: list[BotSpec]) -> list[BotSpec]:
    """Seat names must differ; repeated bots get #2, #3 ..."""
    from dataclasses import replace

    seen: dict[str, int] = {}
    named = []
    for spec in specs:
        seen[spec.name] = seen.get(spec.name, 0) + 1
        name = spec.name if seen[spec.name] == 1 else f"{spec.name}#{seen[spec.name]}"
        named.append(replace(spec, name=name))
    return named
