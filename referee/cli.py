"""The ``referee`` command line. Each command is a thin shell over the library; errors are one line."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import json
import logging
import math
import os
import random
import secrets
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, TypeVar

import click
from click.core import ParameterSource
from rich.console import Console
from rich.progress import BarColumn, TextColumn
from rich.progress import Progress as Bar

from pyramid_sdk import Match, Phase, Rules, RulesError
from pyramid_sdk.bot import TimeControl
from pyramid_sdk.seeds import SEED_BITS
from referee.check import CheckReport, check_bot
from referee.compare import (
    EXIT_UNUSABLE,
    OPPONENT,
    CompareError,
    Snapshot,
    Sprt,
    compare,
    make_plan,
    progress_text,
)
from referee.league import timing
from referee.league.config import League, LeagueError, add_entrant, load_league
from referee.league.lock import LeagueBusyError
from referee.league.preflight import Broken, PreflightError
from referee.league.ratings import Leaderboard, rate
from referee.league.results import open_results
from referee.league.schedule import ScheduledMatch
from referee.league.storage import StorageError, StorageFault, StoreError
from referee.league.store import Store, StoredMatch
from referee.league.tournament import (
    Progress,
    Tournament,
    confinement_of,
    joined,
    league_settings,
    log_dir_of,
    open_store,
    plan_of,
    schedule_of,
    with_cohorts,
)
from referee.league.versions import fingerprint
from referee.logs import LEVELS, LogFile, referee_logging
from referee.match.bots import BotSpec, BotSpecError
from referee.match.faults import FaultPolicy, RefereeInternalError
from referee.match.launcher import Confinement
from referee.match.outcome import MatchOutcome, MatchStatus
from referee.match.runner import Seat, play_match
from referee.match.sandbox import SandboxError, SandboxMode
from referee.match.sessions import clean_name
from referee.match.setup import open_launcher, open_table, own_name
from referee.report.crosstable import crosstable
from referee.report.disclosure import HIDDEN_NOTE, disclosure, mask_cards
from referee.report.records import NoSuchRecord, RecordsError, find_record
from referee.report.site import write_atomic, write_match_page, write_report
from referee.report.text import (
    FORMATS,
    ONE_MATCH,
    PROGRESS_WIDTH,
    Replayable,
    crosstable_text,
    eta_text,
    export_lines,
    leaderboard_table,
    match_line,
    matches_text,
    progress_line,
    replay_text,
)
from referee.report.transcript import brief, deal_by_card
from referee.starter import StarterError, write_starter
from referee.web.command import serve

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
LOGGER = logging.getLogger(__name__)


class InputError(click.ClickException):
    """A broken league file or bot: one line naming what and where, exit code 2. (Wrong flags and
    arguments are click's usage errors, which show the usage first.)"""

    exit_code = 2


def log_level_option(default: str, where: str) -> Callable[[F], F]:
    return click.option(
        "--log-level",
        type=click.Choice(sorted(LEVELS)),
        default=default,
        show_default=True,
        help=f"The referee's own log, {where}: debug logs every message to and from each bot.",
    )


def _parse_rules(players: int, options: tuple[str, ...]) -> Rules:
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


@click.group()
@click.version_option(package_name="pyramid-arena")
def main() -> None:
    """Pyramid Arena: run bot tournaments of the card game Pyramid."""


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
            click.option("--max-faults", type=click.IntRange(min=1), default=3, show_default=True),
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


seed_option = click.option(
    "--seed", type=click.IntRange(min=0), default=2026, show_default=True, help="Match seed."
)


@main.command()
@click.option(
    "--players", type=click.IntRange(2, 4), default=4, show_default=True, help="Seats at the table."
)
@seed_option
@rule_option
def demo(players: int, seed: int, rules: tuple[str, ...]) -> None:
    """Plays one match between random players inside the referee and prints it."""
    match = Match(_parse_rules(players, rules), seed, [f"random{seat}" for seat in range(players)])
    rng = random.Random(seed)
    while match.phase is not Phase.MATCH_OVER:
        if match.phase is Phase.DEAL_OVER:
            match.next_deal()
        else:
            match.apply(rng.choice(match.legal_actions()))
    click.echo(brief(match.record()))


@main.command("init")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--name", help="The league's name (default: the folder's).")
def init_command(folder: Path, name: str | None) -> None:
    """Writes a league to start from into FOLDER (new or empty): league.yaml, a working bot in Python and
    one in Node.js, each in its own folder, and a README with the commands to run it.

    The league needs no checkout of Pyramid Arena: its opponents are the sample bots that come with the
    referee. The Node.js bot joins it where the Node.js SDK, node and npm are found here; otherwise it is
    written and left out, and the README says how to add it. Nothing is ever overwritten.
    """
    program = Path(sys.executable).parent / "referee"
    try:
        starter = write_starter(
            folder.resolve(), name or folder.resolve().name, str(program) if program.exists() else "referee"
        )
    except StarterError as exc:
        raise InputError(str(exc)) from None
    click.echo(f"init: a league in {starter.folder}: {', '.join(starter.files)}")
    if starter.node_problem:
        click.echo(
            f"node: {starter.node_problem}; node-bot is written but not in the league, where montecarlo "
            "takes its seat (README.md: adding the Node.js bot)"
        )
    click.echo(f"next: cd {starter.folder} && referee run league.yaml   (README.md has the rest)")


