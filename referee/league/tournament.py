"""Runs a league: builds the entrants, plays every missing match of the schedule, stores each one.

The in-process asyncio executor: up to ``concurrency`` matches at once on one event loop. Every match gets
fresh bot processes (each in a fresh sandbox), so no bot carries anything from one match to the next —
the duplicate format replays a table's deals from other seats, and a bot that remembered them would know
every hand. To make that cheap, each worker starts the bots of its next match while the current one
plays. Each finished match is committed before it is counted; an interrupted run loses only the matches
that were in flight, and the next run plays them again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from referee.league.adaptive import Plan, Settlement, plan
from referee.league.config import Entrant, League
from referee.league.location import backup_path, companions
from referee.league.preflight import Broken, PreflightError, preflight, tail
from referee.league.schedule import ScheduledMatch, build_schedule
from referee.league.store import Store, StoredMatch, settings_fingerprint
from referee.match.bots import BotSpec, BotSpecError
from referee.match.faults import FaultPolicy, RefereeInternalError
from referee.match.launcher import BotProcess, Confinement, Launcher, RemoteSource, interrupted
from referee.match.outcome import MatchOutcome, MatchStatus
from referee.match.runner import LocalSeat, RemoteSeat, Seat, play_match
from referee.match.setup import open_launcher
from referee.remote.lobby import Absent

BUILD_TIMEOUT: Final = 600.0
VOID_RETRIES: Final = 2
START_FAILURES: Final = 3
"""Failed starts in a row after which an entrant is disqualified for the rest of the run. A match whose bot
does not start is not played (nor stored): it goes back to the end of the queue, and the next run plays it
if this one does not."""
VOIDS_IN_A_ROW: Final = 5
"""Void matches in a row (retries included) after which a run stops with :class:`RefereeInternalError`:
by then the referee's failure is no accident, and retrying would only repeat it."""
LOGGER = logging.getLogger(__name__)


def schedule_of(
    league: League, stored: Mapping[str, StoredMatch] | None = None
) -> tuple[ScheduledMatch, ...]:
    """The league's matches: the one schedule that both executors, the ratings and every report use. An
    ``until: settled`` league's depend on its ``stored`` results."""
    if league.settling is not None:
        if stored is None:
            raise ValueError("an until: settled schedule is chosen from the stored results: pass them")
        return plan_of(league, stored).schedule
    if league.seed is None:
        raise ValueError("the league's secret seed is unknown until its results database is opened")
    names = tuple(entrant.name for entrant in league.entrants)
    return build_schedule(league.seed, names, league.players, league.rounds, league.seating, league.design)


def plan_of(league: League, stored: Mapping[str, StoredMatch]) -> Plan:
    """An ``until: settled`` league's batches so far and how settled its ranking is (``adaptive.py``)."""
    if league.seed is None:
        raise ValueError("the league's secret seed is unknown until its results database is opened")
    if league.settling is None:
        raise ValueError(f"{league.name} plays its whole schedule, not until settled")
    names = tuple(entrant.name for entrant in league.entrants)
    return plan(league.seed, names, league.players, league.seating, league.rating, league.settling, stored)


def league_settings(league: League) -> str:
    """What makes stored results belong to this league: change any of it and old results are invalid.

    Not the seating: a seating found in two modes is the same match (same id, same deals), so switching
    from ``balanced`` to ``all`` keeps the 12 matches played and adds the other 12."""
    return settings_fingerprint(
        {
            "seed": league.seed,
            "rules": league.rules.to_dict(),
            "per_action": league.time_control.per_action,
            "bank": league.time_control.bank,
            "max_faults": league.max_faults,
        }
    )


