"""The crosstable with confidence, as the Annual Computer Poker Competition publishes its results: for
every pair of entrants, the mean points difference per shared match with its 95% interval, and for
neighbours in the ranking the likelihood that the higher one is really the stronger.

A *shared match* of A and B is a match both are seated in, among the matches the leaderboard counts
(:func:`referee.league.ratings.rated_games`: in duplicate mode, those of tables whose every seating is
played); its *difference* is A's points − B's points in it (credited points: what the referee's
autopilot made for a forfeited seat does not count, docs/RULES.md "Forfeits"). The seatings of a table
replay the same deals, so their differences are not independent: as for the leaderboard's points, one
observation is a table's mean difference over its shared matches, the mean weighs every table the same,
and the interval comes from the spread between tables (Student's t, :func:`referee.stats.ci95`).
With one table there is no spread to measure, and no interval.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from referee.league.ratings import RatingMode, each_rated_game
from referee.league.schedule import ScheduledMatch
from referee.league.summary import Summarized
from referee.stats import ci95, mean, t_los

SIGNIFICANT: Final = 0.975
"""The likelihood of superiority at which a difference is significant: the 95% interval excludes 0."""


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """How ``first`` did against ``second`` in their shared matches."""

    first: str
    second: str
    tables: tuple[float, ...]
    """Per table, in schedule order: the mean of ``first``'s points − ``second``'s over its shared matches."""
    matches: int

    @property
    def mean(self) -> float:
        """Mean points difference per shared match, each table weighing the same."""
        return mean(self.tables)

    @property
    def ci95(self) -> float:
        """Half-width of the 95% interval of :attr:`mean`; ∞ with a single table."""
        return ci95(self.tables)

    @property
    def significant(self) -> bool:
        """Whether the 95% interval excludes 0."""
        return math.isfinite(self.ci95) and abs(self.mean) > self.ci95

    @property
    def los(self) -> float | None:
        """Likelihood of superiority: how likely ``first`` is the stronger, P(true difference > 0) under
        Student's t from the tables' spread; ``None`` with a single table.

        >>> HeadToHead("a", "b", (10.0, 14.0, 12.0), 3).los > 0.975, HeadToHead("a", "b", (1.0, -1.0), 2).los
        (True, 0.5)
        """
        return t_los(self.tables)


@dataclass(frozen=True, slots=True)
class Crosstable:
    names: tuple[str, ...]
    """The entrants in leaderboard order."""
    pairs: dict[tuple[str, str], HeadToHead]
    """Every ordered pair of entrants with a shared match."""

    def neighbours(self) -> list[tuple[str, str, HeadToHead | None]]:
        """Each entrant and the next one down the ranking, with their pair (``None``: no shared match)."""
        return [(a, b, self.pairs.get((a, b))) for a, b in itertools.pairwise(self.names)]


def crosstable(
    names: Sequence[str],
    schedule: Sequence[ScheduledMatch],
    stored: Mapping[str, Summarized],
    mode: RatingMode = RatingMode.DUPLICATE,
) -> Crosstable:
    """The crosstable of ``names`` (in leaderboard order) over the matches the leaderboard counts. The
    games come one at a time, a table's after each other, and each table's differences are kept only
    until its mean is taken: what it holds grows by a float per pair and table, not by the matches."""
    means: dict[tuple[str, str], list[float]] = {}
    counts: dict[tuple[str, str], int] = {}
    table: dict[tuple[str, str], list[int]] = {}
    table_id = None

    def close_table() -> None:
        for pair, differences in table.items():
            means.setdefault(pair, []).append(statistics.fmean(differences))
            counts[pair] = counts.get(pair, 0) + len(differences)
        table.clear()

    for game in each_rated_game(schedule, stored, mode):
        for scheduled, match in game:
            if scheduled.table_id != table_id:
                close_table()
                table_id = scheduled.table_id
            totals = match.summary.credited
            for a, first in enumerate(scheduled.entrants):
                for b, second in enumerate(scheduled.entrants):
                    if a != b:
                        table.setdefault((first, second), []).append(totals[a] - totals[b])
    close_table()
    pairs = {
        pair: HeadToHead(*pair, tuple(tables), counts[pair])
        for pair, tables in means.items()
        if pair[0] in names and pair[1] in names
    }
    return Crosstable(tuple(names), pairs)