@main.command("match")
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
    outputs = tuple(path for path in (html, record_file) if path is not None)
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
    parsed = _parse_rules(len(bots), rules)
    try:
        specs = _unique_names([BotSpec.parse(text) for text in bots])
        for spec in specs:
            spec.check()
    except BotSpecError as exc:
        raise InputError(str(exc)) from None
    specs = [replace(spec, paths=tuple(path.resolve() for path in ro_paths)) for spec in specs]
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    # A bot must not read an earlier match's page or record there: with the same --seed it holds every hand.
    hidden = ((logs.resolve(),) if logs else ()) + tuple(path.resolve() for path in outputs)
    confinement = Confinement(SandboxMode(sandbox), hidden=hidden)
    if seed is None:
        seed = secrets.randbits(SEED_BITS)  # a bot that knew the seed would know every hand
    try:
        with referee_logging(log_level):
            outcome = _run_until_signal(
                _play(
                    specs, parsed, seed, TimeControl(per_action, bank), max_faults, logs, confinement, names
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


def _keep_match(outcome: MatchOutcome, seed: int, html: Path | None, record_file: Path | None) -> None:
    """Writes the page and the record ``referee match`` was asked for, void or not (what was played is
    kept), each whole or not at all; a file that cannot be written is one line, after the match."""
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
    seen: dict[str, int] = {}
    named = []
    for spec in specs:
        seen[spec.name] = seen.get(spec.name, 0) + 1
        name = spec.name if seen[spec.name] == 1 else f"{spec.name}#{seen[spec.name]}"
        named.append(replace(spec, name=name))
    return named


def _name_seats(seats: list[Seat], given: tuple[str, ...]) -> None:
    """Each seat's name: ``--name``, else the name the bot gives itself (its hello's ``bot_name``, its
    class's ``name``), else the one from its command line; repeated names get #2, #3 ..."""
    chosen = []
    for index, seat in enumerate(seats):
        name = clean_name(given[index]) if index < len(given) else own_name(seat)
        chosen.append(name or seat.name)
    taken: set[str] = set()
    for seat, name in zip(seats, chosen, strict=True):
        unique, number = name, 1
        while unique in taken:
            number += 1
            unique = f"{name}#{number}"
        taken.add(unique)
        seat.name = unique


async def _play(
    specs: list[BotSpec],
    rules: Rules,
    seed: int,
    time_control: TimeControl,
    max_faults: int,
    logs: Path | None,
    confinement: Confinement,
    names: tuple[str, ...] = (),
) -> MatchOutcome:
    async with open_table(specs, logs, confinement=confinement) as seats:
        _name_seats(seats, names)
        return await play_match(
            seats,
            rules,
            seed,
            match_id=MATCH_ID,
            time_control=time_control,
            fault_policy=FaultPolicy(max_faults),
        )


MATCH_ID: Final = "match"
"""The id the bots of ``referee match`` are told: the same for every match, so it says nothing of the
seed (an id built from the seed would hand a bot every hand)."""


# -- leagues ----------------------------------------------------------------------------------------------


def _league(path: str, check_commands: bool = True) -> League:
    try:
        return load_league(path, check_commands)
    except LeagueError as exc:
        raise InputError(str(exc)) from None


EXIT_BUSY: Final = 5
"""`referee run`'s exit status when another live run holds the league's results database."""
EXIT_STORAGE: Final = 6
"""Every league command's exit status when its results database is damaged, or (``referee run``) cannot
be written: a full disk, a read-only file. The line says what is stored safely."""


class StoreFailure(click.ClickException):
    """A results database this command cannot use: one line, exit code 1."""


class _Busy(StoreFailure):
    exit_code = EXIT_BUSY


class _StorageFailure(StoreFailure):
    exit_code = EXIT_STORAGE


def _failure(exc: StoreError, safe: str) -> StoreFailure:
    """The one line for ``exc``; ``safe`` says what is stored safely, or what was not read, after a
    storage fault."""
    if isinstance(exc, StorageError):
        return _StorageFailure(exc.line(safe))
    return _Busy(str(exc)) if isinstance(exc, LeagueBusyError) else StoreFailure(str(exc))


def _unread(exc: StoreError) -> str:
    damaged = isinstance(exc, StorageError) and exc.fault is StorageFault.DAMAGED
    return "nothing was read from it" if damaged else "nothing was shown"


def _results(league_file: str) -> tuple[Store, League]:
    """For the commands that read a league's results: its stored results, opened read-only. Its bots
    are not checked (results stay readable when a bot has moved), and nothing is written: a league
    never run gets no database, only one line saying that ``referee run`` plays it (exit code 1)."""
    league = _league(league_file, check_commands=False)
    try:
        return open_results(league, league_file)
    except StoreError as exc:
        raise _failure(exc, _unread(exc)) from None


def _stored(store: Store) -> dict[str, StoredMatch]:
    """Every stored match, or one line if one of them does not decode: never a partial result."""
    try:
        return store.matches()
    except StoreError as exc:
        raise _failure(exc, _unread(exc)) from None


def _ratings(league: League, stored: dict[str, StoredMatch]) -> Leaderboard:
    """The leaderboard of the stored results, without storing it (``referee run`` does)."""
    return rate([e.name for e in league.entrants], schedule_of(league, stored), stored, league.rating)


def _store(league: League, fresh: bool = False) -> tuple[Store, League]:
    try:
        return open_store(league, fresh, say=_say)
    except StoreError as exc:
        damaged = isinstance(exc, StorageError) and exc.fault is StorageFault.DAMAGED
        raise _failure(
            exc, "nothing was read from it or written to it" if damaged else "nothing was played"
        ) from None


def _in_run(exc: StorageError, store: Store, total: int) -> StoreFailure:
    """The line for a storage fault during a run: how much of the schedule is safely stored."""
    if exc.fault is StorageFault.DAMAGED:
        return _failure(exc, "the run stopped and wrote nothing more to it")
    try:
        stored = f"{len(store.complete_ids())} of {total} scheduled matches are stored safely"
    except StoreError:
        stored = "the matches stored before are kept"
    return _failure(exc, f"{stored} (a match in play when it failed is not: the next run plays it)")


def _board(league: League, store: Store, stored: dict[str, StoredMatch]) -> Leaderboard:
    """The leaderboard of the stored results, stored with them."""
    board = _ratings(league, stored)
    store.write_ratings(list(board.history))
    return board


def _run_until_signal(coroutine: Coroutine[Any, Any, T]) -> T:
    """Runs ``coroutine``; SIGTERM and Ctrl-C cancel it, so every cleanup (bot processes) still runs."""

    async def main() -> T:
        task = asyncio.ensure_future(coroutine)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        return await task

    return asyncio.run(main())


class _Display:
    """Live progress: a bar on a terminal, one line per match otherwise (logs, CI); 80 columns at most.
    The speed and ETA come from the matches played in this run only (see ``progress_line``)."""

    BAR = 16

    def __init__(self, league: League, workers: int = 1) -> None:
        self.league = league
        self.workers = workers
        self.live = sys.stdout.isatty()
        self.bar: Any = None
        self.durations: list[float] = []
        self.seen = 0
        self.first_start: float | None = None
        """When this run's first match started (the builds before it are no match time)."""
        self.settled = ""

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if progress.played > self.seen and progress.last is not None:
            self.seen = progress.played
            self.durations.append(progress.last.elapsed)
            if self.first_start is None:
                self.first_start = now - progress.last.elapsed
        workers = max(1, min(self.workers, progress.total - progress.done))
        width = PROGRESS_WIDTH - (self.BAR + 1 if self.live else 0)
        wall = None if self.first_start is None else now - self.first_start
        text = progress_line(
            progress.done,
            progress.total,
            self.durations,
            workers,
            progress.void,
            progress.leader,
            width,
            wall,
        )
        if self.live:
            if self.bar is None:
                self.bar = Bar(BarColumn(bar_width=self.BAR), TextColumn("{task.fields[info]}"))
                self.bar.start()
                self.task = self.bar.add_task(self.league.name, total=progress.total, info="")
            self.bar.update(self.task, total=progress.total, completed=progress.done, info=text)
        elif progress.played:
            click.echo(text)
        if progress.settled != self.settled:  # an until: settled league chose its next batch
            self.settled = progress.settled
            if self.bar is not None:
                self.bar.console.print(progress.settled)
            else:
                click.echo(progress.settled)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


REPORT_EVERY = 2.0
"""Seconds between rewrites of a live report (each one reads every stored match)."""


def _report_in_thread(league: League, folder: Path) -> Path | None:
    """Rewrites the live report; one that cannot be written (a full disk) is logged and skipped: the
    run goes on, and its end says what went wrong."""
    try:
        store = Store(league.database, write=False)
        try:
            return _write_report(league, store.matches(), folder, live=True)
        finally:
            store.close()
    except (OSError, StoreError) as exc:
        LOGGER.warning("the live report in %s was not rewritten: %s", folder, exc)
        return None


def _write_report(league: League, stored: dict[str, StoredMatch], folder: Path, live: bool = False) -> Path:
    schedule = list(schedule_of(league, stored))
    board = rate([e.name for e in league.entrants], schedule, stored, league.rating)
    return write_report(league, schedule, stored, board, folder, live)


@main.command("run")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False))
@click.option("--concurrency", type=click.IntRange(1, 64), help="Matches at once (overrides the file).")
@click.option("--fresh", is_flag=True, help="Forget the stored results of this league and start over.")
@click.option(
    "--report",
    "report_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep an HTML report in this folder, rewritten after every match.",
)
@log_level_option("info", "in LOGS/referee.log")
@click.option(
    "--workers",
    type=click.IntRange(1, 1024),
    help="Play on a Dask cluster of this many worker processes on this machine (docs/SCALING.md).",
)
@click.option(
    "--skip-broken",
    is_flag=True,
    help="Go on without the entrants that fail the preflight (disqualified for this run); without it, stop.",
)
@click.option(
    "--dask",
    "dask_address",
    metavar="tcp://HOST:8786",
    help="Play on the running Dask cluster whose scheduler is at this address (docs/SCALING.md).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the schedule's size and an estimated duration (with nothing stored, timed on a few deals "
    "of sample matches with the bots); store nothing and write nothing.",
)
def run_command(
    league_file: str,
    concurrency: int | None,
    fresh: bool,
    report_dir: Path | None,
    log_level: str,
    workers: int | None,
    dask_address: str | None,
    skip_broken: bool,
    dry_run: bool,
) -> None:
    """Plays every match of LEAGUE that is not stored yet, then prints the leaderboard.

    Interrupt it at any moment (Ctrl-C, SIGTERM, even kill -9) and run it again: it resumes. The matches
    are played in this process, or on Dask workers with --workers or --dask: the results are the same.
    The bots' logs and the referee's own (referee.log) are in the folder beside the results database.
    """
    if workers is not None and dask_address is not None:
        raise click.UsageError("give --workers (a cluster on this machine) or --dask (a running one)")
    league = _league(league_file)
    if workers is None and dask_address is None:
        workers, dask_address = league.workers, league.dask
    if dry_run:
        at_once = workers or (concurrency or league.concurrency)
        for line in _dry_run(league, fresh, at_once, dask_address is not None):
            click.echo(line)
        return
    store, league = _store(league, fresh)
    click.get_current_context().call_on_close(store.close)  # the run lock goes with it, however it ends
    try:
        _replay_new_versions(store, league)
    except StoreError as exc:
        raise _failure(exc, "nothing was played") from None
    log_dir = log_dir_of(league)
    hidden: tuple[Path, ...] = ()
    for folder in (report_dir, log_dir):
        try:  # the report's before any bot starts, so that its sandbox masks it
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _StorageFailure(
                f"{folder}: cannot make this folder ({exc.strerror or exc}); nothing was played; free some "
                "space or make its parent writable, and run again"
            ) from None
    if report_dir is not None:
        hidden = (report_dir.resolve(),)
    log_file = log_dir / "referee.log"
    tournament = Tournament(league, store, log_dir, concurrency, hidden, skip_broken)
    display = _Display(league, tournament.concurrency)
    cpus = _cpu_count()
    if tournament.concurrency > cpus:
        click.echo(
            f"warning: concurrency {tournament.concurrency} is more than the {cpus} CPU(s) of this machine; "
            "bots that wait for a CPU run out of time, and their timeouts are charged to them",
            err=True,
        )
    executor: Callable[[Callable[[Progress], None]], Coroutine[Any, Any, Progress]] = tournament.run
    failures: tuple[type[Exception], ...] = (SandboxError,)
    if workers is not None or dask_address is not None:
        # Dask is imported only when it is used.
        from referee.league.dask_executor import DaskExecutor, ExecutorError  # noqa: PLC0415

        executor = DaskExecutor(tournament, dask_address, workers, say=_say).run
        failures = (SandboxError, ExecutorError)

    pending: list[asyncio.Future[Path | None]] = []
    last_report = [0.0]

    def on_progress(progress: Progress) -> None:
        display(progress)
        if report_dir is None or (pending and not pending[-1].done()):
            return
        if time.monotonic() - last_report[0] >= REPORT_EVERY or progress.done == progress.total:
            # In a thread with its own connection: rendering must never stall the bots' clocks.
            last_report[0] = time.monotonic()
            pending.append(asyncio.ensure_future(asyncio.to_thread(_report_in_thread, league, report_dir)))

    try:
        with referee_logging(log_level, log_file) as log:
            if tournament.concurrency > cpus:
                LOGGER.warning("concurrency %d is more than the %d CPU(s)", tournament.concurrency, cpus)
            progress = _run_until_signal(executor(on_progress))
    except RefereeInternalError as exc:
        display.close()
        raise click.ClickException(f"{exc}; the tracebacks are in {log_file}") from None
    except PreflightError as exc:
        display.close()
        _say_broken(exc.broken)
        click.echo(
            f"preflight: {len(exc.broken)} entrant(s) not ready; nothing was stored. Fix them, or run with "
            f"--skip-broken to play without them (disqualified for the run)",
            err=True,
        )
        sys.exit(EXIT_PREFLIGHT)
    except StorageError as exc:
        display.close()
        raise _in_run(exc, store, len(tournament.schedule)) from None
    except failures as exc:
        display.close()
        raise click.ClickException(str(exc)) from None
    except (asyncio.CancelledError, KeyboardInterrupt):
        display.close()
        try:
            done = str(len(store.complete_ids()))
        except StoreError:  # the database failed too: what it stored before is kept
            done = "?"
        click.echo(
            f"interrupted: {done}/{len(tournament.schedule)} matches are stored; run again to resume",
            err=True,
        )
        sys.exit(130)
    finally:
        display.close()
    if isinstance(log, LogFile) and log.failed:
        click.echo(f"warning: {log_file} could not be written ({log.failed}): it misses records", err=True)
    _say_broken(tournament.broken, tail_only=True)
    for name, reason in tournament.disqualified.items():
        click.echo(f"disqualified: {name}: {reason}", err=True)
    for refusal in tournament.refusals:
        click.echo(f"refused: {refusal}", err=True)
    if progress.void:
        click.echo(
            f"{progress.void} match(es) void after retries (the referee's errors are in {log_file}); "
            "run again to retry them",
            err=True,
        )
    try:
        stored = store.matches()
        board = _board(league, store, stored)
    except StorageError as exc:
        raise _in_run(exc, store, progress.total) from None
    click.echo(leaderboard_table(board, league, f"{league.name} — {progress.done}/{progress.total} matches"))
    _say_settlement(league, stored)
    if report_dir is not None:
        try:
            click.echo(f"report: {_write_report(league, stored, report_dir)}")
        except OSError as exc:
            raise _StorageFailure(
                f"{report_dir}: the report was not written ({exc.strerror or exc}); every match played is "
                f"stored safely; `referee report {league_file}` writes it once there is room"
            ) from None
    store.close()
    forfeiters = _forfeited_everything(league, stored)
    for line in forfeiters:
        click.echo(line, err=True)
    if tournament.disqualified or tournament.skipped:
        click.echo(
            f"{tournament.skipped} match(es) not played: an entrant of theirs was disqualified or did not "
            f"start (nothing stored for them); run again to retry them (exit {EXIT_DISQUALIFIED})",
            err=True,
        )
        sys.exit(EXIT_DISQUALIFIED)
    if forfeiters:
        sys.exit(EXIT_FORFEITED)


