"""Play Pyramid from Python code, a script or a notebook, as Kaggle's ``env.run`` does: one match or a
small series between :class:`~pyramid_sdk.bot.Bot` objects and bot commands, with the records and totals
returned as values.

>>> from referee.api import match
>>> from sample_bots.heuristic import HeuristicBot
>>> from sample_bots.random_bot import RandomBot
>>> played = match([HeuristicBot, RandomBot], seed=7)
>>> played.seats, len(played.record.deals), played.faults
(('heuristic', 'random'), 32, ())
>>> played.totals == played.record.totals and played.ranks[0] == 1
True
>>> print(played.deal(1).splitlines()[0])
deal 1 of 32  dealer heuristic  declarer random: 5 ♣

A bot is a :class:`Bot` instance (played in-process, trusted, and kept as it is from match to match), a
:class:`Bot` subclass (a fresh instance for every match), a ``module:Class`` text, or a command line such
as ``"python my_bot.py"`` or ``"node my_bot.js"``, which runs as its own process over gRPC, in its sandbox,
exactly as in a league: a fresh process for every match.

Every function here blocks until its matches are played. In a notebook, whose event loop is already
running, the matches run on a thread of their own, so the same calls work there.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import secrets
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from pyramid_sdk import MatchRecord, Rules
from pyramid_sdk.bot import Bot, TimeControl
from pyramid_sdk.seeds import SEED_BITS, derive_seed
from referee.league.modes import Seating, seatings
from referee.match.bots import BotSpec
from referee.match.faults import Fault, FaultPolicy
from referee.match.launcher import Confinement, Launcher, interrupted
from referee.match.outcome import MatchOutcome, MatchStatus
from referee.match.runner import LocalSeat, Seat, play_match
from referee.match.sandbox import SandboxMode
from referee.match.setup import open_launcher, take_seats
from referee.report.transcript import brief, deal_text

T = TypeVar("T")

BotLike = Bot | type[Bot] | str
"""What :func:`match` and :func:`series` take as a bot."""


class Text(str):
    """Text that shows as itself, line breaks and all, in a REPL or a notebook (a plain ``str`` shows as
    its quoted ``repr``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        escaped = str(self).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return f"<pre>{escaped}</pre>"


@dataclass(frozen=True, slots=True)
class Played:
    """One match played: its record (every hand, trick and score), the faults, and its outcome."""

    record: MatchRecord
    faults: tuple[Fault, ...]
    status: MatchStatus
    void_reason: str = ""

    @property
    def seats(self) -> tuple[str, ...]:
        return self.record.seats

    @property
    def totals(self) -> tuple[int, ...]:
        """Per seat, its credited total: the sum of its 16 deal scores, except that a seat that forfeited
        gets the worst score of each declaration from then on (docs/RULES.md, "Forfeits"); what the
        referee's autopilot made of them stays in ``record.totals``."""
        return self.record.credited_totals

    @property
    def ranks(self) -> tuple[int, ...]:
        """Per seat, 1 = best; equal totals share a rank; a forfeited seat ranks below the others."""
        return self.record.ranks

    @property
    def seed(self) -> int:
        """The match seed: ``match(..., seed=played.seed)`` deals the same cards again."""
        return self.record.seed

    def deal(self, number: int) -> Text:
        """Deal ``number`` (from 1) as text: the hands as dealt, the declaration, every trick, the score."""
        return Text(deal_text(self.record, number))

    def summary(self) -> Text:
        """Every deal on one line, every pyramid as drawn on paper, the standings."""
        return Text(brief(self.record))

    def __repr__(self) -> str:
        standings = ", ".join(f"{name} {total}" for name, total in zip(self.seats, self.totals, strict=True))
        faults = f", {len(self.faults)} fault(s)" if self.faults else ""
        return f"<Played {self.status}: {standings}{faults}>"


@dataclass(frozen=True, slots=True)
class Series:
    """A small series: each round deals the same cards to every seating of the bots (the duplicate
    format), so the luck of the deal evens out."""

    names: tuple[str, ...]
    """The bots' names, in the order they were given."""
    matches: tuple[Played, ...]
    totals: dict[str, int] = field(default_factory=dict)
    """Per bot name, its points summed over every match."""
    wins: dict[str, float] = field(default_factory=dict)
    """Per bot name, its matches won; a first place shared by k seats counts 1/k."""

    @property
    def records(self) -> tuple[MatchRecord, ...]:
        return tuple(played.record for played in self.matches)

    def summary(self) -> Text:
        lines = [f"{len(self.matches)} matches"]
        for name in sorted(self.names, key=lambda name: -self.totals[name]):
            lines.append(f"{name:<16} {self.totals[name]:>6} points  {self.wins[name]:g} wins")
        return Text("\n".join(lines))

    def __repr__(self) -> str:
        return str(self.summary())


def match(
    bots: Sequence[BotLike],
    *,
    seed: int | None = None,
    rules: Rules | None = None,
    time_control: TimeControl | None = None,
    max_faults: int = 3,
    cwd: Path | str | None = None,
    logs: Path | str | None = None,
    sandbox: str = "auto",
) -> Played:
    """Plays one match between 2-4 ``bots`` in seat order and returns it.

    ``seed`` fixes the deals (default: a fresh random one, kept in ``played.seed``); ``rules`` the
    variant (default: ``Rules(players=len(bots))``); ``time_control`` the clock (1 s per action plus a
    20 s bank). Command lines run in ``cwd`` (default: the current folder), with their stderr kept in
    ``logs/NAME.log`` if ``logs`` is given; ``sandbox`` is ``auto``, ``required`` or ``none``
    (docs/SECURITY.md).
    """
    entries = _entries(bots, cwd)
    rules = rules or Rules(players=len(entries))
    if seed is None:
        seed = _fresh_seed()
    confinement = Confinement(SandboxMode(sandbox))
    log_dir = _log_dir(logs)
    policy = FaultPolicy(max_faults)
    clock = time_control or TimeControl()

    async def play() -> Played:
        async with open_launcher(log_dir, confinement) as launcher:
            return await _play_one(launcher, entries, rules, seed, clock, policy, "match")

    return _run(play())


def series(
    bots: Sequence[BotLike],
    *,
    rounds: int = 1,
    seed: int | None = None,
    rules: Rules | None = None,
    time_control: TimeControl | None = None,
    max_faults: int = 3,
    cwd: Path | str | None = None,
    logs: Path | str | None = None,
    sandbox: str = "auto",
    seating: str = "balanced",
) -> Series:
    """Plays ``rounds`` rounds between 2-4 ``bots``. A round is one match per seating, all on the same
    deals; ``seating`` is the league key's (docs/LEAGUE.md): ``balanced`` (2, 6 or 12 matches at 2, 3 or
    4 bots) gives each bot every seat's cards and every neighbour equally often, ``cyclic`` only
    rotates them. The options are :func:`match`'s; round ``r`` is dealt from
    ``derive_seed(seed, "series", r)``.
    """
    if rounds < 1:
        raise ValueError(f"rounds: must be at least 1, got {rounds}")
    entries = _entries(bots, cwd)
    players = len(entries)
    rules = rules or Rules(players=players)
    if seed is None:
        seed = _fresh_seed()
    confinement = Confinement(SandboxMode(sandbox))
    log_dir = _log_dir(logs)
    policy = FaultPolicy(max_faults)
    clock = time_control or TimeControl()
    names = tuple(name for name, _ in entries)
    orders = seatings(players, Seating(seating))

    async def play() -> list[Played]:
        played = []
        async with open_launcher(log_dir, confinement) as launcher:
            for round_number in range(rounds):
                deals = derive_seed(seed, "series", round_number)
                for number, order in enumerate(orders, start=1):
                    seated = [entries[index] for index in order]
                    match_id = f"series-{round_number + 1}-{number}"
                    played.append(await _play_one(launcher, seated, rules, deals, clock, policy, match_id))
        return played

    matches = tuple(_run(play()))
    totals = dict.fromkeys(names, 0)
    wins = dict.fromkeys(names, 0.0)
    for played in matches:
        winners = [seat for seat, rank in enumerate(played.ranks) if rank == 1]
        for seat, name in enumerate(played.seats):
            totals[name] += played.totals[seat]
            if seat in winners:
                wins[name] += 1 / len(winners)
    return Series(names, matches, totals, wins)


# -- plumbing ---------------------------------------------------------------------------------------------


Entry = tuple[str, Bot | type[Bot] | BotSpec]


def _entries(bots: Sequence[BotLike], cwd: Path | str | None) -> list[Entry]:
    """Each bot with a name unique at the table (repeated names get ``#2``, ``#3`` …)."""
    if not 2 <= len(bots) <= 4:
        raise ValueError(f"a match needs 2 to 4 bots, got {len(bots)}")
    where = Path(cwd).resolve() if cwd is not None else Path.cwd()
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for bot in bots:
        what: Bot | type[Bot] | BotSpec
        if isinstance(bot, Bot) or (isinstance(bot, type) and issubclass(bot, Bot)):
            what, name = bot, bot.name
        elif isinstance(bot, str):
            spec = BotSpec.parse(bot, cwd=where)
            spec.check()
            what, name = spec, spec.name
        else:
            raise TypeError(f"not a bot: {bot!r}: give a Bot, a Bot subclass, module:Class or a command line")
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}#{seen[name]}"
        entries.append((name, what))
    return entries


