"""The in-process driver: a competition's matches played on this process's event loop, up to
``concurrency`` at once, through one :class:`~referee.match.table.Table`.

Each worker coroutine starts the bots of its next match while the current one plays (every match has
fresh bots, so this hides their start-up). Each attempt is stored as soon as it ends, before the next is
counted; an interrupted run loses only the matches in flight, and the next run plays them again.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

from referee.league.competition import Competition, Progress, RunReport
from referee.league.host import Host, run_builds
from referee.league.preflight import preflight
from referee.league.schedule import ScheduledMatch
from referee.match.launcher import RemoteSource
from referee.match.outcome import Attempt, NotStarted
from referee.match.setup import open_launcher
from referee.match.table import Lineup, Table


def _quiet(progress: Progress) -> None:
    """No display."""


class LocalDriver:
    """Drives ``competition`` in this process; :meth:`run` plays every missing match."""

    def __init__(self, competition: Competition, host: Host, concurrency: int | None = None) -> None:
        self.competition = competition
        self.host = host
        self.concurrency = concurrency or competition.league.concurrency
        self.remote: RemoteSource | None = None
        """The lobby of the remote entrants, when the referee listens for them (``referee.remote``)."""

    async def run(self, on_progress: Callable[[Progress], None] = _quiet) -> RunReport:
        competition, host = self.competition, self.host
        missing = competition.begin()
        on_progress(competition.progress)
        if not missing:
            return competition.report()
        host.log_dir.mkdir(parents=True, exist_ok=True)
        failed = await run_builds(host.league, host.log_dir)
        async with open_launcher(host.log_dir, host.confinement, remote=self.remote) as launcher:
            try:
                skip = {item.name for item in failed}
                broken = await preflight(host.league, launcher, skip, self.concurrency)
                competition.preflight_failed(failed + broken)
                await self._play(host.table(launcher), missing, on_progress)
            finally:
                report = competition.report(launcher.started, tuple(launcher.registry.refusals))
        return report

    async def _play(
        self, table: Table, missing: list[ScheduledMatch], on_progress: Callable[[Progress], None]
    ) -> None:
        """One pass of workers for a fixed schedule; one per batch until settled."""
        queue: asyncio.Queue[ScheduledMatch] = asyncio.Queue()
        tries: dict[str, int] = {}
        workers: list[asyncio.Task[None]] = []
        try:
            while missing:
                for match in missing:
                    queue.put_nowait(match)
                count = min(self.concurrency, len(missing))
                workers = [
                    asyncio.create_task(self._worker(table, queue, tries, on_progress)) for _ in range(count)
                ]
                await asyncio.gather(*workers)
                missing = self.competition.next_batch()
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            await table.close()

    async def _worker(
        self,
        table: Table,
        queue: asyncio.Queue[ScheduledMatch],
        tries: dict[str, int],
        on_progress: Callable[[Progress], None],
    ) -> None:
        """Plays matches from ``queue`` until it is empty, the bots of the next started ahead."""
        competition = self.competition
        upcoming: tuple[ScheduledMatch, asyncio.Task[Lineup | None]] | None = None
        try:
            while upcoming is not None or not queue.empty():
                if upcoming is None:
                    upcoming = self._ahead(table, queue.get_nowait())
                (scheduled, starting), upcoming = upcoming, None
                lineup = await starting
                if lineup is None:  # an entrant of it is disqualified: left unplayed
                    competition.unplayed()
                    continue
                if lineup.failed is not None:  # not played: tried again later in the run, or left
                    table.release(lineup)
                    tries[scheduled.match_id] = tries.get(scheduled.match_id, 0) + 1
                    if competition.not_started(scheduled, lineup.failed, tries[scheduled.match_id]):
                        queue.put_nowait(scheduled)
                    continue
                if not queue.empty():  # the next match's bots start while this one plays
                    upcoming = self._ahead(table, queue.get_nowait())
                result = await table.play(
                    competition.sitting(scheduled), lineup, _recorder(competition, scheduled)
                )
                if isinstance(
                    result, NotStarted
                ):  # a retry after a void did not start: left for the next run
                    competition.not_started(scheduled, result, tries=LAST_TRY)
                    on_progress(competition.progress)
                    continue
                on_progress(competition.finished(scheduled, result))
        finally:
            if upcoming is not None:
                upcoming[1].cancel()

    def _ahead(
        self, table: Table, scheduled: ScheduledMatch
    ) -> tuple[ScheduledMatch, asyncio.Task[Lineup | None]]:
        """Starts the bots of ``scheduled`` now."""
        return scheduled, asyncio.create_task(self._lineup(table, scheduled))

    async def _lineup(self, table: Table, scheduled: ScheduledMatch) -> Lineup | None:
        """Fresh seats for ``scheduled``; ``None`` if an entrant of it is disqualified."""
        if not self.competition.playable(scheduled):
            return None
        return await table.seat(self.competition.sitting(scheduled))


def _recorder(competition: Competition, scheduled: ScheduledMatch) -> Callable[[Attempt], None]:
    """Stores each attempt of ``scheduled`` as soon as it ends."""
    count = itertools.count()

    def record(attempt: Attempt) -> None:
        competition.record(scheduled, attempt, next(count))

    return record


LAST_TRY = 1_000
"""A try count past every limit: a match whose retry after a void did not start is not tried again in
this run (its void attempts are stored; the next run plays it)."""
