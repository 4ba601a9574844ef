"""``referee run``: plays a league's matches that are not stored yet and prints its leaderboard, or with
``--dry-run`` says how long that would take. The league logic is below, in ``referee.run.league_run`` and
``referee.run.dry_run``; it is imported inside the functions that use it so that ``referee run --help``
loads only click."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from referee.cli.common import listen_options, log_level_option, run_until_signal, say

if TYPE_CHECKING:
    import asyncio

    from referee.cli.display import RunDisplay
    from referee.cli.storage import StoreFailure
    from referee.league.config import League
    from referee.report.site import Written
    from referee.results.errors import StorageError
    from referee.results.store import Store
    from referee.run.competition import Progress, RunReport
    from referee.run.league_run import LeagueRun

LOGGER = logging.getLogger(__name__)

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
@listen_options("Listen for remote entrants here")
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
    listen: str | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    insecure: bool,
) -> None:
    """Plays every match of LEAGUE that is not stored yet, then prints the leaderboard.

    Interrupt it at any moment (Ctrl-C, SIGTERM, even kill -9) and run it again: it resumes. The matches
    are played in this process, or on Dask workers with --workers or --dask: the results are the same.
    The bots' logs and the referee's own (referee.log) are in the folder beside the results database.
    """
    from referee.cli.storage import StorageFailure, failure, league_of, unread
    from referee.remote.settings import RemoteSettings, RemoteSettingsError
    from referee.results.errors import StorageError, StorageFault, StoreError
    from referee.run.league_run import FolderError, LeagueRun

    if workers is not None and dask_address is not None:
        raise click.UsageError("give --workers (a cluster on this machine) or --dask (a running one)")
    league = league_of(league_file)
    if workers is None and dask_address is None:
        workers, dask_address = league.workers, league.dask
    if dry_run:
        from referee.run.dry_run import dry_run as plan_dry_run

        try:
            lines = plan_dry_run(
                league, fresh, workers or (concurrency or league.concurrency), bool(dask_address)
            )
        except StoreError as exc:
            raise failure(exc, unread(exc)) from None
        click.echo("\n".join(lines))
        return
    try:
        door = RemoteSettings(listen, tls_cert, tls_key, insecure)
        run = LeagueRun.open(
            league, fresh, report_dir, concurrency, workers, dask_address, skip_broken, say, door
        )
    except RemoteSettingsError as exc:
        raise click.ClickException(str(exc)) from None
    except StoreError as exc:
        damaged = isinstance(exc, StorageError) and exc.fault is StorageFault.DAMAGED
        raise failure(
            exc, "nothing was read from it or written to it" if damaged else "nothing was played"
        ) from None
    except FolderError as exc:
        raise StorageFailure(str(exc)) from None
    click.get_current_context().call_on_close(run.competition.close)  # the run lock goes with it
    report = _play(run, report_dir, log_level)
    _finish(run, report, report_dir, league_file)


def _on_progress(
    display: RunDisplay, league: League, seed: int, report_dir: Path | None
) -> Callable[[Progress], None]:
    """Shows each step of the run, and rewrites the live report at most every ``REPORT_EVERY`` seconds."""
    import asyncio

    from referee.report.site import Written

    pending: list[asyncio.Future[Path | None]] = []
    last_report = [0.0]
    written = Written()  # one rewrite at a time (below), so the rewrites can share it

    def on_progress(progress: Progress) -> None:
        display(progress)
        if report_dir is None or (pending and not pending[-1].done()):
            return
        if time.monotonic() - last_report[0] >= REPORT_EVERY or progress.done == progress.total:
            # In a thread with its own connection: rendering must never stall the bots' clocks.
            last_report[0] = time.monotonic()
            rewrite = asyncio.to_thread(_report_in_thread, league, seed, report_dir, written)
            pending.append(asyncio.ensure_future(rewrite))

    return on_progress


def _play(run: LeagueRun, report_dir: Path | None, log_level: str) -> RunReport:
    """Plays the run with its display; an error, a failed preflight or an interruption is its line and
    exit status, with what is stored said."""
    import asyncio

    from referee.cli.display import RunDisplay, say_broken
    from referee.logs import referee_logging
    from referee.match.faults import RefereeInternalError
    from referee.results.errors import StorageError, StoreError
    from referee.run.dry_run import EXIT_PREFLIGHT, cpu_count
    from referee.run.preflight import PreflightError

    display = RunDisplay(run.league, run.concurrency)
    warnings = run.warnings()
    for line in warnings:
        click.echo(line, err=True)
    log_file, store = run.log_file, run.store
    try:
        with referee_logging(log_level, log_file) as log:
            if warnings:
                LOGGER.warning("concurrency %d is more than the %d CPU(s)", run.concurrency, cpu_count())
            on_progress = _on_progress(display, run.league, run.competition.seed, report_dir)
            report = run_until_signal(run.play(on_progress))
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
        raise _in_run(exc, store, len(run.competition.schedule)) from None
    except run.failures as exc:
        display.close()
        raise click.ClickException(str(exc)) from None
    except (asyncio.CancelledError, KeyboardInterrupt):
        display.close()
        try:
            done = str(len(store.complete_ids()))
        except StoreError:  # the database failed too: what it stored before is kept
            done = "?"
        click.echo(
            f"interrupted: {done}/{len(run.competition.schedule)} matches are stored; run again to resume",
            err=True,
        )
        sys.exit(130)
    finally:
        display.close()
    _say_log_failure(log, log_file)
    return report


def _say_log_failure(log: logging.Handler, log_file: Path) -> None:
    """A warning when the referee's log file could not be written: the run went on without it."""
    from referee.logs import LogFile

    if isinstance(log, LogFile) and log.failed:
        click.echo(f"warning: {log_file} could not be written ({log.failed}): it misses records", err=True)


