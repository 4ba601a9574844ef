"""The one shape of every driver of a :class:`~referee.run.competition.Competition` (gomill's
``run_jobs(job_source)``, the one shape of every job manager): :func:`drive` is a run, written once.

A run begins (the matches still to play, the progress counting those stored), runs the entrants'
builds, opens its seats, tries every entrant once (the preflight), plays the job source's batches and
ends with its report, the standings rated and stored once. What a driver supplies is at most two
things: its :class:`Seats`, how and where a match is played (this process's launcher and arbiter for
``referee run``, a Dask cluster's workers, ``referee serve``'s watched arbiters), and its
:class:`JobSource`, which matches and until when (``referee run``'s: the missing matches, then an
``until: settled`` league's next batches; ``referee serve``'s: one pass, until the league file changes).
Every driver therefore begins, builds, checks and records the same way, and a fix to one of those steps
lands in all three.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Final, Protocol

from referee.league.config import League
from referee.league.schedule import ScheduledMatch
from referee.match.launcher import Launcher
from referee.run.competition import Competition, Progress, RunReport
from referee.run.host import Host, run_builds
from referee.run.preflight import Broken, preflight

OnProgress = Callable[[Progress], None]


class ClusterError(RuntimeError):
    """The cluster a driver plays on cannot play this league (Dask's: ``dask_driver.py``); the message is
    one line: what, where, what to do. Here, beside the drivers' shape, so that ``referee serve`` can
    tell it apart without importing Dask."""


def quiet(progress: Progress) -> None:
    """No display."""


@dataclass(frozen=True, slots=True)
class Tally:
    """What a run's seats saw of the bots: the processes they started and the connections refused."""

    processes_started: int = 0
    refusals: tuple[str, ...] = ()


class Place(Protocol):
    """A driver's seats, open for one run: where its matches are played."""

    def trying(self) -> AbstractAsyncContextManager[Launcher]:
        """The launcher the preflight tries the entrants on (the seats' own, or one of its own)."""
        ...

    def unready(self, league: League) -> list[Broken]:
        """The entrants that cannot play here now, besides those the preflight finds (``referee serve``'s
        remote entrants without a door or a token); each sits out, as a broken bot does."""
        ...

    async def play(self, batch: list[ScheduledMatch], on_progress: OnProgress) -> None:
        """Plays ``batch``, each attempt handed to the competition as it ends."""
        ...

    def tally(self) -> Tally:
        """What the seats saw of the bots; asked once they are closed."""
        ...


class Seats(Protocol):
    """How and where a driver plays its matches (see the module's doc)."""

    @property
    def concurrency(self) -> int:
        """Entrants the preflight tries at once."""
        ...

    @property
    def builds_here(self) -> bool:
        """Whether the entrants' builds run in this process before the preflight; else the machines that
        play run them (the Dask workers), and the preflight leaves the entrants that have one to them."""
        ...

    def opened(self, host: Host) -> AbstractAsyncContextManager[Place]:
        """The seats open for one run on ``host``, closed (every bot stopped) when the block ends."""
        ...


class JobSource(Protocol):
    """Which of a competition's matches a driver plays, batch by batch, and until when."""

    def goes(self, missing: list[ScheduledMatch]) -> bool:
        """Whether a run that begins with ``missing`` still to play opens its seats at all."""
        ...

    def next(self, competition: Competition) -> list[ScheduledMatch]:
        """The batch to play after the last one; none ends the run."""
        ...


class Batches:
    """``referee run``'s job source: the missing matches, then an ``until: settled`` league's next
    batches, each chosen once the last one is stored (:meth:`Competition.next_batch`), until none is
    left; a run with nothing missing ends at once."""

    def goes(self, missing: list[ScheduledMatch]) -> bool:
        return bool(missing)

    def next(self, competition: Competition) -> list[ScheduledMatch]:
        return competition.next_batch()


BATCHES: Final = Batches()


async def drive(
    competition: Competition,
    host: Host,
    seats: Seats,
    on_progress: OnProgress = quiet,
    jobs: JobSource = BATCHES,
) -> RunReport:
    """Plays ``competition`` on ``host`` through ``seats``, the batches ``jobs`` gives: begin, builds,
    seats, preflight, loop, report (see the module's doc). The report carries the standings, rated and
    stored once at the end (:meth:`Competition.rated`), whichever driver played. A failed preflight
    raises :class:`~referee.run.preflight.PreflightError` (without ``skip_broken``) before anything is
    stored."""
    missing = competition.begin()
    on_progress(competition.progress)
    if not jobs.goes(missing):
        return competition.report(0, (), competition.rated())
    league = host.league
    host.log_dir.mkdir(parents=True, exist_ok=True)
    if seats.builds_here:
        failed = await run_builds(league, host.log_dir)
        skip = {item.name for item in failed}
    else:
        failed, skip = [], {e.name for e in league.entrants if e.build is not None}
    async with seats.opened(host) as place:
        async with place.trying() as launcher:
            broken = await preflight(league, launcher, skip, seats.concurrency)
        competition.preflight_failed(failed + broken + place.unready(league))
        batch = missing
        while True:
            await place.play(batch, on_progress)
            if not (batch := jobs.next(competition)):
                break
    tally = place.tally()
    return competition.report(tally.processes_started, tally.refusals, competition.rated())


@contextlib.asynccontextmanager
async def held(launcher: Launcher) -> AsyncIterator[Launcher]:
    """``launcher`` for a block, left open after it: the seats' own launcher, lent to the preflight."""
    yield launcher
