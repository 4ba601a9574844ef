"""How fast a league's bots play, measured before anything is stored: what ``referee run --dry-run``
estimates from when no stored match says better (a flat guess of 3 s a match was half the real time).

A *sample* is the first :data:`TIMING_DEALS` deals of one match of the schedule's lineups, played on the
preflight's public seed (never a deal of the league) by fresh bot processes in their sandbox, as a run
starts them, with ``at_once`` samples at a time as the run plays its matches. Bots are timed at a table
rather than each alone with the referee, because a bot alone answers faster than it will in a match:
at a table it sits idle while the others think, and on a busy machine it then waits for a CPU when it
is asked (the random bot took 0.2 to 0.6 ms a decision alone here, 1.0 to 1.4 ms in the example
league's matches).
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pyramid_sdk.actions import IllegalActionError, IllegalTalkError, MalformedActionError
from pyramid_sdk.bot import MatchInfo
from pyramid_sdk.engine import Match
from pyramid_sdk.observation import Phase
from pyramid_sdk.rules import DECLARATIONS_PER_PLAYER, TRICKS_PER_DEAL, Rules
from pyramid_sdk.seeds import derive_seed
from referee.league.config import League
from referee.league.schedule import ScheduledMatch
from referee.match.arbiter import seat_of
from referee.match.bots import BotSpecError
from referee.match.faults import FaultKind
from referee.match.launcher import BotProcess, Launcher
from referee.match.playing import LocalSeat, Seat
from referee.run.preflight import PREFLIGHT_SEED

TIMING_DEALS: Final = 4
"""Deals a sample plays: 24 cards a seat and a declaration or more (a second or so for the example
league's table), enough for a mean that one stall of a busy machine does not make."""
ROUGH_START: Final = 0.4
"""Seconds counted for the start of a bot that could not be timed: about a Python bot's here."""
ROUGH_DECISION: Final = 0.002
"""Seconds counted for a decision of a bot that could not be timed: about the mean of the example
league's four bots in their matches here."""


@dataclass(frozen=True, slots=True)
class Speed:
    """How fast one entrant's bot played its samples."""

    start: float
    """Mean seconds from launching its process to its hello; 0 for an in-process entrant."""
    decision: float
    """Mean seconds of its decisions, as the referee measures them (the round trip), its first decision
    of each sample left out: that one also warms the bot up."""


@dataclass(slots=True)
class Timings:
    """What the samples measured: each timed entrant's speed, and why the others could not be timed."""

    speeds: dict[str, Speed]
    failures: dict[str, str]

    def match_seconds(self, rules: Rules, lineups: Sequence[tuple[str, ...]]) -> float:
        """The mean seconds a match of ``lineups`` should take: each seat's start and its decisions at its
        bot's speed; :data:`ROUGH_START` and :data:`ROUGH_DECISION` for a bot not timed. The starts
        count in full although a run starts a match's bots while the previous match plays: on a busy
        machine they take their CPU from it (the example league's bots decided 30 to 40% slower in its
        matches than in the samples, which start nothing while they play).

        >>> Timings({"a": Speed(0.5, 0.01), "b": Speed(0.0, 0.001)}, {}).match_seconds(
        ...     Rules(players=2), [("a", "b"), ("b", "a")])  # 208 decisions a seat
        2.788
        """
        decisions = decisions_per_seat(rules)
        rough = Speed(ROUGH_START, ROUGH_DECISION)
        total = sum(
            speed.start + decisions * speed.decision
            for lineup in lineups
            for speed in (self.speeds.get(name, rough) for name in lineup)
        )
        return round(total / len(lineups), 6) if lineups else 0.0


def decisions_per_seat(rules: Rules) -> int:
    """Decisions a seat makes in a match: its 16 declarations and a card every trick.

    >>> [decisions_per_seat(Rules(players=players)) for players in (2, 3, 4)]
    [208, 304, 400]
    """
    return DECLARATIONS_PER_PLAYER + rules.deals * TRICKS_PER_DEAL


def samples(pending: Sequence[ScheduledMatch], at_once: int) -> list[tuple[str, ...]]:
    """The lineups to sample: those of the first ``pending`` matches that seat an entrant no earlier one
    does, until every entrant of ``pending`` sits in one, then repeated until ``at_once`` of them can
    play at once.

    >>> from referee.league.schedule import build_schedule
    >>> schedule = build_schedule(1, ("a", "b", "c"), 2, 1, "balanced")
    >>> [sorted(lineup) for lineup in samples(schedule, 1)], len(samples(schedule, 4))
    ([['a', 'b'], ['a', 'c']], 4)
    """
    lineups: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for match in pending:
        if not seen.issuperset(match.entrants):
            lineups.append(match.entrants)
            seen.update(match.entrants)
    base = len(lineups)
    while base and len(lineups) < at_once:
        lineups.append(lineups[len(lineups) % base])
    return lineups


async def time_bots(
    league: League, lineups: Sequence[tuple[str, ...]], at_once: int, launcher: Launcher
) -> Timings:
    """Plays a sample of each of ``lineups``, ``at_once`` at a time, and gathers each entrant's speed."""
    gate = asyncio.Semaphore(max(1, at_once))

    async def sample(lineup: tuple[str, ...]) -> _Sample:
        async with gate:
            return await time_lineup(league, lineup, launcher)

    starts: dict[str, list[float]] = {}
    decisions: dict[str, list[float]] = {}
    failures: dict[str, str] = {}
    for measured in await asyncio.gather(*(sample(lineup) for lineup in lineups)):
        for name, seconds in measured.starts.items():
            starts.setdefault(name, []).append(seconds)
        for name, times in measured.decisions.items():
            decisions.setdefault(name, []).extend(times)
        for name, reason in measured.failures.items():
            failures.setdefault(name, reason)
    speeds = {
        name: Speed(statistics.fmean(starts.get(name) or [0.0]), statistics.fmean(times))
        for name, times in decisions.items()
        if times and name not in failures
    }
    return Timings(speeds, failures)


@dataclass(slots=True)
class _Sample:
    starts: dict[str, float]
    decisions: dict[str, list[float]]
    failures: dict[str, str]


async def time_lineup(league: League, lineup: tuple[str, ...], launcher: Launcher) -> _Sample:
    """One sample: the bots of ``lineup`` started at once, then the first :data:`TIMING_DEALS` deals of
    the preflight seed, every seat asked for its decisions as in a match. A bot that does not start,
    faults or answers illegally is a failure, and the default action plays its seat from then on."""
    rules, clock = league.rules, league.time_control
    measured = _Sample({}, {name: [] for name in lineup}, {})
    processes: list[BotProcess] = []

    async def begin(name: str) -> Seat | None:
        entrant = league.entrant(name)
        try:
            if entrant.in_process:
                return LocalSeat(entrant.spec.load(), name)
            started = time.monotonic()
            process = await launcher.start(entrant.spec)
        except BotSpecError as exc:
            measured.failures[name] = str(exc)
            return None
        measured.starts[name] = time.monotonic() - started
        processes.append(process)
        return seat_of(process)

    try:
        seats = list(await asyncio.gather(*(begin(name) for name in lineup)))
        for number, seat in enumerate(seats):
            if seat is not None:
                info = MatchInfo(
                    "timing", number, lineup, rules, clock, derive_seed(PREFLIGHT_SEED, "bot", number)
                )
                reason = await seat.start(info)
                if reason is not None:
                    measured.failures[lineup[number]] = f"did not take the match start: {reason}"
                    seats[number] = None
        await _play(Match(rules, PREFLIGHT_SEED, lineup), seats, league, measured)
    finally:
        await asyncio.gather(*(launcher.stop(process) for process in processes), return_exceptions=True)
    return measured


async def _play(match: Match, seats: list[Seat | None], league: League, measured: _Sample) -> None:
    clock = league.time_control
    names = match.seats
    asked = [0] * match.players
    while match.phase is not Phase.MATCH_OVER:
        if match.phase is Phase.DEAL_OVER:
            for number, seat in enumerate(seats):
                if seat is not None:
                    await seat.deal_end(match.observation(number))
            if match.deal_number >= TIMING_DEALS:
                return
            match.next_deal()
            continue
        acting = match.to_act
        assert acting is not None
        seat = seats[acting]
        if seat is None:
            match.apply(match.default_action())
            continue
        started = time.monotonic()
        decision = await seat.decide(match.observation(acting), clock.per_action + clock.bank, clock.bank)
        elapsed = time.monotonic() - started
        asked[acting] += 1
        if asked[acting] > 1:  # the first one also warms the bot up
            measured.decisions[names[acting]].append(elapsed)
        fault = decision.fault
        problem = f"{fault}: {decision.detail}" if fault is not None and fault is not FaultKind.TALK else ""
        if decision.action is not None and not problem:
            try:
                match.apply(decision.action, acting)
                continue
            except IllegalTalkError:  # as in a match: the talk is a fault of its own, the bot plays on
                match.apply(match.default_action())
                continue
            except (IllegalActionError, MalformedActionError) as exc:
                problem = f"an illegal action: {exc}"
        measured.failures.setdefault(names[acting], f"bot {names[acting]!r} failed a decision ({problem})")
        seats[acting] = None
        match.apply(match.default_action())


def eta_text(seconds: float) -> str:
    """A duration as a person reads it: ``4m05s``, ``42s``; ``?`` if unknown."""
    if not math.isfinite(seconds):
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
