"""Preflight: before a run's first match, every entrant is tried once, so a broken bot stops the run
before anything is stored instead of turning up match by match.

Each command entrant's bot is started once, in its sandbox, by the run's own launcher; it must say hello,
take a match start and answer one ``ActionRequest`` (the first decision of a deal that is no deal of the
league: its seed is fixed and public) with a legal action in time. An in-process entrant's module must
import. A failed ``build:`` counts as a failure too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pyramid_sdk.actions import IllegalActionError, IllegalTalkError, MalformedActionError
from pyramid_sdk.bot import MatchInfo
from pyramid_sdk.engine import Match
from referee.league.config import Entrant, League
from referee.match.arbiter import seat_of
from referee.match.bots import BotSpecError
from referee.match.launcher import BotProcess, Launcher, interrupted
from referee.match.output import meaningful_lines

PREFLIGHT_SEED: Final = 1
"""The seed of the preflight's deal: public, and no deal of any league (those come from the league seed)."""
TAIL_LINES: Final = 5
"""Lines of a failed bot's output shown with its failure."""


@dataclass(frozen=True, slots=True)
class Broken:
    """An entrant that failed its preflight: why, and the last lines its bot (or build) printed."""

    name: str
    reason: str
    output: tuple[str, ...] = ()


class PreflightError(Exception):
    """Entrants failed the preflight, and the run was not told to go on without them."""

    def __init__(self, broken: list[Broken]) -> None:
        super().__init__(", ".join(item.name for item in broken) + " failed the preflight")
        self.broken = broken


def tail(path: Path | None, lines: int = TAIL_LINES) -> tuple[str, ...]:
    """The last ``lines`` lines of a log file (its last 16 KiB) that say something: no blank line, stack
    frame or runtime trailer (``referee.match.output``); or nothing."""
    if path is None or not path.exists():
        return ()
    with path.open("rb") as log:
        log.seek(max(0, path.stat().st_size - 16384))
        text = log.read().decode("utf-8", "replace")
    return tuple(meaningful_lines(text))[-lines:]


async def preflight(league: League, launcher: Launcher, skip: set[str], concurrency: int) -> list[Broken]:
    """Tries every entrant not in ``skip``, ``concurrency`` at a time; returns those that failed, in
    league order."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(entrant: Entrant) -> Broken | None:
        async with gate:
            return await check_entrant(entrant, league, launcher)

    tried = (e for e in league.entrants if e.name not in skip and not e.spec.remote)  # remote: no process
    results = await asyncio.gather(*(one(e) for e in tried))
    return [item for item in results if item is not None]


async def check_entrant(entrant: Entrant, league: League, launcher: Launcher) -> Broken | None:
    name = entrant.name
    if entrant.in_process:
        try:
            entrant.spec.load()
        except BotSpecError as exc:
            return Broken(name, str(exc))
        return None
    log = launcher.log_of(entrant.spec)
    try:
        process = await launcher.start(entrant.spec)
    except BotSpecError as exc:
        return Broken(name, str(exc), tail(log))
    try:
        problem = await _first_decision(name, process, league)
    finally:  # the preflight's short stream ends with OK after one request (CANCELLED if interrupted)
        await launcher.stop(process, interrupted())
    return None if problem is None else Broken(name, f"bot {name!r} {problem}", tail(log))


async def _first_decision(name: str, process: BotProcess, league: League) -> str | None:
    """Seats the bot where the first decision of the preflight deal falls, and asks it for that one."""
    rules, clock = league.rules, league.time_control
    names = [f"preflight-{seat + 1}" for seat in range(rules.players)]
    acting = Match(rules, PREFLIGHT_SEED, names).to_act
    assert acting is not None
    names[acting] = name
    match = Match(rules, PREFLIGHT_SEED, names)
    seat = seat_of(process)
    info = MatchInfo("preflight", acting, tuple(names), rules, clock, PREFLIGHT_SEED)
    reason = await seat.start(info)
    if reason is not None:
        return f"did not take the match start: {reason}"
    decision = await seat.decide(match.observation(acting), clock.per_action + clock.bank, clock.bank)
    if decision.fault is not None:
        return f"failed its first decision ({decision.fault}): {decision.detail}"
    assert decision.action is not None
    try:
        match.apply(decision.action, acting)
    except (IllegalActionError, IllegalTalkError, MalformedActionError) as exc:
        return f"answered its first decision with an illegal action: {exc}"
    return None