def _dry_run(league: League, fresh: bool, at_once: int, on_dask: bool) -> list[str]:
    """What ``referee run --dry-run`` prints: the schedule's size, what is stored of it, and how long the
    rest would take. It only reads: no database is created, no seed drawn or stored. With no stored
    match to time, it times the bots of the matches to play as the preflight tries them
    (:func:`_timed_estimate`)."""
    database = league.database
    stored: dict[str, StoredMatch] = {}
    seconds: list[float] = []
    invalid: set[str] = set()
    state = f"no results database yet ({database}): nothing played"
    if database.is_file() and not database.stat().st_size:  # opened, SQLite would write its header
        state = f"nothing stored yet in {database}"
    elif database.is_file():
        try:
            store = Store(database, write=False)
        except StoreError as exc:
            raise _failure(exc, _unread(exc)) from None
        try:
            count, secret = store.match_count(), store.meta("secret_seed")
            known = league if league.seed is not None or secret is None else replace(league, seed=int(secret))
            if not fresh:
                league = replace(known, seed_secret=league.seed is None)
            try:
                store.claim(
                    league.path, league.name, league_settings(known) if known.seed is not None else ""
                )
                foreign = None
            except StoreError as exc:
                foreign = exc
            if foreign is not None:
                owner = store.owner().name
                state = f"{database} holds the results of another league, {owner!r}: the run would refuse"
            elif not count:
                state = f"nothing stored yet in {database}"
            elif fresh:
                state = (
                    f"--fresh: the {count} match(es) stored in {database} would be forgotten, a copy of them "
                    "kept beside it"
                )
            elif league.seed is None or store.meta("settings") != league_settings(league):
                state = (
                    f"{database} holds results of other league settings: the run would refuse, see --fresh"
                )
            else:
                stored = store.matches()
                seconds = store.match_seconds()
                league = with_cohorts(league, joined(store, league))
                changed = store.new_versions({e.name: fingerprint(e) for e in league.entrants})
                invalid = {match_id for ids in changed.values() for match_id in ids}
                state = f"results in {database}" + (
                    f"; {len(invalid)} of them by an older version of {', '.join(changed)}, played again"
                    if invalid
                    else ""
                )
        except StoreError as exc:
            raise _failure(exc, _unread(exc)) from None
        finally:
            store.close()
    if league.seed is None:  # a secret seed not drawn yet: any seed gives a schedule of the same size
        league = replace(league, seed=0, seed_secret=True)
    schedule = schedule_of(league, stored)
    complete = {i for i, m in stored.items() if m.status is MatchStatus.COMPLETE} - invalid
    played = sum(1 for match in schedule if match.match_id in complete)
    missing = len(schedule) - played
    tables = len({match.table_id for match in schedule})
    timed: list[str] = []
    at = f"at {at_once} match{'es' if at_once > 1 else ''} at once"
    if seconds:  # timed at the concurrency they were played at: at_once of them share the machine
        each = sum(seconds) / len(seconds)
        basis = f"{each:.1f}s a match, the mean of {len(seconds)} stored match(es)"
        parallel = float(at_once)
    else:
        pending = [m for m in schedule if m.match_id not in complete]
        each, basis, timed = _timed_estimate(league, pending or list(schedule), at_once)
        parallel, cores = _parallel(at_once)
        if parallel < at_once:
            at += f" (on {cores}: as {parallel:.0f})"
    estimate = (
        f"{eta_text(missing * each)} of match time, shared by the Dask cluster's workers"
        if on_dask
        else f"{eta_text(missing * each / parallel)} {at}"
    )
    if league.settling is not None:  # later batches depend on results not played yet: bound them
        cap = league.settling.max_matches
        estimate += f"; at most {eta_text(max(cap - played, 0) * each / (1 if on_dask else parallel))} " + (
            f"if it plays on to max_matches ({cap})"
        )
    return [
        f"dry run of {league.name}: {league.schedule_label}; nothing is played or written",
        f"schedule{' so far (the batches chosen from the results stored)' if league.settling else ''}: "
        f"{tables} tables, {len(schedule)} matches ({league.players} players, seating {league.seating})",
        f"{state}; {played} played, {missing} to play",
        *timed,
        f"estimate: {estimate} ({basis})",
    ]


