"""``schedule.until: settled``: a ranking that stops when it is settled.

A round robin plays every table however clear the order already is. This schedule plays in *batches* of
tables and, after each one, looks at the ranking the stored results give: for every pair of entrants
next to each other in it, how sure is it that the higher one is better? The next batch goes to the pairs
it is least sure of; play stops once every adjacent pair is *settled* (separated with the configured
confidence, or, with a ``margin``, known to be within it of each other) or when the next batch would
pass ``max_matches``.

The whole schedule is a pure function of (league seed, entrants, settings, stored results): batch k is
chosen from the results of batches 1..k-1 only, and only once every match of batch k-1 is stored
complete. Nothing about the plan is stored; every command (``run``, ``leaderboard``, ``export``,
``matches``, ``report``) recomputes it from the database. So a resumed run, a run with another
``concurrency`` or on Dask workers, and a read-only command all see the same batches, and the results
database stays the one source of truth (a match deleted because its bot changed, ``referee.league.versions``,
reopens its batch and everything chosen after it, with no stored plan to fall out of step).

Separation comes from the same TrueSkill ratings as the leaderboard, updated game by game in schedule
order (:func:`referee.league.ratings.rate_game`), and the ranking is the leaderboard's (μ − 3σ, then name).
"""

from __future__ import annotations

import enum
import itertools
import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Final

import trueskill

from pyramid_sdk.seeds import derive_seed
from referee.league.modes import RatingMode, Seating, Settling, seatings
from referee.league.ratings import ENVIRONMENT, rate_game, rated_games
from referee.league.schedule import ScheduledMatch, table_matches
from referee.league.summary import Summarized
from referee.match.outcome import MatchStatus

_NORMAL: Final = NormalDist()


@dataclass(frozen=True, slots=True)
class Neighbours:
    """Two entrants next to each other in the ranking, ``higher`` ranked above ``lower``."""

    higher: str
    lower: str
    separation: float
    """P(μ of ``higher`` > μ of ``lower``) under the ratings' normal beliefs."""
    equal: float
    """P(|μ difference| < margin); 0 without a margin."""
    tables: int
    """Complete tables the two shared."""

    def settled(self, settling: Settling) -> bool:
        return max(self.separation, self.equal) >= settling.confidence

    def text(self) -> str:
        """
        >>> Neighbours("a", "b", 0.9713, 0.0, 4).text()
        'a > b 0.971'
        >>> Neighbours("a", "b", 0.6, 0.98, 9).text()
        'a ≈ b 0.980'
        """
        if self.equal > self.separation:
            return f"{self.higher} ≈ {self.lower} {self.equal:.3f}"
        return f"{self.higher} > {self.lower} {self.separation:.3f}"


class Stop(enum.StrEnum):
    """Where a settled schedule stands."""

    PLAYING = "playing"
    """A batch is chosen and not complete yet."""
    SETTLED = "settled"
    """Every adjacent pair is settled: no further batch."""
    CAPPED = "capped"
    """Not settled, but another batch would pass ``max_matches``."""


@dataclass(frozen=True, slots=True)
class Settlement:
    """How settled the ranking of the complete batches is."""

    stop: Stop
    batches: int
    """Batches chosen so far (the last one may still be playing)."""
    matches: int
    """Matches of those batches."""
    pairs: tuple[Neighbours, ...]
    """The adjacent pairs of the ranking after the last complete batch, top first."""
    settling: Settling

    @property
    def weakest(self) -> Neighbours | None:
        """The least settled adjacent pair."""
        return min(self.pairs, key=lambda pair: max(pair.separation, pair.equal), default=None)

    def line(self) -> str:
        """One line for the leaderboard and the run's end.

        >>> s = Settling(100, 2)
        >>> Settlement(Stop.SETTLED, 3, 36, (Neighbours("a", "b", 0.99, 0.0, 3),), s).line()
        'ranking settled after 3 batches, 36 matches (confidence 0.95); weakest: a > b 0.990'
        >>> Settlement(Stop.CAPPED, 9, 96, (Neighbours("a", "b", 0.7, 0.0, 9),), s).line()
        'ranking not settled at max_matches 100 (96 matches, 9 batches); weakest: a > b 0.700'
        """
        weakest = self.weakest
        tail = f"; weakest: {weakest.text()}" if weakest is not None else ""
        batches = f"{self.batches} batch{'es' if self.batches != 1 else ''}"
        if self.stop is Stop.SETTLED:
            return (
                f"ranking settled after {batches}, {self.matches} matches "
                f"(confidence {self.settling.confidence:g}){tail}"
            )
        if self.stop is Stop.CAPPED:
            return (
                f"ranking not settled at max_matches {self.settling.max_matches} "
                f"({self.matches} matches, {batches}){tail}"
            )
        return f"ranking not settled yet: batch {self.batches} playing ({self.matches} matches){tail}"


