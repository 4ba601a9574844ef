"""One table: plays one planned match with fresh bots, and returns what it came to as a value.

Every executor (in-process, Dask workers) and ``referee compare`` play through a :class:`Table`, so the
rules of playing a match live here once: every match gets fresh bot processes (a new object per
in-process bot), so no bot carries memory from one match to the next; a start that fails is tried once
more (a busy machine can make a start miss its window); a void match (the referee's failure) is played
again from scratch with fresh bots, up to :data:`~referee.match.outcome.VOID_RETRIES` times; every process
the table started is stopped, however the match ends (an interrupted match's bots see their streams end
with CANCELLED). What the match comes to is a :class:`~referee.match.outcome.Finished` or
:class:`~referee.match.outcome.NotStarted` value; what it means for a league (stored, counted, an
entrant disqualified) is the caller's business.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from pyramid_sdk import Rules
from pyramid_sdk.bot import TimeControl
from referee.match.bots import BotSpec, BotSpecError
from referee.match.faults import FaultPolicy
from referee.match.launcher import BotProcess, Launcher, Unclaimed, interrupted
from referee.match.outcome import VOID_RETRIES, Attempt, Finished, MatchStatus, NotStarted, TableResult
from referee.match.runner import LocalSeat, RemoteSeat, Seat, play_match


@dataclass(frozen=True, slots=True)
class Sitting:
    """A planned match as a table plays it: its id (what every bot is told), its seed, and its bots in
    seat order, each named as its seat is."""

    match_id: str
    seed: int
    bots: tuple[BotSpec, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)


@dataclass(slots=True)
class Lineup:
    """The seats of one match, their bots started (or not) ahead of the match."""

    seats: list[Seat] = field(default_factory=list)
    processes: list[BotProcess] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    failed: NotStarted | None = None
    """The first seat whose bot did not start: the match cannot be played with this lineup."""


def _ignore(attempt: Attempt) -> None:
    """No one to tell of an attempt as it ends: the caller reads them all from the result."""


class Table:
    """Plays matches on ``launcher``'s referee (``None``: in-process bots only) under one set of rules,
    time control and fault limit; several at once if the caller likes."""

    def __init__(
        self,
        launcher: Launcher | None,
        rules: Rules,
        time_control: TimeControl,
        max_faults: int,
        cut: Callable[[], bool] = interrupted,
    ) -> None:
        self.launcher = launcher
        self.rules = rules
        self.time_control = time_control
        self.max_faults = max_faults
        self.cut = cut
        """Whether the bots of a match that stopped early see their streams end with CANCELLED."""
        self.stopping: set[asyncio.Task[None]] = set()

    async def seat(self, sitting: Sitting) -> Lineup:
        """Fresh seats for one match, all bots started at once; a bot that does not start is tried once
        more. The lineup's ``failed`` names the first seat that did not start (its processes are still
        to be stopped: :meth:`release`). Cancelled, it stops every bot it started (in the background:
        :meth:`close` waits for them) and every start still under way."""
        lineup = Lineup()
        try:
            claimed = await self._claim([bot for bot in sitting.bots if bot.remote], lineup)
            if lineup.failed is not None:
                return lineup
            seats = await asyncio.gather(
                *(claimed[bot.name] if bot.remote else self._seat(bot, lineup) for bot in sitting.bots)
            )
        except BaseException:  # cancelled (the run stops): the bots already seated are stopped too
            self.release(lineup, self.cut())
            raise
        lineup.seats = [seat for seat in seats if seat is not None]
        return lineup

    async def _claim(self, bots: list[BotSpec], lineup: Lineup) -> dict[str, Awaitable[Seat]]:
        """The remote entrants' seats of a match, claimed all together before any other bot starts, as
        :func:`~referee.match.setup.take_seats` does (two tables never each hold an entrant the other
        waits for). One not connected within the league's wait fails like a start; one still busy in
        another match is named but not charged."""
        if not bots:
            return {}
        assert self.launcher is not None, "a remote entrant needs a launcher (with a lobby)"
        try:
            claimed = await self.launcher.claim(bots)
        except BotSpecError as exc:
            charged = exc.names if isinstance(exc, Unclaimed) else tuple(bot.name for bot in bots)
            busy = exc.busy if isinstance(exc, Unclaimed) else ()
            lineup.failed = NotStarted((*charged, *busy, bots[0].name)[0], str(exc), charged=charged)
            return {}
        lineup.processes.extend(claimed)
        lineup.started.extend(bot.name for bot in bots)
        return {process.spec.name: _seated(process) for process in claimed}

    async def _seat(self, bot: BotSpec, lineup: Lineup) -> Seat | None:
        if bot.module:
            try:
                seat: Seat = LocalSeat(bot.load(), bot.name)
            except BotSpecError as exc:  # an import fails the same way every time
                lineup.failed = lineup.failed or NotStarted(bot.name, str(exc), lasting=True)
                return None
            lineup.started.append(bot.name)
            return seat
        assert self.launcher is not None, "a command bot needs a launcher"
        try:
            try:
                process = await self.launcher.start(bot)
            except BotSpecError:
                process = await self.launcher.start(bot)  # a busy machine can make a start miss its window
        except BotSpecError as exc:
            lineup.failed = lineup.failed or NotStarted(bot.name, str(exc))
            return None
        lineup.processes.append(process)
        lineup.started.append(bot.name)
        assert process.session is not None
        return RemoteSeat(process.session, bot.name, exit_words=process.exit_words)

    async def play(
        self, sitting: Sitting, lineup: Lineup | None = None, on_attempt: Callable[[Attempt], None] = _ignore
    ) -> TableResult:
        """Plays ``sitting`` with ``lineup`` (started ahead by :meth:`seat`) or fresh seats; a void match
        again from scratch with fresh seats. Every process is stopped in the background as its match ends
        (a polite stop waits a moment for the bot to exit by itself): :meth:`close` waits for them.

        ``on_attempt`` hears of each attempt (complete or void) as soon as it ends, before the next one
        starts, so that a caller can store it at once; whatever it raises (a run that keeps voiding, a
        full disk) ends the play, the bots stopped."""
        attempts: list[Attempt] = []
        for _ in range(VOID_RETRIES + 1):
            if lineup is None:
                lineup = await self.seat(sitting)
            if lineup.failed is not None:
                self.release(lineup)
                return replace(lineup.failed, started=tuple(lineup.started), attempts=tuple(attempts))
            started = time.time()
            try:
                outcome = await play_match(
                    lineup.seats,
                    self.rules,
                    sitting.seed,
                    match_id=sitting.match_id,
                    time_control=self.time_control,
                    fault_policy=FaultPolicy(self.max_faults),
                )
            finally:  # an interrupted match's bots see their streams end with CANCELLED
                self.release(lineup, self.cut())
            attempts.append(Attempt(outcome, started))
            on_attempt(attempts[-1])
            if outcome.status is MatchStatus.COMPLETE:
                break
            lineup = None
        return Finished(tuple(attempts))

    def release(self, lineup: Lineup, interrupted: bool = False) -> None:
        """Stops a lineup's processes in the background, each task kept until it is done."""
        if self.launcher is None or not lineup.processes:
            return
        task = asyncio.create_task(stop_all(self.launcher, lineup.processes, interrupted))
        self.stopping.add(task)
        task.add_done_callback(self.stopping.discard)

    async def close(self) -> None:
        """Waits until every process this table started is stopped."""
        await asyncio.gather(*self.stopping, return_exceptions=True)


async def _seated(process: BotProcess) -> Seat:
    """The seat of a claimed remote connection (awaited beside the seats still starting)."""
    assert process.session is not None
    return RemoteSeat(process.session, process.spec.name)


async def stop_all(launcher: Launcher, processes: list[BotProcess], interrupted: bool = False) -> None:
    """Stops ``processes``, every one of them whatever fails."""
    await asyncio.gather(
        *(launcher.stop(process, interrupted) for process in processes), return_exceptions=True
    )