def _timed_estimate(
    league: League, pending: list[ScheduledMatch], at_once: int
) -> tuple[float, str, list[str]]:
    """The mean seconds of work a match of ``pending`` should take, why, and the lines that say what
    was timed: samples of the schedule's lineups, ``at_once`` at a time (``referee.league.timing``).
    A bot that could not be timed is named, since the run's preflight would stop there too."""
    lineups = timing.samples(pending, at_once)

    async def measure() -> timing.Timings:
        async with open_launcher(None, confinement_of(league, log_dir_of(league))) as launcher:
            return await timing.time_bots(league, lineups, at_once, launcher)

    try:
        timed = asyncio.run(measure())
    except SandboxError as exc:
        timed = timing.Timings({}, {name: str(exc) for lineup in lineups for name in lineup})
    lines = []
    if timed.speeds:
        lines.append(
            f"timed on {len(lineups)} sample(s) of {timing.TIMING_DEALS} deals (start, decision): "
            + ", ".join(
                f"{name} {speed.start:.2f}s {1000 * speed.decision:.2f}ms"
                for name, speed in sorted(timed.speeds.items())
            )
        )
    for name, reason in sorted(timed.failures.items()):
        lines.append(
            f"not timed: {name}: {reason} (the run's preflight would stop there, exit {EXIT_PREFLIGHT}; "
            f"counted as {timing.ROUGH_START:g}s a start, {1000 * timing.ROUGH_DECISION:g}ms a decision)"
        )
    each = timed.match_seconds(league.rules, [match.entrants for match in pending])
    decisions = timing.decisions_per_seat(league.rules)
    return each, f"{each:.1f}s a match: each seat's start and {decisions} decisions, as timed", lines