def open_store(
    league: League, fresh: bool = False, say: Callable[[str], None] = lambda line: None
) -> tuple[Store, League]:
    """The league's results database, held by this process alone until it is closed, and the league with
    its seed settled: a league file without ``seed:`` gets a secret random one, drawn once and kept in
    the database (``fresh`` draws anew).

    Another live run of the league raises :class:`~referee.league.lock.LeagueBusyError`; a damaged or
    unwritable file :class:`~referee.league.storage.StorageError`; the database of another league file
    :class:`~referee.league.store.OtherLeagueError`, with ``fresh`` too: ``fresh`` forgets only this
    league's own results, and keeps a copy of them beside the database first (``say`` tells where)."""
    store = Store(league.database, exclusive=True)
    try:
        secret = store.meta("secret_seed")
        known = league if league.seed is not None or secret is None else replace(league, seed=int(secret))
        store.claim(league.path, league.name, league_settings(known) if known.seed is not None else "")
        if fresh:
            backup = backup_path(league.database, time.strftime("%Y%m%d-%H%M%S"))
            if forgotten := store.forget(backup):
                say(
                    f"--fresh: the {forgotten} match(es) stored in {league.database} are forgotten; "
                    f"a copy of them is kept in {backup}"
                )
        if league.seed is None:
            league = replace(league, seed=store.secret_seed(renew=fresh), seed_secret=True)
        store.bind(league.name, league_settings(league), league.path)
        store.set_entrants(
            [
                (e.name, "module" if e.in_process else "command", e.spec.module or " ".join(e.spec.command))
                for e in league.entrants
            ]
        )
        cohorts = joined(store, league)
        store.set_cohorts(cohorts)
    except BaseException:
        store.close()
        raise
    return store, with_cohorts(league, cohorts)


def joined(store: Store, league: League) -> tuple[tuple[str, ...], ...]:
    """The league's entrants in the groups in which they joined it (``Design.cohorts``): those the
    database knows, then the league's other entrants as one more group. While nothing is stored, all of
    them are one group: the sampled design is still free."""
    names = tuple(sorted(entrant.name for entrant in league.entrants))
    known = store.cohorts() if store.match_count() else ()
    seen = {name for cohort in known for name in cohort}
    newcomers = tuple(name for name in names if name not in seen)
    return (*known, newcomers) if newcomers else known


def with_cohorts(league: League, cohorts: tuple[tuple[str, ...], ...]) -> League:
    return replace(league, design=replace(league.design, cohorts=cohorts))


@dataclass(slots=True)
class Progress:
    """What the progress display shows; updated after every stored match."""

    total: int
    done: int = 0
    played: int = 0
    void: int = 0
    started: float = field(default_factory=time.monotonic)
    last: MatchOutcome | None = None
    settled: str = ""
    """An ``until: settled`` league's :meth:`~referee.league.adaptive.Settlement.line`, updated per batch."""
    points: dict[str, list[int]] = field(default_factory=dict)
    """Each entrant's credited totals in the complete matches so far, stored ones included."""

    def count(self, entrants: tuple[str, ...], totals: tuple[int, ...]) -> None:
        for name, total in zip(entrants, totals, strict=True):
            self.points.setdefault(name, []).append(total)

    @property
    def leader(self) -> tuple[str, float] | None:
        """The entrant with the best mean points per match so far (ratings come at the end)."""
        if not self.points:
            return None
        means = {name: sum(points) / len(points) for name, points in self.points.items()}
        name = max(sorted(means), key=means.__getitem__)
        return name, means[name]


async def run_builds(league: League, log_dir: Path) -> dict[str, str]:
    """Runs every ``build:`` once; returns the entrants it disqualified, with the reason."""
    failed = {}
    for entrant in league.entrants:
        problem = await run_build(entrant, log_dir)
        if problem is not None:
            failed[entrant.name] = problem
    return failed


