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

Every match is played by a :class:`~referee.match.arbiter.Arbiter`, as in a league, under its fault policy:
a seat forfeits after ``max_faults`` faults, a start that fails is tried once more, a void match is
played again from scratch. :func:`match` and :func:`series` block until their matches are played (in a
notebook, whose event loop is already running, the matches run on a thread of their own, so the same
calls work there); :func:`play` is :func:`match` for a caller with an event loop of its own, and
``referee match`` is one call of it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import secrets
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, TypeVar

from pyramid_sdk import MatchRecord, Rules
from pyramid_sdk.bot import Bot, TimeControl
from pyramid_sdk.seeds import SEED_BITS, derive_seed
from referee.league.modes import Seating, seatings
from referee.match.arbiter import Arbiter, Sitting, own_name
from referee.match.bots import BotSpec, BotSpecError
from referee.match.faults import MAX_FAULTS, Fault
from referee.match.launcher import Confinement
from referee.match.outcome import MatchStatus, NotStarted
from referee.match.playing import LocalSeat, Seat
from referee.match.sandbox import SandboxMode
from referee.match.sessions import clean_name
from referee.match.setup import open_launcher
from referee.report.transcript import brief, deal_text

T = TypeVar("T")

BotLike = Bot | type[Bot] | str | BotSpec
"""What :func:`match` and :func:`series` take as a bot."""
MATCH_ID: Final = "match"
"""The id the bots of one match are told: the same for every match, so it says nothing of the seed (an
id built from the seed would hand a bot every hand)."""


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
    max_faults: int = MAX_FAULTS,
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
    confinement = Confinement(SandboxMode(sandbox))
    return _run(
        play(
            bots,
            seed=_fresh_seed() if seed is None else seed,
            rules=rules,
            time_control=time_control,
            max_faults=max_faults,
            cwd=cwd,
            log_dir=_log_dir(logs),
            confinement=confinement,
        )
    )


async def play(
    bots: Sequence[BotLike],
    *,
    seed: int,
    rules: Rules | None = None,
    time_control: TimeControl | None = None,
    max_faults: int = MAX_FAULTS,
    cwd: Path | str | None = None,
    log_dir: Path | None = None,
    confinement: Confinement | None = None,
    names: Sequence[str] | None = None,
) -> Played:
    """:func:`match` on the caller's event loop, on a referee of its own whose bots run in
    ``confinement``. With ``names`` (``referee match``), the seats are named by it, seat by seat, and
    past its end by the name each bot gives itself (its hello's, its class's), else its command line's;
    without, by the bots' names as given. Raises :class:`BotSpecError` when a bot does not start."""
    entries = _entries(bots, cwd)
    rules = rules or Rules(players=len(entries))
    async with open_launcher(log_dir, confinement) as launcher:
        arbiter = Arbiter(launcher, rules, time_control or TimeControl(), max_faults)
        return await _play_one(arbiter, entries, seed, MATCH_ID, names)


def series(
    bots: Sequence[BotLike],
    *,
    rounds: int = 1,
    seed: int | None = None,
    rules: Rules | None = None,
    time_control: TimeControl | None = None,
    max_faults: int = MAX_FAULTS,
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
    clock = time_control or TimeControl()
    names = tuple(name for name, _ in entries)
    orders = seatings(players, Seating(seating))

    async def play() -> list[Played]:
        played = []
        async with open_launcher(log_dir, confinement) as launcher:
            arbiter = Arbiter(launcher, rules, clock, max_faults)
            for round_number in range(rounds):
                deals = derive_seed(seed, "series", round_number)
                for number, order in enumerate(orders, start=1):
                    seated = [entries[index] for index in order]
                    match_id = f"series-{round_number + 1}-{number}"
                    played.append(await _play_one(arbiter, seated, deals, match_id))
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
        elif isinstance(bot, str | BotSpec):
            spec = BotSpec.parse(bot, cwd=where) if isinstance(bot, str) else bot
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
    arbiter: Arbiter, entries: Sequence[Entry], seed: int, match_id: str, names: Sequence[str] | None = None
) -> Played:
    """One match played by ``arbiter``: fresh processes for the commands (stopped after it), a fresh
    object for a class, an object as it is; the seats named as :func:`play` says."""
    bots = tuple(
        replace(what, name=name) if isinstance(what, BotSpec) else LocalSeat(_object(what), name)
        for name, what in entries
    )
    sitting = Sitting(match_id, seed, bots)
    try:
        lineup = await arbiter.seat(sitting)
        if names is not None and lineup.failed is None:
            sitting = _named(sitting, lineup.seats, names)
        result = await arbiter.play(sitting, lineup)
    finally:  # a match cut short (Ctrl-C in a notebook, say) ends its bots' streams with CANCELLED
        await arbiter.close()
    if isinstance(result, NotStarted):
        raise BotSpecError(result.reason)
    outcome = result.outcome
    return Played(outcome.record, outcome.faults, outcome.status, outcome.void_reason)


def _object(what: Bot | type[Bot]) -> Bot:
    return what() if isinstance(what, type) else what


def _named(sitting: Sitting, seats: Sequence[Seat], given: Sequence[str]) -> Sitting:
    """``sitting`` with its seats (and ``seats``) named by ``given``, else by the name each bot gives
    itself (its hello's ``bot_name``, its class's ``name``), else as they are; repeated names get #2,
    #3 … A void match played again seats the same names."""
    chosen = [
        (clean_name(given[index]) if index < len(given) else own_name(seat)) or seat.name
        for index, seat in enumerate(seats)
    ]
    taken: set[str] = set()
    bots: list[BotSpec | Seat] = []
    for seat, bot, name in zip(seats, sitting.bots, chosen, strict=True):
        unique, number = name, 1
        while unique in taken:
            number += 1
            unique = f"{name}#{number}"
        taken.add(unique)
        seat.name = unique
        bots.append(replace(bot, name=unique) if isinstance(bot, BotSpec) else bot)
    return replace(sitting, bots=tuple(bots))


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