def _parallel(at_once: int) -> tuple[float, str]:
    """How many matches at once the machine can play at full speed, and its CPUs in words: a match keeps
    about one CPU busy (one of its bots thinks at a time), so no more than the CPUs. (A machine busy with
    other work has less to give, but the samples were timed on it as it is now, as many at once.)"""
    cpus = _cpu_count()
    return float(min(at_once, cpus)), f"{cpus} CPU{'s' if cpus > 1 else ''}"


def _say_settlement(league: League, stored: dict[str, StoredMatch], err: bool = False) -> None:
    """For an ``until: settled`` league: whether its ranking is settled, and its weakest adjacent pair."""
    if league.settling is not None:
        click.echo(plan_of(league, stored).settlement.line(), err=err)


def _replay_new_versions(store: Store, league: League) -> None:
    """An entrant whose fingerprint changed since its matches were stored (docs/LEAGUE.md, "Bot
    versions"): says which matches that invalidates, and deletes them so that this run plays them again."""
    fingerprints = {entrant.name: fingerprint(entrant) for entrant in league.entrants}
    changed = store.new_versions(fingerprints)
    for name, ids in changed.items():
        shown = ", ".join(ids[:6]) + (f" and {len(ids) - 6} more" if len(ids) > 6 else "")
        click.echo(
            f"new version of {name}: its {len(ids)} stored match(es) are invalid and played again"
            + (f": {shown}" if ids else ""),
            err=True,
        )
    store.set_versions(fingerprints, list(changed))