async def _play_one(
    launcher: Launcher,
    entries: Sequence[Entry],
    rules: Rules,
    seed: int,
    clock: TimeControl,
    policy: FaultPolicy,
    match_id: str,
) -> Played:
    """One match: fresh processes for the commands (stopped after it), the objects as they are."""
    commands = [replace(what, name=name) for name, what in entries if isinstance(what, BotSpec)]
    started = iter(await take_seats(launcher, commands))
    seats: list[Seat] = []
    for name, what in entries:
        if isinstance(what, BotSpec):
            seats.append(next(started))
        else:
            seats.append(LocalSeat(what() if isinstance(what, type) else what, name))
    try:
        outcome: MatchOutcome = await play_match(
            seats, rules, seed, match_id=match_id, time_control=clock, fault_policy=policy
        )
    finally:  # a match cut short (Ctrl-C in a notebook, say) ends its bots' streams with CANCELLED
        await launcher.stop_all(interrupted())
    return Played(outcome.record, outcome.faults, outcome.status, outcome.void_reason)


def _fresh_seed() -> int:
    return secrets.randbits(SEED_BITS)


def _log_dir(logs: Path | str | None) -> Path | None:
    if logs is None:
        return None
    folder = Path(logs)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Runs ``coroutine`` to its end: here, or on a thread of its own where an event loop is already
    running (a notebook's)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="pyramid-match") as pool:
        return pool.submit(asyncio.run, coroutine).result()
