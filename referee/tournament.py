"""Runs a league: builds the entrants, plays every missing match of the schedule, stores each one.

The in-process asyncio executor: up to ``concurrency`` matches at once on one event loop, with bot
processes pooled per entrant (at most ``concurrency`` each, reused from match to match, replaced when one
dies). Each finished match is committed before it is counted; an interrupted run loses only the matches
that were in flight, and the next run plays them again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from referee.faults import FaultPolicy
from referee.launcher import BotProcess, BotSpecError, Launcher
from referee.league import Entrant, League
from referee.match_runner import (
    AbsentSeat,
    LocalSeat,
    MatchOutcome,
    MatchStatus,
    RemoteSeat,
    Seat,
    play_match,
)
from referee.schedule import ScheduledMatch, build_schedule
from referee.server import create_server
from referee.sessions import SessionRegistry
from referee.store import Store, settings_fingerprint

BUILD_TIMEOUT: Final = 600.0
VOID_RETRIES: Final = 2


def schedule_of(league: League) -> tuple[ScheduledMatch, ...]:
    if league.seed is None:
        raise ValueError("the league's secret seed is unknown until its results database is opened")
    names = tuple(entrant.name for entrant in league.entrants)
    return build_schedule(league.seed, names, league.players, league.rounds, league.seating)


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


def open_store(league: League, fresh: bool = False) -> tuple[Store, League]:
    """The league's results database, and the league with its seed settled: a league file without
    ``seed:`` gets a secret random one, drawn once and kept in the database (``--fresh`` draws anew)."""
    store = Store(league.database)
    if league.seed is None:
        league = replace(league, seed=store.secret_seed(renew=fresh))
    store.bind(league.name, league_settings(league), fresh)
    store.set_entrants(
        [
            (e.name, "module" if e.in_process else "command", e.spec.module or " ".join(e.spec.command))
            for e in league.entrants
        ]
    )
    return store, league


@dataclass(slots=True)
class Progress:
    """What the progress display shows; updated after every stored match."""

    total: int
    done: int = 0
    played: int = 0
    void: int = 0
    started: float = field(default_factory=time.monotonic)
    last: MatchOutcome | None = None
    points: dict[str, list[int]] = field(default_factory=dict)
    """Each entrant's totals in the complete matches so far, stored ones included."""

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
    """Runs every ``build:`` once; returns the entrants it disqualified, with the reason.

    Each build runs in its own process group, killed whole on a timeout or when the run is interrupted.
    """
    failed = {}
    for entrant in league.entrants:
        if entrant.build is None:
            continue
        log = log_dir / f"{entrant.name}.build.log"
        with log.open("wb") as out:
            process = await asyncio.create_subprocess_shell(
                entrant.build,
                cwd=entrant.spec.cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                code = await asyncio.wait_for(process.wait(), BUILD_TIMEOUT)
            except TimeoutError:
                failed[entrant.name] = f"build {entrant.build!r} took over {BUILD_TIMEOUT:g}s"
                continue
            finally:
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    await process.wait()
        if code != 0:
            failed[entrant.name] = f"build {entrant.build!r} failed with code {code}, see {log}"
            continue
        try:
            entrant.spec.check()
        except BotSpecError as exc:
            failed[entrant.name] = str(exc)
    return failed


class _Pool:
    """Idle processes of one command entrant."""

    def __init__(self, entrant: Entrant, launcher: Launcher) -> None:
        self.entrant = entrant
        self.launcher = launcher
        self.idle: list[BotProcess] = []

    async def acquire(self) -> BotProcess:
        while self.idle:
            process = self.idle.pop()
            if process.session is not None and not process.session.is_closed:
                return process
            await process.stop()
        return await self.launcher.start(self.entrant.spec)

    async def release(self, process: BotProcess) -> None:
        session = process.session
        if session is not None and not session.is_closed and not session.busy:
            self.idle.append(process)
        else:
            await process.stop()


class Tournament:
    def __init__(self, league: League, store: Store, log_dir: Path, concurrency: int | None = None) -> None:
        self.league = league
        self.store = store
        self.log_dir = log_dir
        self.concurrency = concurrency or league.concurrency
        self.schedule = schedule_of(league)
        self.disqualified: dict[str, str] = {}
        self.processes_started = 0

    def missing(self) -> list[ScheduledMatch]:
        done = self.store.complete_ids()
        return [match for match in self.schedule if match.match_id not in done]

    async def run(self, on_progress: Callable[[Progress], None] = lambda progress: None) -> Progress:
        missing = self.missing()
        progress = Progress(total=len(self.schedule), done=len(self.schedule) - len(missing))
        stored = self.store.matches()
        for planned in self.schedule:
            earlier = stored.get(planned.match_id)
            if earlier is not None and earlier.status is MatchStatus.COMPLETE:
                progress.count(planned.entrants, earlier.record.totals)
        on_progress(progress)
        if not missing:
            return progress
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.disqualified = await run_builds(self.league, self.log_dir)
        async with self._pools() as pools:
            queue: asyncio.Queue[ScheduledMatch] = asyncio.Queue()
            for match in missing:
                queue.put_nowait(match)

            async def worker() -> None:
                while not queue.empty():
                    scheduled = queue.get_nowait()
                    outcome = await self._play(scheduled, pools)
                    progress.played += 1
                    progress.last = outcome
                    if outcome.status is MatchStatus.COMPLETE:
                        progress.done += 1
                        progress.count(scheduled.entrants, outcome.record.totals)
                    else:
                        progress.void += 1
                    on_progress(progress)

            workers = [asyncio.create_task(worker()) for _ in range(min(self.concurrency, len(missing)))]
            try:
                await asyncio.gather(*workers)
            finally:
                for task in workers:
                    task.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
        return progress

    @contextlib.asynccontextmanager
    async def _pools(self) -> AsyncIterator[dict[str, _Pool]]:
        registry = SessionRegistry()
        server, port = await create_server(registry)
        try:
            async with Launcher(registry, f"127.0.0.1:{port}", self.log_dir) as launcher:
                try:
                    yield {e.name: _Pool(e, launcher) for e in self.league.entrants if not e.in_process}
                finally:
                    self.processes_started = len(launcher.processes)
        finally:
            await server.stop(grace=1.0)

    async def _play(self, scheduled: ScheduledMatch, pools: dict[str, _Pool]) -> MatchOutcome:
        for _attempt in range(VOID_RETRIES + 1):
            started = time.time()
            held: list[tuple[_Pool, BotProcess]] = []
            seats: list[Seat] = []
            try:
                for name in scheduled.entrants:
                    seats.append(await self._seat(name, pools, held))
                outcome = await play_match(
                    seats,
                    self.league.rules,
                    scheduled.seed,
                    match_id=scheduled.match_id,
                    time_control=self.league.time_control,
                    fault_policy=FaultPolicy(self.league.max_faults),
                )
            finally:
                for pool, process in held:
                    await pool.release(process)
            self.store.save(scheduled, outcome, started)
            if outcome.status is MatchStatus.COMPLETE:
                break
        return outcome

    async def _seat(self, name: str, pools: dict[str, _Pool], held: list[tuple[_Pool, BotProcess]]) -> Seat:
        entrant = self.league.entrant(name)
        if name in self.disqualified:
            return AbsentSeat(name, f"disqualified: {self.disqualified[name]}")
        if entrant.in_process:
            try:
                return LocalSeat(entrant.spec.load(), name)
            except BotSpecError as exc:
                return AbsentSeat(name, str(exc))
        pool = pools[name]
        try:
            try:
                process = await pool.acquire()
            except BotSpecError:
                process = await pool.acquire()  # once more: a busy machine can make a start miss its window
        except BotSpecError as exc:
            self.disqualified[name] = str(exc)  # twice in a row: it will not start next time either
            return AbsentSeat(name, str(exc))
        held.append((pool, process))
        assert process.session is not None
        return RemoteSeat(process.session, name, exit_words=process.exit_words)