EXIT_DISQUALIFIED: Final = 3
"""`referee run`'s exit status when an entrant was disqualified or a match left unplayed (docs/LEAGUE.md)."""
EXIT_PREFLIGHT: Final = 4
"""`referee run`'s exit status when entrants failed the preflight and the run stopped, storing nothing."""
EXIT_FORFEITED: Final = 7
"""`referee run`'s exit status when an entrant forfeited every match of it that is stored: its bot is
broken, not beaten, and a run that ends "successfully" would hide it (3 wins when both apply)."""


def _forfeited_everything(league: League, stored: dict[str, StoredMatch]) -> list[str]:
    """A line for each entrant of ``league`` that forfeited every complete match of it in ``stored``
    (at least one), with the fault that cost it the last of them (its cards masked while the deals of
    its table are secret)."""
    played: dict[str, int] = {}
    forfeited: dict[str, int] = {}
    last: dict[str, str] = {}
    schedule = schedule_of(league, stored)
    shown = disclosure(schedule, stored).deals_shown
    for scheduled in schedule:
        match = stored.get(scheduled.match_id)
        if match is None or match.status is not MatchStatus.COMPLETE:
            continue
        for seat, name in enumerate(scheduled.entrants):
            played[name] = played.get(name, 0) + 1
            if seat in match.record.forfeits:
                forfeited[name] = forfeited.get(name, 0) + 1
                own = [fault for fault in match.faults if fault.seat == seat]
                if own:
                    fault = own[-1]
                    detail = fault.detail if shown(match) else mask_cards(fault.detail)
                    last[name] = f"deal {fault.deal}, {fault.kind}: {detail}"
    lines = []
    for entrant in league.entrants:
        count = played.get(entrant.name, 0)
        if count and forfeited.get(entrant.name, 0) == count:
            cause = f"; the last one in {last[entrant.name]}" if entrant.name in last else ""
            lines.append(
                f"forfeited: {entrant.name} forfeited every match it played ({count} of {count}){cause} "
                f"(exit {EXIT_FORFEITED})"
            )
    return lines


def _say_broken(broken: list[Broken], tail_only: bool = False) -> None:
    """Each entrant that failed the preflight, and the last lines of its output."""
    for item in broken:
        if not tail_only:
            click.echo(f"preflight: {item.name}: {item.reason}", err=True)
        elif item.output:
            click.echo(f"preflight: {item.name} failed; its last output:", err=True)
        for line in item.output:
            click.echo(f"  | {line}", err=True)


