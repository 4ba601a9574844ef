"""Ranking many bots with error control (``referee compare A B C …``, docs/COMPARE.md, "Many bots").

The candidates sit together at duplicate tables (every seating of one deal seed, ``balanced``: each holds
each seat's cards and follows each other one equally often), so that every seat of every match scores a
candidate. At a table, each candidate's result is its mean points per match over the table's matches; a
*pair* of candidates that shared the table gets one sample, the difference of their two results. The
deals cancel in it, as in ``referee compare A B``'s pairs.

Each pair's mean difference has an **anytime-valid confidence sequence**: an interval that covers the
true mean at every number of tables at once, whenever one looks, so the procedure may stop as soon as it
likes (optional stopping) without losing its level. It is Robbins' normal mixture (Robbins 1970; in the
asymptotic form of Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas 2024, with the variance estimated from
the data). Every pair of the field gets level ``alpha / C(K, 2)`` (Bonferroni over the pairs, valid for
confidence sequences since it is a union bound over events that each hold at all times), so with
probability at least ``1 - alpha`` *every* pair's sequence covers its truth throughout the run. The
adjacent pairs of the current order (by mean points relative to the table) are **decided** once their
interval lies above 0 (*better*) or inside ``(-margin, margin)`` (*equal*: the indifference zone), and
the run stops once every adjacent pair is decided. On the event that every sequence covers, nothing
declared is wrong, which bounds the family-wise error rate by ``alpha``, whatever the stopping time and
however the tables were chosen (each choice depends only on tables already played).

Pure: no I/O, no clock, no global random. ``referee.ranking_play`` plays the tables; the next table is a
function of the tables played so far only.
"""

from __future__ import annotations

import enum
import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from referee.stats import t_cdf

MIN_TABLES: Final = 4
"""Shared tables before a pair may be decided: the spread comes from the data, and two or three
differences can make it look far smaller than it is."""
TARGET_TABLES: Final = 6
"""The number of shared tables at which the confidence sequence is tuned to be narrowest (Robbins'
mixture has one free parameter, ρ; any choice keeps the guarantee, this one only moves where it is
tightest)."""


class RankingError(ValueError):
    """A ranking asked with settings it cannot have: a bad ``--margin`` or ``--alpha``, too few bots. The
    message names the option as ``referee compare`` spells it."""


class Relation(enum.Enum):
    """What is known of two candidates next to each other in the order, the upper one first."""

    BETTER = ">"
    """The upper one is better: the pair's interval lies above 0."""
    EQUAL = "="
    """Equal within the margin: the interval lies inside (−margin, margin)."""
    UNDECIDED = "?"
    """Neither, yet."""


class Ending(enum.IntEnum):
    """How a ranking ended; its value is ``referee compare``'s exit code."""

    DECIDED = 0
    """Every adjacent pair decided."""
    UNDECIDED = 2
    """``--max-tables`` ran out first."""


@dataclass(frozen=True, slots=True)
class Method:
    """The error control: the family-wise error rate ``alpha`` and the indifference zone ``margin``
    (points per match; 0: no pair is ever declared equal)."""

    alpha: float = 0.05
    margin: float = 0.0
    min_tables: int = MIN_TABLES
    target_tables: int = TARGET_TABLES

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 0.5:
            raise RankingError(f"--alpha must lie between 0 and 0.5, got {self.alpha:g}")
        if not (math.isfinite(self.margin) and self.margin >= 0):
            raise RankingError(f"--margin must be a number of points, 0 or more, got {self.margin:g}")
        if self.min_tables < 2:
            raise RankingError(f"at least 2 shared tables before a decision, got {self.min_tables}")

    def pair_alpha(self, candidates: int) -> float:
        """Each pair's level: ``alpha`` split evenly over every pair of the field (Bonferroni).

        >>> Method(alpha=0.06).pair_alpha(4)
        0.01
        """
        return self.alpha / math.comb(candidates, 2)

    def half_width(self, tables: int, stdev: float, candidates: int, freedom: int | None = None) -> float:
        """Half the width of a pair's confidence sequence after ``tables`` shared tables whose differences
        have sample standard deviation ``stdev``: Robbins' two-sided normal mixture,
        ``stdev · sqrt(2(nρ² + 1) / (n²ρ²) · log(sqrt(nρ² + 1) / a))`` with ``a`` the pair's level and
        ρ² tuned to be narrowest at :attr:`target_tables` (Waudby-Smith et al. 2024, eq. (12)-(13)).
        Infinite before :attr:`min_tables`.

        >>> method = Method(alpha=0.05)
        >>> round(method.half_width(10, 4.0, 2), 2), round(method.half_width(40, 4.0, 2), 2)
        (3.86, 2.02)
        >>> method.half_width(3, 4.0, 2)
        inf
        """
        if tables < self.min_tables:
            return math.inf
        level = self.pair_alpha(candidates)
        rho2 = (-2 * math.log(level) + math.log(-2 * math.log(level) + 1)) / self.target_tables
        grown = tables * rho2 + 1
        width = stdev * math.sqrt(2 * grown / (tables**2 * rho2) * math.log(math.sqrt(grown) / level))
        return width * t_widening(width * math.sqrt(tables) / stdev, freedom) if stdev > 0 else width


