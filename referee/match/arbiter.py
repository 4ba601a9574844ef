"""The arbiter: plays one planned match with fresh bots, and returns what it came to as a value. (As a
chess arbiter runs a game of a tournament; a *table* is the league's: entrants who sit down together
and the matches they play on the same deals, ``league/designs.py``.)

Every match player plays through an :class:`Arbiter` (every driver, ``referee compare``, ``referee check``,
``referee match`` and :mod:`referee.api`, the human seat), so the rules of playing a match live here
once, the fault policy with them: every match gets fresh bot processes (a new object per in-process
bot), so no bot carries memory from one match to the next; a start that fails is tried once more (a
busy machine can make a start miss its window); a seat forfeits after ``max_faults`` faults; a void
match (the referee's failure) is played again from scratch with fresh bots, up to
:data:`~referee.match.outcome.VOID_RETRIES` times; every process the arbiter started is stopped, however
the match ends (an interrupted match's bots see their streams end with CANCELLED). What the match comes
to is a :class:`~referee.match.outcome.Finished` or :class:`~referee.match.outcome.NotStarted` value;
what it means for a league (stored, counted, an entrant disqualified) is the caller's business.

Here too are the one seat-maker (:func:`seat_of`: the seat of a started process) and the one seat-taker
(:func:`take_seats`: fresh seats for a match, which :meth:`Arbiter.seat` uses).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from pyramid_sdk import Rules
from pyramid_sdk.bot import TimeControl
from pyramid_sdk.v1 import pyramid_pb2 as pb
from referee.match.bots import BotSpec, BotSpecError
from referee.match.faults import FaultPolicy
from referee.match.launcher import CONNECT_TIMEOUT, BotProcess, Launcher, Unclaimed, interrupted
from referee.match.outcome import VOID_RETRIES, Attempt, Finished, MatchStatus, NotStarted, TableResult
from referee.match.playing import AbsentSeat, LocalSeat, RemoteSeat, Seat, play_match
from referee.match.sessions import clean_name

Tap = Callable[[pb.ConnectResponse], None]
"""Sees every message the referee sends one seat (for tests)."""


@dataclass(frozen=True, slots=True)
class Sitting:
    """A planned match as an arbiter plays it: its id (what every bot is told), its seed, and its bots in
    seat order, each named as its seat is. A bot is a :class:`BotSpec`, started fresh for every play of
    the match, or a :class:`Seat` given as it is (a person at the human seat, an object the caller keeps):
    the arbiter neither starts nor stops a given seat, and plays a void match again with the same one."""

    match_id: str
    seed: int
    bots: tuple[BotSpec | Seat, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)


@dataclass(slots=True)
class Lineup:
    """The seats of one match, their bots started (or not) ahead of the match; a seat whose bot did not
    start is an :class:`AbsentSeat` (when the remote entrants could not be claimed, no seat is taken)."""

    seats: list[Seat] = field(default_factory=list)
    processes: list[BotProcess] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    failed: NotStarted | None = None
    """The first seat whose bot did not start: the match cannot be played with this lineup."""


def _ignore(attempt: Attempt) -> None:
    """No one to tell of an attempt as it ends: the caller reads them all from the result."""


class Arbiter:
    """Plays matches on ``launcher``'s referee (``None``: in-process bots only) under one set of rules,
    time control and fault limit; several at once if the caller likes. The fault policy is made here,
    once, for every match the arbiter plays (a bad ``max_faults`` fails before any bot starts)."""

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
        self.policy = FaultPolicy(max_faults)
        self.cut = cut
        """Whether the bots of a match that stopped early see their streams end with CANCELLED."""
        self.stopping: set[asyncio.Task[None]] = set()

    async def seat(self, sitting: Sitting) -> Lineup:
        """Fresh seats for one match (:func:`take_seats`). The lineup's ``failed`` names the first seat
        that did not start (its processes are still to be stopped: :meth:`release`). Cancelled, it stops
        every bot it started (in the background: :meth:`close` waits for them) and every start still
        under way."""
        lineup = Lineup()
        try:
            await take_seats(self.launcher, sitting.bots, lineup, deals=sitting.seed)
        except BaseException:  # cancelled (the run stops): the bots already seated are stopped too
            self.release(lineup, self.cut())
            raise
        return lineup

    async def play(
        self,
        sitting: Sitting,
        lineup: Lineup | None = None,
        on_attempt: Callable[[Attempt], None] = _ignore,
        dress: Callable[[list[Seat]], list[Seat]] | None = None,
    ) -> TableResult:
        """Plays ``sitting`` with ``lineup`` (started ahead by :meth:`seat`) or fresh seats; a void match
        again from scratch with fresh seats. Every process is stopped in the background as its match ends
        (a polite stop waits a moment for the bot to exit by itself): :meth:`close` waits for them.

        ``on_attempt`` hears of each attempt (complete or void) as soon as it ends, before the next one
        starts, so that a caller can store it at once; whatever it raises (a run that keeps voiding, a
        full disk) ends the play, the bots stopped. ``dress``, if given, wraps the seats of every attempt
        before it is played (the human seat's watched seats, for its live view)."""
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
                    lineup.seats if dress is None else dress(lineup.seats),
                    self.rules,
                    sitting.seed,
                    match_id=sitting.match_id,
                    time_control=self.time_control,
                    fault_policy=self.policy,
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
        """Waits until every process this arbiter started is stopped."""
        await asyncio.gather(*self.stopping, return_exceptions=True)


async def take_seats(
    launcher: Launcher | None,
    bots: Sequence[BotSpec | Seat],
    lineup: Lineup,
    taps: Sequence[Tap | None] | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
    deals: int | None = None,
) -> None:
    """Fills ``lineup`` with fresh seats for ``bots`` in order, every bot started at once: a fresh
    process per command bot (a start that fails is tried once more: a busy machine can make a start
    miss its window), a fresh object per in-process bot, the connection of each remote entrant (for a
    match on ``deals``, the match's seed: a remote entrant never plays two matches of one table's deals
    at once), and a given :class:`Seat` as it is. ``taps[i]``, if given, sees every message sent to seat
    ``i``. Every process started is in ``lineup.processes`` as soon as it is, so that whoever stops the
    match's bots finds them all, even when this is cancelled."""
    remote = [bot for bot in bots if isinstance(bot, BotSpec) and bot.remote]
    claimed = await _claim(launcher, remote, lineup, deals)
    if lineup.failed is not None:
        return
    tapped = list(taps) if taps else [None] * len(bots)

    async def placed(index: int, bot: BotSpec | Seat) -> Seat:
        if not isinstance(bot, BotSpec):
            lineup.started.append(bot.name)
            return bot
        if bot.remote:
            return seat_of(claimed[bot.name], tapped[index])
        return await _start(launcher, bot, lineup, tapped[index], connect_timeout)

    lineup.seats = list(await asyncio.gather(*(placed(index, bot) for index, bot in enumerate(bots))))


async def _claim(
    launcher: Launcher | None, bots: list[BotSpec], lineup: Lineup, deals: int | None = None
) -> dict[str, BotProcess]:
    """The remote entrants' connections for a match, claimed all together before any other bot starts
    (two arbiters never each hold an entrant the other waits for). One not connected within the league's
    wait fails like a start; one still busy in another match is named but not charged."""
    if not bots:
        return {}
    assert launcher is not None, "a remote entrant needs a launcher (with a lobby)"
    try:
        claimed = await launcher.claim(bots, deals)
    except BotSpecError as exc:
        charged = exc.names if isinstance(exc, Unclaimed) else tuple(bot.name for bot in bots)
        busy = exc.busy if isinstance(exc, Unclaimed) else ()
        lineup.failed = NotStarted((*charged, *busy, bots[0].name)[0], str(exc), charged=charged)
        return {}
    lineup.processes.extend(claimed)
    lineup.started.extend(bot.name for bot in bots)
    return {process.spec.name: process for process in claimed}


async def _start(
    launcher: Launcher | None, bot: BotSpec, lineup: Lineup, tap: Tap | None, connect_timeout: float
) -> Seat:
    """A fresh seat for a command or in-process bot; one that does not start is an :class:`AbsentSeat`,
    and the first such names the lineup's ``failed``."""
    if bot.module:
        try:
            seat: Seat = LocalSeat(bot.load(), bot.name)
        except BotSpecError as exc:  # an import fails the same way every time
            lineup.failed = lineup.failed or NotStarted(bot.name, str(exc), lasting=True)
            return AbsentSeat(bot.name, str(exc))
        lineup.started.append(bot.name)
        return seat
    assert launcher is not None, "a command bot needs a launcher"
    try:
        try:
            process = await launcher.start(bot, connect_timeout)
        except BotSpecError:
            process = await launcher.start(bot, connect_timeout)  # a busy machine can make a start miss
    except BotSpecError as exc:
        lineup.failed = lineup.failed or NotStarted(bot.name, str(exc))
        return AbsentSeat(bot.name, str(exc))
    lineup.processes.append(process)
    lineup.started.append(bot.name)
    return seat_of(process, tap)


def seat_of(process: BotProcess, tap: Tap | None = None) -> RemoteSeat:
    """The seat of a started bot process or a claimed remote connection, named as its bot is: the one
    place a :class:`RemoteSeat` is made, so that every seat gets the process's last words for the fault
    detail when its stream breaks."""
    assert process.session is not None, "a started process has its session"
    return RemoteSeat(process.session, process.spec.name, tap, process.exit_words)


def own_name(seat: Seat) -> str:
    """The name a seated bot gives itself, cleaned (its hello's ``bot_name``, an in-process bot's
    ``name``); empty for a seat whose bot is absent or gives none."""
    if isinstance(seat, RemoteSeat):
        return clean_name(seat.session.bot_name)
    if isinstance(seat, LocalSeat):
        return clean_name(str(seat.bot.name))
    return ""


async def stop_all(launcher: Launcher, processes: list[BotProcess], interrupted: bool = False) -> None:
    """Stops ``processes``, every one of them whatever fails."""
    await asyncio.gather(
        *(launcher.stop(process, interrupted) for process in processes), return_exceptions=True
    )