def _cpu_count() -> int:
    """CPUs this process may run on (its affinity, where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _say(line: str) -> None:
    click.echo(line, err=True)


@main.command("leaderboard")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="table", show_default=True)
@click.option("--crosstable", "cross", is_flag=True, help="Then the crosstable, as the HTML report shows it.")
def leaderboard_command(league_file: str, fmt: str, cross: bool) -> None:
    """Prints the leaderboard of LEAGUE from its stored results (sorted by μ − 3σ)."""
    store, league = _results(league_file)
    stored = _stored(store)  # decoded once: the board, the crosstable and the settlement all read it
    board = _ratings(league, stored)
    click.echo(FORMATS[fmt](board, league) if fmt != "table" else leaderboard_table(board, league), nl=False)
    if cross:
        schedule, names = schedule_of(league, stored), [s.entrant for s in board.standings]
        click.echo("\n" + crosstable_text(crosstable(names, schedule, stored, board.mode)), nl=False)
    _say_settlement(league, stored, err=fmt != "table")
    for name, reason in store.disqualified().items():  # JSON, CSV, Markdown: on stderr, to stay parseable
        click.echo(f"disqualified: {name}: {reason}", err=fmt != "table")


@main.command("replay")
@click.argument("source", metavar="LEAGUE|FILE.jsonl", type=click.Path(dir_okay=False))
@click.argument("match_id", required=False)
@click.option("--deal", type=click.IntRange(min=1), help="Only this deal, card by card.")
def replay_command(source: str, match_id: str | None, deal: int | None) -> None:
    """Shows a match deal by deal, with every pyramid drawn as on paper; --deal N shows deal N card by card.

    From a league file, MATCH_ID is an id from `referee matches` (like r1:alice,bob) or a schedule position
    from 1. A file ending in .jsonl is a match record instead: one match of `referee match --record`, or
    a league's `referee export`, whose MATCH_ID is an id or a line from 1 (leave it out for a file of
    one match). A league's deals show once every match of their table is played.
    """
    shown, deals_shown, where = _to_replay(source, match_id)
    if deal is None:
        click.echo(replay_text(shown, deals_shown), nl=False)
        return
    if not deals_shown:
        raise click.ClickException(f"match {shown.match_id} of {where}: {HIDDEN_NOTE}")
    if deal > len(shown.record.deals):
        raise click.BadParameter(
            f"match {shown.match_id} has deals 1 to {len(shown.record.deals)}", param_hint="--deal"
        )
    click.echo("seats: " + ", ".join(f"{seat}={name}" for seat, name in enumerate(shown.record.seats)))
    click.echo(deal_by_card(shown.record, deal))


def _to_replay(source: str, match_id: str | None) -> tuple[Replayable, bool, str]:
    """The match ``referee replay`` shows, whether its deals may be shown, and where it comes from."""
    if source.endswith(".jsonl"):
        try:
            recorded = find_record(Path(source), match_id)
        except NoSuchRecord as exc:
            raise click.ClickException(str(exc)) from None
        except RecordsError as exc:
            raise InputError(str(exc)) from None
        return recorded, recorded.deals_shown, source
    store, league = _results(source)
    if match_id is None:
        raise click.UsageError(
            f"which match of {source}? give its id or schedule position (`referee matches {source}`)"
        )
    stored = _stored(store)
    schedule = schedule_of(league, stored)
    if match_id.isdigit() and 1 <= int(match_id) <= len(schedule):
        match_id = schedule[int(match_id) - 1].match_id
    if match_id not in stored:
        raise click.ClickException(
            f"no stored match {match_id!r} in {league.database}; `referee matches {source}` lists the "
            "stored ones"
        )
    match = stored[match_id]
    return match, disclosure(schedule, stored).deals_shown(match), str(league.database)


@main.command("matches")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False))
@click.option("--entrant", metavar="NAME", help="Only the matches this entrant played.")
@click.option("--status", type=click.Choice(["complete", "void"]), help="Only the matches of this status.")
def matches_command(league_file: str, entrant: str | None, status: str | None) -> None:
    """Lists the stored matches of LEAGUE: position, id, status, points per seat, faults per entrant.

    Results only, never a deal. `referee replay LEAGUE ID` shows one of them (ID or position).
    """
    store, league = _results(league_file)
    stored = _stored(store)
    known = {e.name for e in league.entrants} | {name for m in stored.values() for name in m.record.seats}
    if entrant is not None and entrant not in known:
        raise click.BadParameter(
            f"no entrant {entrant!r} in {league.name}; its entrants are {', '.join(sorted(known))}",
            param_hint="--entrant",
        )
    click.echo(matches_text(schedule_of(league, stored), stored, entrant, status), nl=False)


@main.command("export")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["jsonl"]), default="jsonl", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    default="-",
    help="File (default stdout).",
)
def export_command(league_file: str, fmt: str, output: Path) -> None:
    """Writes every stored match of LEAGUE, one JSON object per line (docs/FORMATS.md)."""
    store, league = _results(league_file)
    stored = _stored(store)
    lines = list(export_lines(league, schedule_of(league, stored), stored))
    if str(output) == "-":
        for line in lines:
            click.echo(line)
        return
    try:
        output.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"{output}: cannot write the export: {exc.strerror or exc}") from None
    click.echo(
        f"export: {len(lines)} match{'es' if len(lines) != 1 else ''} of {league.name} written to {output}"
    )


@main.command("check", context_settings={"ignore_unknown_options": True})
@click.option(
    "--cwd", type=click.Path(file_okay=False, exists=True, path_type=Path), help="The bot's folder."
)
@click.option(
    "--logs",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the bot's stdout and stderr (NAME.log), as referee match --logs keeps them.",
)
@sandbox_options
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def check_command(
    cwd: Path | None,
    logs: Path | None,
    sandbox: str,
    ro_paths: tuple[Path, ...],
    command: tuple[str, ...],
) -> None:
    """Conformance run of one bot: referee check -- python my_bot.py

    Plays a 2-, 3- and 4-player match against random opponents, each with a fresh process of COMMAND in
    its sandbox, as a league does; reports the handshake, decision latency p50/p99 and any fault. Exit
    code 0 only if clean.
    """
    report = _check(command, cwd, sandbox, ro_paths, logs)
    click.echo("\n".join(report.lines()))
    sys.exit(0 if report.clean else 1)


def _check(
    command: tuple[str, ...],
    cwd: Path | None,
    sandbox: str,
    ro_paths: tuple[Path, ...],
    logs: Path | None = None,
) -> CheckReport:
    paths = tuple(path.resolve() for path in ro_paths)
    if logs:
        try:
            logs.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise click.ClickException(f"{logs}: cannot make the log folder: {exc.strerror or exc}") from None
    confinement = Confinement(SandboxMode(sandbox), hidden=(logs.resolve(),) if logs else ())
    try:
        return _run_until_signal(
            check_bot(tuple(command), cwd, confinement=confinement, paths=paths, log_dir=logs)
        )
    except SandboxError as exc:
        raise click.ClickException(str(exc)) from None
    except (asyncio.CancelledError, KeyboardInterrupt):
        click.echo("interrupted: the check did not finish", err=True)
        sys.exit(130)


@main.command("submit", context_settings={"ignore_unknown_options": True})
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
    league = _league(league_file)
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


@main.command("report")
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False))
@click.option(
    "-o", "--output", type=click.Path(file_okay=False, path_type=Path), default="report", show_default=True
)
@click.option("--serve", is_flag=True, help="Then serve it at http://127.0.0.1:PORT until Ctrl-C.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
def report_command(league_file: str, output: Path, serve: bool, port: int) -> None:
    """Writes LEAGUE's results as a static HTML site (opens from disk, no network needed)."""
    store, league = _results(league_file)
    index = _write_report(league, _stored(store), output)
    click.echo(f"report: {index}")
    if serve:
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(output))
        with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
            click.echo(f"serving at http://127.0.0.1:{server.server_address[1]}/  (Ctrl-C stops)")
            with contextlib.suppress(KeyboardInterrupt):
                server.serve_forever()


# -- referee compare --------------------------------------------------------------------------------------


class _CompareUsageError(click.UsageError):
    exit_code = EXIT_UNUSABLE


