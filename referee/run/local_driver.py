"""The in-process driver: a competition's matches played on this process's event loop, up to
``concurrency`` at once, through one :class:`~referee.match.arbiter.Arbiter`.

Each worker coroutine starts the bots of its next match while the current one plays (every match has
fresh bots, so this hides their start-up). Each attempt is stored as soon as it ends, before the next is
counted; an interrupted run loses only the matches in flight, and the next run plays them again. A
worker takes the next match that can start now (``pending.py``): one that waits for a remote entrant
holds no worker, and the others go on meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Final

from referee.league.config import League
from referee.league.schedule import ScheduledMatch
from referee.match.arbiter import Arbiter, Lineup
from referee.match.launcher import Launcher, RemoteSource
from referee.match.outcome import Attempt, NotStarted
from referee.match.setup import open_launcher
from referee.run.competition import Competition, RunReport
from referee.run.driver import OnProgress, Place, Tally, drive, held, quiet
from referee.run.host import Host
from referee.run.pending import Pending, token_check
from referee.run.preflight import Broken


class LocalDriver:
    """Drives ``competition`` in this process; :meth:`run` plays every missing match (:func:`drive`,
    with this driver as its seats)."""

    builds_here: Final = True

    def __init__(self, competition: Competition, host: Host, concurrency: int | None = None) -> None:
        self.competition = competition
        self.host = host
        self.concurrency = concurrency or competition.league.concurrency
        self.remote: RemoteSource | None = None
        """The lobby of the remote entrants, when the referee listens for them (``referee.remote``)."""

    async def run(self, on_progress: OnProgress = quiet) -> RunReport:
        return await drive(self.competition, self.host, self, on_progress)

    @contextlib.asynccontextmanager
    async def opened(self, host: Host) -> AsyncIterator[Place]:
        """One launcher and one arbiter for the run, the remote entrants seated from :attr:`remote`."""
        async with open_launcher(host.log_dir, host.confinement, remote=self.remote) as launcher:
            arbiter = host.arbiter(launcher)
            try:
                yield _Here(self, launcher, arbiter)
            finally:
                await arbiter.close()

    async def _play(self, arbiter: Arbiter, batch: list[ScheduledMatch], on_progress: OnProgress) -> None:
        """One pass of workers over a batch."""
        competition = self.competition
        remote = self.remote if competition.league.remote_names else None
        admitted = token_check(competition.league) if remote is not None else (lambda name: None)
        pending = Pending(competition, remote, admitted)
        pending.put(batch)
        count = min(self.concurrency, len(batch))
        workers = [asyncio.create_task(self._worker(arbiter, pending, on_progress)) for _ in range(count)]
        try:
            await asyncio.gather(*workers)
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def _worker(self, arbiter: Arbiter, pending: Pending, on_progress: OnProgress) -> None:
        """Plays the matches of ``pending`` that can start, until none is left, the bots of the next
        started ahead; waits (without holding a match) while all that are left wait for a remote
        entrant."""
        competition = self.competition
        upcoming: _Ahead | None = None
        try:
            while True:
                if upcoming is None:
                    first = await pending.next()
                    if first is None:
                        return
                    upcoming = self._ahead(arbiter, pending, first)
                (scheduled, starting), upcoming = upcoming, None
                lineup = await starting
                if lineup is None:  # an entrant of it is disqualified, or away again: not started
                    pending.done(scheduled)
                    continue
                if lineup.failed is not None:  # not played: tried again later in the run, or left
                    arbiter.release(lineup)
                    pending.done(scheduled)
                    pending.not_started(scheduled, lineup.failed)
                    continue
                following = pending.take()  # the next match's bots start while this one plays
                if following is not None:
                    upcoming = self._ahead(arbiter, pending, following)
                try:
                    result = await arbiter.play(
                        competition.sitting(scheduled), lineup, _recorder(competition, scheduled)
                    )
                finally:
                    pending.done(scheduled)
                if isinstance(result, NotStarted):  # a retry after a void did not start
                    pending.not_started(scheduled, result, last=True)  # left for the next run
                    on_progress(competition.progress)
                    continue
                on_progress(competition.finished(scheduled, result))
        finally:
            if upcoming is not None:
                _drop(arbiter, pending, upcoming)

    def _ahead(self, arbiter: Arbiter, pending: Pending, scheduled: ScheduledMatch) -> _Ahead:
        """Starts the bots of ``scheduled`` now."""
        return scheduled, asyncio.create_task(self._lineup(arbiter, pending, scheduled))

    async def _lineup(self, arbiter: Arbiter, pending: Pending, scheduled: ScheduledMatch) -> Lineup | None:
        """Fresh seats for ``scheduled``; ``None`` if an entrant of it is disqualified, or if a remote
        entrant of it left between the look that chose the match and now (the match goes back to wait:
        a claim that would wait for it must not hold this worker)."""
        competition = self.competition
        if not competition.playable(scheduled):
            competition.unplayed()
            return None
        remote = [name for name in scheduled.entrants if name in pending.remote]
        if remote and self.remote is not None and not self.remote.ready(remote, scheduled.seed):
            pending.put([scheduled])
            return None
        return await arbiter.seat(competition.sitting(scheduled))


_Ahead = tuple[ScheduledMatch, "asyncio.Task[Lineup | None]"]


@dataclass(frozen=True, slots=True)
class _Here:
    """The local driver's seats for one run: its launcher, lent to the preflight, and its arbiter."""

    driver: LocalDriver
    launcher: Launcher
    arbiter: Arbiter

    def trying(self) -> AbstractAsyncContextManager[Launcher]:
        return held(self.launcher)

    def unready(self, league: League) -> list[Broken]:
        return []  # a remote entrant without its token is refused before the run (door_settings)

    async def play(self, batch: list[ScheduledMatch], on_progress: OnProgress) -> None:
        await self.driver._play(self.arbiter, batch, on_progress)

    def tally(self) -> Tally:
        return Tally(self.launcher.started, tuple(self.launcher.registry.refusals))


def _drop(arbiter: Arbiter, pending: Pending, upcoming: _Ahead) -> None:
    """A worker that stops (the run is interrupted, or failed) stops the bots it started ahead; those of
    an interrupted run see their streams end with CANCELLED, as the bots of the match in flight do, even
    when their start had finished (the callback runs outside the worker's task: asked here)."""
    scheduled, starting = upcoming
    pending.done(scheduled)
    starting.cancel()
    cut = arbiter.cut()

    def release(task: asyncio.Task[Lineup | None]) -> None:
        if not task.cancelled() and task.exception() is None and (lineup := task.result()) is not None:
            arbiter.release(lineup, cut)

    starting.add_done_callback(release)


def _recorder(competition: Competition, scheduled: ScheduledMatch) -> Callable[[Attempt], None]:
    """Stores each attempt of ``scheduled`` as soon as it ends."""
    count = itertools.count()

    def record(attempt: Attempt) -> None:
        competition.record(scheduled, attempt, next(count))

    return record