def t_widening(z: float, freedom: int | None) -> float:
    """How much wider a normal boundary at ``z`` standard errors must be when the spread is estimated
    with ``freedom`` degrees of freedom: Student's quantile of the same tail over ``z`` (1 beyond 20
    degrees, or with none given). The mixture boundary treats the estimated spread as known; with a
    handful of tables its tails are Student's, not normal, and the normal boundary covers too little
    (simulated: two equal entrants of three were ordered in 3.9% of 1,000 runs where their pair was
    allowed 1.7%; in 0.6% with this widening).

    >>> round(t_widening(3.0, 7), 3), t_widening(3.0, 30), t_widening(3.0, None)
    (1.51, 1.0, 1.0)
    """
    if freedom is None or freedom > 20:
        return 1.0
    tail = 1 - statistics.NormalDist().cdf(z)
    low, high = z, 50.0 * z
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if 1 - t_cdf(middle, freedom) > tail else (low, middle)
    return high / z


@dataclass(frozen=True, slots=True)
class Table:
    """One played table: its candidates and each one's mean points per match over its seatings."""

    entrants: tuple[str, ...]
    points: tuple[float, ...]

    def of(self, name: str) -> float:
        return self.points[self.entrants.index(name)]


@dataclass(frozen=True, slots=True)
class Pair:
    """What the tables say of ``upper`` minus ``lower``, in points per match."""

    upper: str
    lower: str
    tables: int
    mean: float
    half_width: float

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def relation(self, margin: float) -> Relation:
        """Better once the interval lies above 0; equal once it lies inside ``(-margin, margin)``."""
        if self.low > 0:
            return Relation.BETTER
        if margin > 0 and -margin < self.low and self.high < margin:
            return Relation.EQUAL
        return Relation.UNDECIDED

    def flipped(self) -> Pair:
        return Pair(self.lower, self.upper, self.tables, -self.mean, self.half_width)


@dataclass(frozen=True, slots=True)
class Standing:
    """Where a ranking stands after some tables: the order, and each adjacent pair with its relation."""

    order: tuple[str, ...]
    score: dict[str, float]
    """Each candidate's mean points per match relative to its tables' means: what orders them."""
    pairs: tuple[Pair, ...]
    """The adjacent pairs, best first: ``pairs[i]`` is ``order[i]`` against ``order[i + 1]``."""
    relations: tuple[Relation, ...]
    tables: int

    @property
    def decided(self) -> bool:
        return all(relation is not Relation.UNDECIDED for relation in self.relations)


def differences(first: str, second: str, tables: Sequence[Table]) -> list[float]:
    """``first``'s result minus ``second``'s at each table they shared, in the order played."""
    return [
        table.of(first) - table.of(second)
        for table in tables
        if first in table.entrants and second in table.entrants
    ]


def pair_of(first: str, second: str, tables: Sequence[Table], method: Method, candidates: int) -> Pair:
    """``first`` against ``second`` over the tables they shared: the mean difference, and the confidence
    sequence's half-width from the pair's own spread with its ``n - 1`` degrees of freedom (the spread
    of pairs differs far too much to pool: 0.2 to 6 points a match on the benchmark's field).

    >>> tables = [Table(("a", "b"), (10.0 + i % 2, 4.0)) for i in range(6)]
    >>> pair = pair_of("a", "b", tables, Method(), 2)
    >>> pair.tables, pair.mean, round(pair.low, 2)
    (6, 6.5, 5.24)
    """
    own = differences(first, second, tables)
    if len(own) < 2:
        return Pair(first, second, len(own), statistics.fmean(own) if own else 0.0, math.inf)
    spread = statistics.stdev(own)
    width = method.half_width(len(own), spread, candidates, len(own) - 1)
    return Pair(first, second, len(own), statistics.fmean(own), width)