class _CompareCommand(click.Command):
    """``referee compare`` exits 0, 1 or 2 with a verdict, so a wrong flag or argument must not exit 2
    (click's usage code, which would read as "undecided" in CI): here it exits ``EXIT_UNUSABLE``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise _CompareUsageError(exc.format_message(), exc.ctx) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _CompareUsageError(exc.format_message(), exc.ctx) from None


class _Unusable(click.ClickException):
    """A comparison that cannot give a verdict: a bot that does not load or start, a bad hypothesis, no
    sandbox where one is required, a referee that keeps failing. One line, exit ``EXIT_UNUSABLE``."""

    exit_code = EXIT_UNUSABLE


class _CompareDisplay:
    """A running comparison on stderr (stdout stays the result's, parseable with --json): one updating
    line on a terminal, else a line per round, at most one a second (logs, CI)."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.live = sys.stderr.isatty()
        self.bar: Any = None
        self.last = -math.inf

    def __call__(self, snapshot: Snapshot) -> None:
        text = progress_text(snapshot)
        if self.live:
            if self.bar is None:
                self.bar = Bar(TextColumn("{task.fields[info]}"), console=Console(stderr=True))
                self.bar.start()
                self.task = self.bar.add_task("compare", total=snapshot.total, info="")
            self.bar.update(self.task, completed=snapshot.done, info=text)
        elif snapshot.done % self.players == 0 and time.monotonic() - self.last >= 1.0:
            self.last = time.monotonic()
            click.echo(text, err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


SPRT_OPTIONS: Final = ("h0", "h1", "alpha", "beta")


@main.command("compare", cls=_CompareCommand)
@click.argument("a")
@click.argument("b")
@click.option(
    "--against",
    multiple=True,
    metavar="BOT",
    help="An opponent, filling the seats beside the candidate in order (repeated if fewer); repeat it for "
    f"several. Default: {OPPONENT}.",
)
@click.option(
    "--players", type=click.IntRange(2, 4), default=4, show_default=True, help="Seats at the table."
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    help="Fixes every deal, to replay a comparison; default: a fresh one, printed at the end.",
)
@click.option(
    "--matches",
    type=click.IntRange(min=1),
    default=400,
    show_default=True,
    help="Matches at most (two per pair; exactly this many with --fixed), rounded down to whole rounds "
    "of 2 x players.",
)
@click.option(
    "--sprt/--fixed",
    default=True,
    show_default=True,
    help="Stop as soon as a sequential test decides between --h0 and --h1 (the default), or play every "
    "one of --matches and judge by the 95% interval.",
)
@click.option("--h0", type=float, default=0.0, show_default=True, help="H0: A - B points per match.")
@click.option("--h1", type=float, default=2.0, show_default=True, help="H1: A - B points per match.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="P(accept H1 | H0).")
@click.option("--beta", type=float, default=0.05, show_default=True, help="P(accept H0 | H1).")
@click.option(
    "--concurrency", type=click.IntRange(min=1), default=1, show_default=True, help="Matches at once."
)
@table_options
@click.option("--json", "as_json", is_flag=True, help="The result as JSON on stdout (docs/COMPARE.md).")
@sandbox_options
@log_level_option("warning", "on stderr")
def compare_command(
    a: str,
    b: str,
    against: tuple[str, ...],
    players: int,
    seed: int | None,
    matches: int,
    sprt: bool,
    h0: float,
    h1: float,
    alpha: float,
    beta: float,
    concurrency: int,
    rules: tuple[str, ...],
    per_action: float,
    bank: float,
    max_faults: int,
    logs: Path | None,
    as_json: bool,
    sandbox: str,
    ro_paths: tuple[Path, ...],
    log_level: str,
) -> None:
    """Is bot A better than bot B? Both play the same deals from the same seat against the same opponents.

    A and B are bots as `referee match` takes them: a command line (quoted) or a module:Class, each
    named as it names itself. Reports the mean points difference per match (A - B) with its 95%
    confidence interval and the likelihood that A is better, and stops as soon as a sequential test
    decides (--fixed plays every one of --matches instead). Exit code: 0 A is better, 1 A is not
    better, 2 undecided, 4 no verdict (a bad option or bot; one line says which). docs/COMPARE.md has
    the method.
    """
    context = click.get_current_context()
    given = [
        f"--{name}"
        for name in SPRT_OPTIONS
        if context.get_parameter_source(name) is not ParameterSource.DEFAULT
    ]
    if given and not sprt:
        raise click.UsageError(f"{', '.join(given)} apply only to the sequential test, not with --fixed")
    parsed = _parse_rules(players, rules)
    if seed is None:
        seed = secrets.randbits(SEED_BITS)  # printed at the end, when every bot has stopped
    try:
        plan = make_plan(
            a,
            b,
            against,
            parsed,
            seed,
            matches,
            Sprt(h0, h1, alpha, beta) if sprt else None,
            TimeControl(per_action, bank),
            max_faults,
            concurrency,
            tuple(path.resolve() for path in ro_paths),
        )
    except (BotSpecError, CompareError) as exc:
        raise _Unusable(str(exc)) from None
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    confinement = Confinement(SandboxMode(sandbox), hidden=(logs.resolve(),) if logs else ())
    display = _CompareDisplay(players)
    try:
        with referee_logging(log_level):
            result = _run_until_signal(compare(plan, display, logs, confinement))
    except (BotSpecError, SandboxError, RefereeInternalError) as exc:
        display.close()
        raise _Unusable(str(exc)) from None
    except (asyncio.CancelledError, KeyboardInterrupt):
        display.close()
        click.echo(f"interrupted: no verdict; seed {seed} (--seed {seed} plays the same deals)", err=True)
        sys.exit(130)
    finally:
        display.close()
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        click.echo("\n".join(result.lines()))
        click.echo(f"seed {seed} (--seed {seed} replays this comparison)")
    sys.exit(int(result.verdict))


main.add_command(serve)