def _finish(run: LeagueRun, report: RunReport, report_dir: Path | None, league_file: str) -> None:
    """After the run: what was left out and why, the leaderboard, the report, and the exit status, all
    from the standings the run ended with (read, planned, rated and stored once, by the driver). Only
    the report's match pages and the fault of an entrant that forfeited everything decode a record
    (``report.text.forfeited_lines``)."""
    from referee.cli.storage import StorageFailure, say_settlement
    from referee.report.site import rewrite_report
    from referee.report.text import forfeited_lines, leaderboard_table
    from referee.results.errors import StorageError
    from referee.run.league_run import EXIT_DISQUALIFIED, EXIT_FORFEITED, unplayed

    league, store, progress, standings = run.league, run.store, report.progress, report.standings
    for line in run.summary(report):
        click.echo(line, err=True)
    try:
        forfeiters = forfeited_lines(
            league, standings.schedule, standings.stored, store.stream, EXIT_FORFEITED
        )
    except StorageError as exc:
        raise _in_run(exc, store, progress.total) from None
    title = f"{league.name} — {progress.done}/{progress.total} matches"
    click.echo(leaderboard_table(standings.board, league, title))
    say_settlement(standings)
    if report_dir is not None:
        try:
            index = rewrite_report(league, run.competition.seed, report_dir, store, read=standings)
        except OSError as exc:
            raise StorageFailure(
                f"{report_dir}: the report was not written ({exc.strerror or exc}); every match played is "
                f"stored safely; `referee report {league_file}` writes it once there is room"
            ) from None
        click.echo(f"report: {index}")
    store.close()
    for line in forfeiters:
        click.echo(line, err=True)
    if (unplayed_line := unplayed(report)) is not None:
        click.echo(unplayed_line, err=True)
        sys.exit(EXIT_DISQUALIFIED)
    if forfeiters:
        sys.exit(EXIT_FORFEITED)


def _in_run(exc: StorageError, store: Store, total: int) -> StoreFailure:
    """The line for a storage fault during a run: how much of the schedule is safely stored."""
    from referee.cli.storage import failure
    from referee.results.errors import StorageFault, StoreError

    if exc.fault is StorageFault.DAMAGED:
        return failure(exc, "the run stopped and wrote nothing more to it")
    try:
        stored = f"{len(store.complete_ids())} of {total} scheduled matches are stored safely"
    except StoreError:
        stored = "the matches stored before are kept"
    return failure(exc, f"{stored} (a match in play when it failed is not: the next run plays it)")


def _report_in_thread(league: League, seed: int, folder: Path, written: Written) -> Path | None:
    """Rewrites the live report (only the match pages that changed since ``written``); one that cannot
    be written (a full disk) is logged and skipped: the run goes on, and its end says what went wrong."""
    from referee.report.site import rewrite_report
    from referee.results.errors import StoreError
    from referee.results.store import Store

    try:
        store = Store(league.database, write=False)
        try:
            return rewrite_report(league, seed, folder, store, live=True, written=written)
        finally:
            store.close()
    except (OSError, StoreError) as exc:
        LOGGER.warning("the live report in %s was not rewritten: %s", folder, exc)
        return None