@dataclass(frozen=True, slots=True)
class Plan:
    schedule: tuple[ScheduledMatch, ...]
    settlement: Settlement


def plan(
    league_seed: int,
    entrant_names: Sequence[str],
    players: int,
    seating: Seating,
    mode: RatingMode,
    settling: Settling,
    stored: Mapping[str, Summarized],
) -> Plan:
    """The batches chosen so far from ``stored``, and where the ranking stands.

    Batch 1 seats every entrant once (a seeded shuffle cut into tables). Each later batch exists only
    once its predecessor is stored complete, and is :func:`choose`'s pick from the ratings after it.
    """
    names = tuple(sorted(entrant_names))
    orders = seatings(players, seating)
    schedule: list[ScheduledMatch] = []
    ratings = {name: ENVIRONMENT.create_rating() for name in names}
    together: Counter[frozenset[str]] = Counter()
    batch = start(league_seed, names, players)
    number = 1
    while True:
        first = len(schedule)
        schedule.extend(_matches(league_seed, number, batch, orders, first))
        added = schedule[first:]
        if not all(
            (m := stored.get(s.match_id)) is not None and m.summary.status is MatchStatus.COMPLETE
            for s in added
        ):
            pairs = adjacent(ratings, together, settling) if number > 1 else ()  # no ranking yet
            return Plan(tuple(schedule), Settlement(Stop.PLAYING, number, len(schedule), pairs, settling))
        for game in rated_games(added, stored, mode):
            ratings = rate_game(ratings, game)
        for table in batch:
            together.update(frozenset(p) for p in _pairs_of(table))
        pairs = adjacent(ratings, together, settling)
        room = (settling.max_matches - len(schedule)) // len(orders)
        stop = Stop.SETTLED if all(pair.settled(settling) for pair in pairs) else None
        if stop is None and room < 1:
            stop = Stop.CAPPED
        if stop is not None:
            return Plan(tuple(schedule), Settlement(stop, number, len(schedule), pairs, settling))
        number += 1
        batch = choose(ranking(ratings), pairs, together, settling, players, min(settling.batch_tables, room))


def start(league_seed: int, names: tuple[str, ...], players: int) -> list[tuple[str, ...]]:
    """The first batch: the entrants in a seeded order, cut into tables; the last one is filled up from
    the front of that order.

    >>> start(1, ("a", "b", "c", "d", "e"), 2)
    [('a', 'd'), ('b', 'e'), ('c', 'a')]
    """
    order = list(names)
    random.Random(derive_seed(league_seed, "settled", "start")).shuffle(order)
    tables = []
    for place in range(0, len(order), players):
        table = order[place : place + players]
        table += [name for name in order if name not in table][: players - len(table)]
        tables.append(tuple(table))
    return tables


def ranking(ratings: Mapping[str, trueskill.Rating]) -> list[str]:
    """The leaderboard's order: μ − 3σ, best first, then name (as :func:`referee.league.ratings.rate`)."""
    return sorted(ratings, key=lambda name: (-(ratings[name].mu - 3 * ratings[name].sigma), name))


