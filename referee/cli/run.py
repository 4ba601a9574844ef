"""``referee run``: plays a league's matches that are not stored yet and prints its leaderboard, or with
``--dry-run`` says how long that would take. Its league logic is to move below the CLI (issue #25); until
then it lives here, imported inside the functions that use it so that ``referee run --help`` loads only
click."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import click

from referee.cli.common import cpu_count, log_level_option, run_until_signal, say

if TYPE_CHECKING:
    import asyncio

    from referee.cli.display import RunDisplay
    from referee.cli.storage import StoreFailure
    from referee.league.config import League
    from referee.league.ratings import Leaderboard
    from referee.league.schedule import ScheduledMatch
    from referee.league.storage import StorageError
    from referee.league.store import Store, StoredMatch
    from referee.league.tournament import Progress, Tournament

LOGGER = logging.getLogger(__name__)
Executor = Callable[[Callable[["Progress"], None]], Coroutine[Any, Any, "Progress"]]

EXIT_DISQUALIFIED: Final = 3
"""`referee run`'s exit status when an entrant was disqualified or a match left unplayed (docs/LEAGUE.md)."""
EXIT_PREFLIGHT: Final = 4
"""`referee run`'s exit status when entrants failed the preflight and the run stopped, storing nothing."""
EXIT_FORFEITED: Final = 7
"""`referee run`'s exit status when an entrant forfeited every match of it that is stored: its bot is
broken, not beaten, and a run that ends "successfully" would hide it (3 wins when both apply)."""
REPORT_EVERY = 2.0
"""Seconds between rewrites of a live report (each one reads every stored match)."""


@click.command("run")
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
    from referee.cli.storage import failure, league_of
    from referee.league.storage import StoreError
    from referee.league.tournament import Tournament, log_dir_of

    if workers is not None and dask_address is not None:
        raise click.UsageError("give --workers (a cluster on this machine) or --dask (a running one)")
    league = league_of(league_file)
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
        raise failure(exc, "nothing was played") from None
    log_dir = log_dir_of(league)
    _make_folders(report_dir, log_dir)
    hidden = (report_dir.resolve(),) if report_dir is not None else ()
    tournament = Tournament(league, store, log_dir, concurrency, hidden, skip_broken)
    log_file = log_dir / "referee.log"
    progress = _play(tournament, league, store, report_dir, log_file, log_level, workers, dask_address)
    _finish(tournament, league, store, progress, report_dir, league_file, log_file)


def _make_folders(report_dir: Path | None, log_dir: Path) -> None:
    """The report's folder and the logs' (the report's before any bot starts, so that its sandbox masks
    it); one that cannot be made is one line, with nothing played."""
    from referee.cli.storage import StorageFailure

    for folder in (report_dir, log_dir):
        try:
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageFailure(
                f"{folder}: cannot make this folder ({exc.strerror or exc}); nothing was played; free some "
                "space or make its parent writable, and run again"
            ) from None


def _executor(
    tournament: Tournament, workers: int | None, dask_address: str | None
) -> tuple[Executor, tuple[type[Exception], ...]]:
    """What plays the matches (in this process, or on Dask), and the errors of its that end a run with a
    line."""
    from referee.match.sandbox import SandboxError

    if workers is None and dask_address is None:
        return tournament.run, (SandboxError,)
    # Dask is imported only when it is used.
    from referee.league.dask_executor import DaskExecutor, ExecutorError

    return DaskExecutor(tournament, dask_address, workers, say=say).run, (SandboxError, ExecutorError)


def _on_progress(display: RunDisplay, league: League, report_dir: Path | None) -> Callable[[Progress], None]:
    """Shows each step of the run, and rewrites the live report at most every ``REPORT_EVERY`` seconds."""
    import asyncio

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

    return on_progress


