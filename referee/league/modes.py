"""A league's modes as plain values, read from its file: how it is rated, when its schedule ends, how a
table is seated and which tables its format plays.

Kept apart from the modules that act on them (``ratings.py`` with TrueSkill, ``adaptive.py``, the
scheduler in ``schedule.py`` and ``designs.py``) so that reading a league file imports none of them.
"""

from __future__ import annotations

import enum
import itertools
import math
from dataclasses import dataclass


class RatingMode(enum.StrEnum):
    """What one TrueSkill update stands for (league key ``rating``)."""

    DUPLICATE = "duplicate"
    """One update per table, once every seating of it is played: entrants ranked by their total points
    across the table's matches. Right whenever a table has several seatings (the default)."""
    MATCH = "match"
    """One update per match, ranked by that match's totals. Fits ``seating: single`` (where it gives the
    same result), or to watch ratings move match by match; with duplicate seatings its σ is too small."""


class Until(enum.StrEnum):
    """When a league's schedule ends (league key ``schedule.until``)."""

    COMPLETE = "complete"
    """Every table of the format is played (the default)."""
    SETTLED = "settled"
    """Batches of tables chosen from the results, until the ranking is settled or ``max_matches``."""


@dataclass(frozen=True, slots=True)
class Settling:
    """The settings of ``until: settled`` (docs/LEAGUE.md, "Until settled")."""

    max_matches: int
    """No batch is chosen that would take the schedule past this many matches."""
    batch_tables: int
    """Tables per batch after the first (the first seats every entrant once)."""
    confidence: float = 0.95
    """An adjacent pair is separated once P(the higher one is better) reaches this."""
    margin: float = 0.0
    """With a margin > 0, a pair is also settled once P(|μ difference| < margin) reaches ``confidence``:
    two bots of equal strength never separate, and without it they would play on to ``max_matches``."""


def first_batch_tables(entrants: int, players: int) -> int:
    """Tables of the first batch: enough to seat every entrant once.

    >>> first_batch_tables(6, 4), first_batch_tables(8, 4), first_batch_tables(3, 2)
    (2, 2, 2)
    """
    return -(-entrants // players)


class Seating(enum.StrEnum):
    """How a table's entrants are seated across its matches (league key ``schedule.seating``)."""

    SINGLE = "single"
    """One match per table, entrants in name order: no duplicate, nothing cancels."""
    CYCLIC = "cyclic"
    """``players`` rotations: cards cancel, neighbours do not (each entrant always follows the same one)."""
    BALANCED = "balanced"
    """The smallest set here that cancels both: 2, 6 and 12 matches at 2, 3 and 4 players."""
    ALL = "all"
    """Every order: 2, 6, 24 matches. Two copies of one deterministic bot then tie exactly."""


def seatings(players: int, mode: Seating) -> tuple[tuple[int, ...], ...]:
    """The seatings of a table as permutations: seat ``s`` holds the table's entrant ``p[s]`` (entrants in
    name order), identity first.

    ``balanced`` is every order at 2 and 3 players. At 4 it is the even permutations (the alternating
    group A4): 2-transitive, so each entrant holds each seat 3 times and every ordered pair of entrants
    sits at every ordered pair of seats once, which makes each one play right after each other one 4
    times. Half of the 24 orders, at the same balance of seats and neighbours.

    >>> seatings(3, Seating.CYCLIC)
    ((0, 1, 2), (1, 2, 0), (2, 0, 1))
    >>> [len(seatings(n, Seating.BALANCED)) for n in (2, 3, 4)], len(seatings(4, Seating.ALL))
    ([2, 6, 12], 24)
    """
    if mode is Seating.SINGLE:
        return (tuple(range(players)),)
    if mode is Seating.CYCLIC:
        return tuple(tuple((seat + r) % players for seat in range(players)) for r in range(players))
    orders = tuple(itertools.permutations(range(players)))
    if mode is Seating.ALL or players < 4:
        return orders
    return tuple(order for order in orders if _is_even(order))


def _is_even(order: tuple[int, ...]) -> bool:
    """Whether a permutation has an even number of inversions."""
    inversions = sum(a > b for a, b in itertools.combinations(order, 2))
    return inversions % 2 == 0


class Format(enum.StrEnum):
    """Which tables a league plays (league key ``schedule.format``)."""

    ROUND_ROBIN = "round-robin"
    """Every combination of ``players`` entrants."""
    SAMPLED = "sampled"
    """``tables_per_entrant`` tables per entrant, every pair of entrants meeting about equally often."""
    GAUNTLET = "gauntlet"
    """Each challenger with ``players - 1`` entrants of the field (the others): every combination, or
    ``tables_per_challenger`` of them."""


@dataclass(frozen=True, slots=True)
class Design:
    """The tables of a schedule: its format and that format's settings."""

    format: Format = Format.ROUND_ROBIN
    tables_per_entrant: int | None = None
    """``sampled``: the tables each entrant sits at."""
    challengers: tuple[str, ...] = ()
    """``gauntlet``: the entrants that each sit at every one of their tables alone against the field."""
    tables_per_challenger: int | None = None
    """``gauntlet``: the tables per challenger; ``None``, every combination of the field."""
    cohorts: tuple[tuple[str, ...], ...] = ()
    """``sampled``: the entrants in groups, in the order they joined the league, as its results database
    remembers them; entrants in no group joined last, together. Every table of a group stays when a later
    group joins (:func:`referee.league.designs.sampled_design`)."""

    def describe(self) -> str:
        """The format as a leaderboard names it.

        >>> Design(Format.SAMPLED, tables_per_entrant=6).describe()
        'sampled, 6 tables per entrant'
        >>> Design(Format.GAUNTLET, challengers=("new", "newer")).describe()
        'gauntlet of new, newer against the field, every table'
        """
        if self.format is Format.SAMPLED:
            return f"sampled, {self.tables_per_entrant} tables per entrant"
        if self.format is Format.GAUNTLET:
            tables = (
                "every table"
                if self.tables_per_challenger is None
                else f"{self.tables_per_challenger} tables per challenger"
            )
            return f"gauntlet of {', '.join(self.challengers)} against the field, {tables}"
        return "round-robin"


def most_tables(entrants: int, players: int) -> int:
    """How many distinct tables one entrant can sit at: every combination of the others.

    >>> most_tables(10, 4)
    84
    """
    return math.comb(entrants - 1, players - 1)