async def run_build(entrant: Entrant, log_dir: Path) -> str | None:
    """Runs the entrant's ``build:``, if it has one, and checks that its bot can then be found; returns
    why it cannot play, or ``None``. The build runs in its own process group, killed whole on a timeout
    or when the run is interrupted; its output goes to ``log_dir/NAME.build.log``. As for the bots, the
    referee's interpreter comes first on its ``PATH``: ``python`` and ``pip`` in a build are the ones the
    entrant's ``python`` will run on (``python -m sample_bots.node_heuristic --install``, say), whichever
    ``PATH`` the organiser started the referee with."""
    if entrant.build is None:
        return None
    log = log_dir / f"{entrant.name}.build.log"
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)])
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_shell(
            entrant.build,
            cwd=entrant.spec.cwd,
            env={**os.environ, "PATH": path},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = await asyncio.wait_for(process.wait(), BUILD_TIMEOUT)
        except TimeoutError:
            return f"build {entrant.build!r} took over {BUILD_TIMEOUT:g}s"
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
    if code != 0:
        return f"build {entrant.build!r} failed with code {code}, see {log}"
    try:
        entrant.spec.check()
    except BotSpecError as exc:
        return str(exc)
    return None


@dataclass(slots=True)
class _Lineup:
    """The seats of one match, their processes started (or failed) ahead of the match."""

    seats: list[Seat]
    processes: list[BotProcess]
    failed: str | None = None
    """An entrant whose bot did not start (or is disqualified): the match cannot be played now."""


class Tournament:
    def __init__(
        self,
        league: League,
        store: Store,
        log_dir: Path,
        concurrency: int | None = None,
        hidden: tuple[Path, ...] = (),
        skip_broken: bool = False,
    ) -> None:
        self.league = league
        self.skip_broken = skip_broken
        """Go on without the entrants that fail the preflight (disqualified) instead of stopping."""
        self.store = store
        self.log_dir = log_dir
        self.concurrency = concurrency or league.concurrency
        self.known: dict[str, StoredMatch] | None = None
        """An ``until: settled`` league's stored results as read so far (see :meth:`_schedule`)."""
        self.settlement: Settlement | None = None
        """An ``until: settled`` league's standing after its last complete batch."""
        self.schedule = self._schedule()
        self.hidden = hidden
        """Paths besides the league's own files that no bot may read (a live report's folder)."""
        self.disqualified: dict[str, str] = {}
        self.start_failures: dict[str, int] = {}
        """Failed starts in a row of each entrant in this run."""
        self.skipped = 0
        """Matches this run left unplayed because an entrant of theirs is disqualified or would not start."""
        self.broken: list[Broken] = []
        """The entrants that failed this run's preflight (or build)."""
        self.processes_started = 0
        self.refusals: list[str] = []
        """Hellos refused because they presented a seat's token that was already spent."""
        self.voids_in_a_row = 0
        self.remote: RemoteSource | None = None
        """The lobby of the remote entrants, when the referee listens for them (referee.remote)."""

    def missing(self) -> list[ScheduledMatch]:
        done = self.store.complete_ids()
        return [match for match in self.schedule if match.match_id not in done]

    def extend(self, progress: Progress) -> list[ScheduledMatch]:
        """The matches of the next batch of an ``until: settled`` league, chosen now that the stored
        results complete the last one; none once the ranking is settled, at ``max_matches``, or while
        a match of the last batch is missing (void or unplayed: the next run plays it first). Both
        executors call it between batches, so what is chosen never depends on how they play."""
        if self.league.settling is None:
            return []
        before = len(self.schedule)
        self.schedule = self._schedule()
        progress.total = len(self.schedule)
        progress.settled = self.settlement.line() if self.settlement is not None else ""
        return self.missing() if len(self.schedule) > before else []

    def _schedule(self) -> tuple[ScheduledMatch, ...]:
        """The schedule now. An ``until: settled`` league's is planned from the stored results: all of
        them read once, then only the matches of the schedule not yet known complete (the batch just
        played), since a complete match is never replaced during a run."""
        if self.league.settling is None:
            return schedule_of(self.league)
        if self.known is None:
            self.known = self.store.matches()
        else:
            self.known.update(
                self.store.matches([m.match_id for m in self.schedule if not self._known_complete(m)])
            )
        planned = plan_of(self.league, self.known)
        self.settlement = planned.settlement
        return planned.schedule

    def _known_complete(self, scheduled: ScheduledMatch) -> bool:
        assert self.known is not None
        stored = self.known.get(scheduled.match_id)
        return stored is not None and stored.status is MatchStatus.COMPLETE

    def confinement(self) -> Confinement:
        """The sandbox of every bot of this league: the league's settings, and what it must not see."""
        return confinement_of(self.league, self.log_dir, self.hidden)

    def progress(self, missing: list[ScheduledMatch]) -> Progress:
        """The progress of a run that is to play ``missing``, counting the matches stored before."""
        progress = Progress(total=len(self.schedule), done=len(self.schedule) - len(missing))
        progress.settled = self.settlement.line() if self.settlement is not None else ""
        stored = self.store.matches()
        for planned in self.schedule:
            earlier = stored.get(planned.match_id)
            if earlier is not None and earlier.status is MatchStatus.COMPLETE:
                progress.count(planned.entrants, earlier.record.credited_totals)
        return progress

    async def preflight(self, launcher: Launcher, failed: list[Broken], skip: set[str]) -> None:
        """Starts every command entrant not in ``skip`` once and has it answer one request; with the
        entrants in ``failed`` already (a failed build), raises :class:`PreflightError` before anything
        is stored, or with ``skip_broken`` disqualifies them for the run. Both executors call it."""
        broken = failed + await preflight(self.league, launcher, skip, self.concurrency)
        self.broken = broken
        if broken and not self.skip_broken:
            raise PreflightError(broken)  # before anything is stored
        self.disqualified.update((item.name, item.reason) for item in broken)
        self.store.set_disqualified(self.disqualified)

    async def run(self, on_progress: Callable[[Progress], None] = lambda progress: None) -> Progress:
        missing = self.missing()
        progress = self.progress(missing)
        on_progress(progress)
        if not missing:
            return progress
        self.log_dir.mkdir(parents=True, exist_ok=True)
        builds = await run_builds(self.league, self.log_dir)
        attempts: dict[str, int] = {}
        async with open_launcher(self.log_dir, self.confinement(), remote=self.remote) as launcher:
            failed = [
                Broken(name, reason, tail(self.log_dir / f"{name}.build.log"))
                for name, reason in builds.items()
            ]
            await self.preflight(launcher, failed, set(builds))
            queue: asyncio.Queue[ScheduledMatch] = asyncio.Queue()
            stopping: set[asyncio.Task[None]] = set()

            async def worker() -> None:
                upcoming: tuple[ScheduledMatch, asyncio.Task[_Lineup]] | None = None
                try:
                    while upcoming is not None or not queue.empty():
                        if upcoming is None:
                            first = queue.get_nowait()
                            upcoming = (first, asyncio.create_task(self._lineup(first, launcher)))
                        (scheduled, starting), upcoming = upcoming, None
                        lineup = await starting
                        if lineup.failed is not None:
                            await _stop(launcher, lineup.processes)
                            attempts[scheduled.match_id] = attempts.get(scheduled.match_id, 0) + 1
                            if self._playable(scheduled) and attempts[scheduled.match_id] < START_FAILURES:
                                queue.put_nowait(scheduled)  # tried again later in the run
                            else:
                                self.skipped += 1
                            continue
                        if not queue.empty():  # the next match's bots start while this one plays
                            following = queue.get_nowait()
                            upcoming = (following, asyncio.create_task(self._lineup(following, launcher)))
                        outcome = await self._play(scheduled, lineup, launcher, stopping)
                        progress.played += 1
                        progress.last = outcome
                        if outcome.status is MatchStatus.COMPLETE:
                            progress.done += 1
                            progress.count(scheduled.entrants, outcome.record.credited_totals)
                        else:
                            progress.void += 1
                        on_progress(progress)
                finally:
                    if upcoming is not None:
                        upcoming[1].cancel()

            workers: list[asyncio.Task[None]] = []
            try:
                while missing:  # one pass for a fixed schedule; one per batch until settled
                    for match in missing:
                        queue.put_nowait(match)
                    count = min(self.concurrency, len(missing))
                    workers = [asyncio.create_task(worker()) for _ in range(count)]
                    await asyncio.gather(*workers)
                    missing = self.extend(progress)
            finally:
                for task in workers:
                    task.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                await asyncio.gather(*stopping, return_exceptions=True)
                self.processes_started = launcher.started
                self.refusals = list(launcher.registry.refusals)
                self.store.set_disqualified(self.disqualified)
        return progress

    def _playable(self, scheduled: ScheduledMatch) -> bool:
        return not any(name in self.disqualified for name in scheduled.entrants)

    def _started(self, name: str) -> None:
        self.start_failures.pop(name, None)
        if name not in self.disqualified:
            self.store.clear_disqualified(name)  # disqualified by an earlier run, fine now

    def _failed_start(self, name: str, reason: str) -> None:
        """Counts a failed start; the entrant is disqualified for the rest of the run after
        :data:`START_FAILURES` in a row."""
        count = self.start_failures[name] = self.start_failures.get(name, 0) + 1
        LOGGER.warning("%s did not start (%d in a row): %s", name, count, reason)
        if count >= START_FAILURES:
            self.disqualified.setdefault(name, f"did not start {count} times in a row: {reason}")
            self.store.set_disqualified(self.disqualified)

    async def _lineup(self, scheduled: ScheduledMatch, launcher: Launcher) -> _Lineup:
        """Fresh seats for one match: a new process per command entrant, a new object per in-process one,
        all started at once. If one does not start (or its entrant is disqualified), ``failed`` names it
        and the match is not played: start failures are not results."""
        lineup = _Lineup([], [])
        if not self._playable(scheduled):
            lineup.failed = next(name for name in scheduled.entrants if name in self.disqualified)
            return lineup
        specs = [self.league.entrant(name).spec for name in scheduled.entrants]
        claimed = await self._claim([spec for spec in specs if spec.remote], launcher, lineup)
        if lineup.failed is not None:
            return lineup
        seats = await asyncio.gather(
            *(claimed.get(name) or self._seat(name, launcher, lineup) for name in scheduled.entrants)
        )
        lineup.seats = [seat for seat in seats if seat is not None]
        return lineup

    async def _claim(
        self, specs: list[BotSpec], launcher: Launcher, lineup: _Lineup
    ) -> dict[str, Awaitable[Seat | None]]:
        """The remote entrants' seats of a match, claimed together (referee.remote.lobby); one that is
        not connected in time fails like a start."""
        if not specs:
            return {}
        try:
            bots = await launcher.claim(specs)
        except BotSpecError as exc:  # only the entrants not connected failed to start; a busy one did not
            absent = exc.names if isinstance(exc, Absent) else tuple(spec.name for spec in specs)
            busy = exc.busy if isinstance(exc, Absent) else ()
            for name in absent:
                self._failed_start(name, str(exc))
            lineup.failed = (*absent, *busy, specs[0].name)[0]
            return {}
        lineup.processes.extend(bots)
        for spec in specs:
            self._started(spec.name)
        return {bot.spec.name: _seated(bot) for bot in bots}

    async def _seat(self, name: str, launcher: Launcher, lineup: _Lineup) -> Seat | None:
        entrant = self.league.entrant(name)
        if entrant.in_process:
            try:
                seat: Seat = LocalSeat(entrant.spec.load(), name)
            except BotSpecError as exc:
                self.disqualified.setdefault(name, str(exc))  # an import fails the same way every time
                lineup.failed = lineup.failed or name
                return None
            self._started(name)
            return seat
        try:
            try:
                process = await launcher.start(entrant.spec)
            except BotSpecError:
                process = await launcher.start(
                    entrant.spec
                )  # a busy machine can make a start miss its window
        except BotSpecError as exc:
            self._failed_start(name, str(exc))
            lineup.failed = lineup.failed or name
            return None
        self._started(name)
        lineup.processes.append(process)
        assert process.session is not None
        return RemoteSeat(process.session, name, exit_words=process.exit_words)

    async def _play(
        self,
        scheduled: ScheduledMatch,
        lineup: _Lineup,
        launcher: Launcher,
        stopping: set[asyncio.Task[None]],
    ) -> MatchOutcome:
        """Plays and stores one match; a void one is played again from scratch, with fresh bots. The
        bots are stopped in the background (a polite stop waits a moment for the bot to exit by itself),
        each task kept in ``stopping`` until it is done."""
        outcome: MatchOutcome | None = None
        for attempt in range(VOID_RETRIES + 1):
            if outcome is not None:
                lineup = await self._lineup(scheduled, launcher)
                if lineup.failed is not None:  # its void attempts are stored; the next run plays it
                    await _stop(launcher, lineup.processes)
                    return outcome
            started = time.time()
            try:
                outcome = await play_match(
                    lineup.seats,
                    self.league.rules,
                    scheduled.seed,
                    match_id=scheduled.match_id,
                    time_control=self.league.time_control,
                    fault_policy=FaultPolicy(self.league.max_faults),
                )
            finally:  # an interrupted match's bots see their streams end with CANCELLED
                task = asyncio.create_task(_stop(launcher, lineup.processes, interrupted()))
                stopping.add(task)
                task.add_done_callback(stopping.discard)
            self.store.save(scheduled, outcome, started)
            if outcome.status is MatchStatus.COMPLETE:
                self.voids_in_a_row = 0
                break
            self.void(scheduled, outcome, attempt)
        assert outcome is not None
        return outcome

    def void(self, scheduled: ScheduledMatch, outcome: MatchOutcome, attempt: int) -> None:
        """Logs a void match; raises :class:`RefereeInternalError` once voids keep coming, whichever
        executor played them."""
        self.voids_in_a_row += 1
        LOGGER.error(
            "match %s is void (attempt %d of %d): %s",
            scheduled.match_id,
            attempt + 1,
            VOID_RETRIES + 1,
            outcome.void_reason,
        )
        if self.voids_in_a_row >= VOIDS_IN_A_ROW:
            raise RefereeInternalError(
                f"the referee stopped the run: {self.voids_in_a_row} matches in a row were void, "
                f"the last one with {outcome.void_reason}"
            )


def log_dir_of(league: League) -> Path:
    """The folder of a league's logs, beside its results database: ``<database name>-logs``."""
    return league.database.parent / f"{league.database.stem}-logs"


def confinement_of(league: League, log_dir: Path, hidden: tuple[Path, ...] = ()) -> Confinement:
    """The sandbox of every bot of ``league``: the league's settings, and what it must not see (the
    league, its results and their companions, its logs, and ``hidden``)."""
    masked = (league.path, league.path.parent, *companions(league.database), log_dir, *hidden)
    folders = tuple(
        {e.spec.cwd.resolve() for e in league.entrants if e.spec.cwd is not None and not e.in_process}
    )
    return Confinement(league.sandbox, league.limits, masked, folders)


async def _seated(bot: BotProcess) -> Seat:
    assert bot.session is not None
    return RemoteSeat(bot.session, bot.spec.name)


async def _stop(launcher: Launcher, processes: list[BotProcess], interrupted: bool = False) -> None:
    await asyncio.gather(
        *(launcher.stop(process, interrupted) for process in processes), return_exceptions=True
    )