def _play(
    tournament: Tournament,
    league: League,
    store: Store,
    report_dir: Path | None,
    log_file: Path,
    log_level: str,
    workers: int | None,
    dask_address: str | None,
) -> Progress:
    """Plays the run with its display; an error, a failed preflight or an interruption is its line and
    exit status, with what is stored said."""
    import asyncio

    from referee.cli.display import RunDisplay, say_broken
    from referee.league.preflight import PreflightError
    from referee.league.storage import StorageError, StoreError
    from referee.logs import referee_logging
    from referee.match.faults import RefereeInternalError

    display = RunDisplay(league, tournament.concurrency)
    cpus = cpu_count()
    if tournament.concurrency > cpus:
        click.echo(
            f"warning: concurrency {tournament.concurrency} is more than the {cpus} CPU(s) of this machine; "
            "bots that wait for a CPU run out of time, and their timeouts are charged to them",
            err=True,
        )
    executor, failures = _executor(tournament, workers, dask_address)
    try:
        with referee_logging(log_level, log_file) as log:
            if tournament.concurrency > cpus:
                LOGGER.warning("concurrency %d is more than the %d CPU(s)", tournament.concurrency, cpus)
            progress = run_until_signal(executor(_on_progress(display, league, report_dir)))
    except RefereeInternalError as exc:
        display.close()
        raise click.ClickException(f"{exc}; the tracebacks are in {log_file}") from None
    except PreflightError as exc:
        display.close()
        say_broken(exc.broken)
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
    _say_log_failure(log, log_file)
    return progress


def _say_log_failure(log: logging.Handler, log_file: Path) -> None:
    """A warning when the referee's log file could not be written: the run went on without it."""
    from referee.logs import LogFile

    if isinstance(log, LogFile) and log.failed:
        click.echo(f"warning: {log_file} could not be written ({log.failed}): it misses records", err=True)


