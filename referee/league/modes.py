"""A league's modes as plain values, read from its file: how it is rated and when its schedule ends.

Kept apart from the modules that act on them (``ratings.py`` with TrueSkill, ``adaptive.py``) so that
reading a league file imports neither.
"""

from __future__ import annotations

import enum
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