def adjacent(
    ratings: Mapping[str, trueskill.Rating], together: Counter[frozenset[str]], settling: Settling
) -> tuple[Neighbours, ...]:
    """Every pair of neighbours in the ranking, top first, with how settled it is."""
    order = ranking(ratings)
    pairs = []
    for higher, lower in itertools.pairwise(order):
        a, b = ratings[higher], ratings[lower]
        spread = math.hypot(a.sigma, b.sigma)
        gap = a.mu - b.mu
        separation = _NORMAL.cdf(gap / spread)
        equal = 0.0
        if settling.margin > 0:
            equal = _NORMAL.cdf((settling.margin - gap) / spread) - _NORMAL.cdf(
                (-settling.margin - gap) / spread
            )
        pairs.append(Neighbours(higher, lower, separation, equal, together[frozenset((higher, lower))]))
    return tuple(pairs)


def choose(
    order: Sequence[str],
    pairs: Sequence[Neighbours],
    together: Counter[frozenset[str]],
    settling: Settling,
    players: int,
    count: int,
) -> list[tuple[str, ...]]:
    """The next batch's ``count`` tables.

    The unsettled adjacent pairs, least settled first (then those that shared fewer tables, then the
    higher in the ranking), take a table each in turn, again from the first once every one has one. A
    table is its pair and the ``players - 2`` entrants nearest to the pair in the ranking, of those at
    equal distance the ones that shared fewest tables with the pair, then the higher. A pair may get
    several tables of one batch (each with its own deals): one unsettled pair left gets the whole batch.

    >>> order = ["a", "b", "c", "d"]
    >>> pairs = [Neighbours("a", "b", 0.99, 0, 1), Neighbours("b", "c", 0.6, 0, 1),
    ...          Neighbours("c", "d", 0.8, 0, 1)]
    >>> choose(order, pairs, Counter(), Settling(100, 3), 2, 3)
    [('b', 'c'), ('c', 'd'), ('b', 'c')]
    >>> choose(order, pairs, Counter(), Settling(100, 3), 3, 2)
    [('b', 'c', 'a'), ('c', 'd', 'b')]
    """
    place = {name: index for index, name in enumerate(order)}
    unsettled = [pair for pair in pairs if not pair.settled(settling)]
    unsettled.sort(key=lambda pair: (max(pair.separation, pair.equal), pair.tables, place[pair.higher]))
    shared = Counter(together)
    tables: list[tuple[str, ...]] = []
    for turn in range(count):
        pair = unsettled[turn % len(unsettled)]
        top, bottom = place[pair.higher], place[pair.lower]

        def nearness(
            name: str, top: int = top, bottom: int = bottom, pair: Neighbours = pair
        ) -> tuple[int, int, int]:
            distance = top - place[name] if place[name] < top else place[name] - bottom
            times = shared[frozenset((name, pair.higher))] + shared[frozenset((name, pair.lower))]
            return distance, times, place[name]

        others = sorted((name for name in order if name not in (pair.higher, pair.lower)), key=nearness)
        table = (pair.higher, pair.lower, *others[: players - 2])
        shared.update(frozenset(p) for p in _pairs_of(table))
        tables.append(table)
    return tables


def _pairs_of(table: Sequence[str]) -> list[tuple[str, str]]:
    return [(a, b) for index, a in enumerate(table) for b in table[index + 1 :]]


def _matches(
    league_seed: int,
    batch: int,
    tables: Sequence[tuple[str, ...]],
    orders: tuple[tuple[int, ...], ...],
    position: int,
) -> list[ScheduledMatch]:
    """The batch's tables in all their seatings. A table is ``b3:{a,b}``; the same entrants at a second
    table of the batch make ``b3.2:{a,b}``, with its own deals. The seed comes from the league seed, the
    batch, that repeat number and the names, so it never meets a round robin's."""
    matches: list[ScheduledMatch] = []
    seen: Counter[tuple[str, ...]] = Counter()
    for table_number, table in enumerate(tables, start=1):
        by_name = tuple(sorted(table))
        seen[by_name] += 1
        repeat = seen[by_name]
        prefix = f"b{batch}" + (f".{repeat}" if repeat > 1 else "")
        seed = derive_seed(league_seed, "settled", batch, "table", repeat, *by_name)
        matches += table_matches(prefix, batch, table_number, seed, by_name, orders, position + len(matches))
    return matches