def _finish(
    tournament: Tournament,
    league: League,
    store: Store,
    progress: Progress,
    report_dir: Path | None,
    league_file: str,
    log_file: Path,
) -> None:
    """After the run: what was left out and why, the leaderboard, the report, and the exit status."""
    from referee.cli.display import say_broken
    from referee.cli.storage import StorageFailure, say_settlement, write_league_report
    from referee.league.storage import StorageError
    from referee.report.text import leaderboard_table

    say_broken(tournament.broken, tail_only=True)
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
    say_settlement(league, stored)
    if report_dir is not None:
        try:
            click.echo(f"report: {write_league_report(league, stored, report_dir)}")
        except OSError as exc:
            raise StorageFailure(
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


def _store(league: League, fresh: bool = False) -> tuple[Store, League]:
    from referee.cli.storage import failure
    from referee.league.storage import StorageError, StorageFault, StoreError
    from referee.league.tournament import open_store

    try:
        return open_store(league, fresh, say=say)
    except StoreError as exc:
        damaged = isinstance(exc, StorageError) and exc.fault is StorageFault.DAMAGED
        raise failure(
            exc, "nothing was read from it or written to it" if damaged else "nothing was played"
        ) from None


def _in_run(exc: StorageError, store: Store, total: int) -> StoreFailure:
    """The line for a storage fault during a run: how much of the schedule is safely stored."""
    from referee.cli.storage import failure
    from referee.league.storage import StorageFault, StoreError

    if exc.fault is StorageFault.DAMAGED:
        return failure(exc, "the run stopped and wrote nothing more to it")
    try:
        stored = f"{len(store.complete_ids())} of {total} scheduled matches are stored safely"
    except StoreError:
        stored = "the matches stored before are kept"
    return failure(exc, f"{stored} (a match in play when it failed is not: the next run plays it)")


def _board(league: League, store: Store, stored: dict[str, StoredMatch]) -> Leaderboard:
    """The leaderboard of the stored results, stored with them."""
    from referee.cli.storage import ratings

    board = ratings(league, stored)
    store.write_ratings(list(board.history))
    return board


def _report_in_thread(league: League, folder: Path) -> Path | None:
    """Rewrites the live report; one that cannot be written (a full disk) is logged and skipped: the
    run goes on, and its end says what went wrong."""
    from referee.cli.storage import write_league_report
    from referee.league.storage import StoreError
    from referee.league.store import Store

    try:
        store = Store(league.database, write=False)
        try:
            return write_league_report(league, store.matches(), folder, live=True)
        finally:
            store.close()
    except (OSError, StoreError) as exc:
        LOGGER.warning("the live report in %s was not rewritten: %s", folder, exc)
        return None


def _dry_run(league: League, fresh: bool, at_once: int, on_dask: bool) -> list[str]:
    """What ``referee run --dry-run`` prints: the schedule's size, what is stored of it, and how long the
    rest would take. It only reads: no database is created, no seed drawn or stored. With no stored
    match to time, it times the bots of the matches to play as the preflight tries them
    (:func:`_timed_estimate`)."""
    from dataclasses import replace

    from referee.league.tournament import schedule_of
    from referee.match.outcome import MatchStatus
    from referee.report.text import eta_text

    league, state, stored, seconds, invalid = _dry_run_state(league, fresh)
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


def _dry_run_state(
    league: League, fresh: bool
) -> tuple[League, str, dict[str, StoredMatch], list[float], set[str]]:
    """For :func:`_dry_run`: the league as a run would see it, what its database holds in words, and the
    stored matches, their durations and the ids a new bot version invalidates, all only read."""
    from referee.cli.storage import failure, unread
    from referee.league.storage import StoreError
    from referee.league.store import Store

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
            raise failure(exc, unread(exc)) from None
        try:
            league, state, stored, seconds, invalid = _dry_run_stored(store, league, fresh)
        except StoreError as exc:
            raise failure(exc, unread(exc)) from None
        finally:
            store.close()
    return league, state, stored, seconds, invalid


def _dry_run_stored(
    store: Store, league: League, fresh: bool
) -> tuple[League, str, dict[str, StoredMatch], list[float], set[str]]:
    """:func:`_dry_run_state` of a database that exists: whose results it holds, and which of them count."""
    from dataclasses import replace

    from referee.league.storage import StoreError
    from referee.league.tournament import joined, league_settings, with_cohorts
    from referee.league.versions import fingerprint

    database = league.database
    stored: dict[str, StoredMatch] = {}
    seconds: list[float] = []
    invalid: set[str] = set()
    count, secret = store.match_count(), store.meta("secret_seed")
    known = league if league.seed is not None or secret is None else replace(league, seed=int(secret))
    if not fresh:
        league = replace(known, seed_secret=league.seed is None)
    try:
        store.claim(league.path, league.name, league_settings(known) if known.seed is not None else "")
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
        state = f"{database} holds results of other league settings: the run would refuse, see --fresh"
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
    return league, state, stored, seconds, invalid


def _timed_estimate(
    league: League, pending: list[ScheduledMatch], at_once: int
) -> tuple[float, str, list[str]]:
    """The mean seconds of work a match of ``pending`` should take, why, and the lines that say what
    was timed: samples of the schedule's lineups, ``at_once`` at a time (``referee.league.timing``).
    A bot that could not be timed is named, since the run's preflight would stop there too."""
    import asyncio

    from referee.league import timing
    from referee.league.tournament import confinement_of, log_dir_of
    from referee.match.sandbox import SandboxError
    from referee.match.setup import open_launcher

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
    cpus = cpu_count()
    return float(min(at_once, cpus)), f"{cpus} CPU{'s' if cpus > 1 else ''}"


def _replay_new_versions(store: Store, league: League) -> None:
    """An entrant whose fingerprint changed since its matches were stored (docs/LEAGUE.md, "Bot
    versions"): says which matches that invalidates, and deletes them so that this run plays them again."""
    from referee.league.versions import fingerprint

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


def _forfeited_everything(league: League, stored: dict[str, StoredMatch]) -> list[str]:
    """A line for each entrant of ``league`` that forfeited every complete match of it in ``stored``
    (at least one), with the fault that cost it the last of them (its cards masked while the deals of
    its table are secret)."""
    from referee.league.tournament import schedule_of
    from referee.match.outcome import MatchStatus
    from referee.report.disclosure import disclosure, mask_cards

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