def standing(names: Sequence[str], tables: Sequence[Table], method: Method) -> Standing:
    """The order of ``names`` after ``tables`` and what is decided of each adjacent pair.

    The order is by mean points relative to each table's mean (which takes out who else sat there), ties
    by name; a pair whose interval says the lower one is better is swapped, so no adjacent pair ever
    contradicts its own evidence.
    """
    candidates = len(names)
    relative: dict[str, list[float]] = {name: [] for name in names}
    for table in tables:
        middle = statistics.fmean(table.points)
        for name, points in zip(table.entrants, table.points, strict=True):
            relative[name].append(points - middle)
    score = {name: statistics.fmean(values) if values else 0.0 for name, values in relative.items()}
    order = sorted(names, key=lambda name: (-score[name], name))
    for _sweep in range(candidates * candidates):
        swapped = False
        for index in range(candidates - 1):
            pair = pair_of(order[index], order[index + 1], tables, method, candidates)
            if pair.high < 0:
                order[index], order[index + 1] = order[index + 1], order[index]
                swapped = True
        if not swapped:
            break
    pairs = tuple(
        pair_of(upper, lower, tables, method, candidates) for upper, lower in itertools.pairwise(order)
    )
    return Standing(
        tuple(order),
        score,
        pairs,
        tuple(pair.relation(method.margin) for pair in pairs),
        len(tables),
    )


def first_tables(names: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """The opening: windows of ``players`` candidates in the given order (the caller shuffles it with
    the seed), overlapping so that every candidate sits once and neighbours share a table.

    >>> first_tables(list("abcdefg"), 4)
    [('a', 'b', 'c', 'd'), ('d', 'e', 'f', 'g')]
    >>> first_tables(list("abc"), 4)
    [('a', 'b', 'c')]
    """
    if len(names) <= players:
        return [tuple(names)]
    windows, start = [], 0
    while True:
        end = min(start + players, len(names))
        windows.append(tuple(names[end - players : end]))
        if end == len(names):
            return windows
        start = end - 1


def next_table(now: Standing, players: int) -> tuple[str, ...]:
    """The candidates of the next table: of the windows of ``players`` neighbours in the order, and the
    set made of the neediest undecided pairs, the one that serves the undecided adjacent pairs most,
    each weighted by ``1 / (1 + shared tables)`` so the least measured count most (ties: the higher in
    the order). With as many candidates as seats or fewer, every one of them.

    >>> now = standing(list("abcdef"), [], Method())
    >>> next_table(now, 4)
    ('a', 'b', 'c', 'd')
    """
    order = now.order
    if len(order) <= players:
        return order
    open_pairs = [index for index, relation in enumerate(now.relations) if relation is Relation.UNDECIDED]
    open_pairs = open_pairs or list(range(len(order) - 1))
    weight = {index: 1 / (1 + now.pairs[index].tables) for index in open_pairs}

    def served(places: Sequence[int]) -> float:
        chosen = set(places)
        return sum(value for index, value in weight.items() if {index, index + 1} <= chosen)

    options = [tuple(range(start, start + players)) for start in range(len(order) - players + 1)]
    neediest = sorted(open_pairs, key=lambda index: (now.pairs[index].tables, index))
    greedy: list[int] = []
    for index in neediest:
        wanted = [place for place in (index, index + 1) if place not in greedy]
        if len(greedy) + len(wanted) <= players:
            greedy.extend(wanted)
    while len(greedy) < players:
        greedy.append(
            min(
                (place for place in range(len(order)) if place not in greedy),
                key=lambda place: (min(abs(place - other) for other in greedy), place),
            )
        )
    options.append(tuple(sorted(greedy)))
    best = max(options, key=lambda places: (served(places), [-place for place in places]))
    return tuple(order[place] for place in best)


def planned(
    opening: Sequence[str], players: int, tables: Sequence[Table], method: Method
) -> tuple[str, ...] | None:
    """The candidates of the table after ``tables``, or ``None`` once every adjacent pair is decided:
    the opening's windows (:func:`first_tables` of ``opening``, the candidates in the order the seed
    shuffled them) first, then :func:`next_table`. A function of the tables played so far only, so a
    ranking replays exactly from its seed.

    >>> tables = [Table(("a", "b", "c"), (20.0 + i, 10.0, 0.0 + i % 2)) for i in range(5)]
    >>> planned("abc", 4, tables[:0], Method()), planned("abc", 4, tables, Method())
    (('a', 'b', 'c'), None)
    """
    opening_tables = first_tables(opening, players)
    if len(tables) < len(opening_tables):
        return opening_tables[len(tables)]
    now = standing(opening, tables, method)
    return None if now.decided else next_table(now, players)
