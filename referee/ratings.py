"""TrueSkill ratings and the leaderboard, computed from stored matches in schedule order.

Ratings are always recomputed from the stored results, one free-for-all update per complete match, in
schedule order (not completion order), so they are the same whatever the concurrency, however often a
run was interrupted, and whichever executor played the matches.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

import trueskill

from referee.match_runner import MatchStatus
from referee.schedule import ScheduledMatch
from referee.store import StoredMatch

ENVIRONMENT: Final = trueskill.TrueSkill(
    mu=25.0, sigma=25.0 / 3, beta=25.0 / 6, tau=25.0 / 300, draw_probability=0.02
)
"""The explicit environment: no global ``trueskill.setup``. Draws (equal totals) are rare in Pyramid."""


@dataclass(slots=True)
class Standing:
    """One entrant's line of the leaderboard."""

    entrant: str
    mu: float = ENVIRONMENT.mu
    sigma: float = ENVIRONMENT.sigma
    matches: int = 0
    wins: int = 0
    """Matches finished first (a shared first place counts)."""
    points: list[int] = field(default_factory=list)
    declarations: int = 0
    exact: int = 0
    faults: int = 0
    forfeits: int = 0
    rank: int = 0

    @property
    def conservative(self) -> float:
        """μ − 3σ: the sort key, a rating the entrant very probably deserves at least."""
        return self.mu - 3 * self.sigma

    @property
    def mean_points(self) -> float:
        return statistics.fmean(self.points) if self.points else 0.0

    @property
    def points_ci95(self) -> float:
        """Half-width of the 95% interval of the mean points per match."""
        if len(self.points) < 2:
            return math.inf if self.points else 0.0
        return 1.96 * statistics.stdev(self.points) / math.sqrt(len(self.points))

    @property
    def exact_rate(self) -> float:
        """Share of its declarations that it hit exactly."""
        return self.exact / self.declarations if self.declarations else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "entrant": self.entrant,
            "mu": round(self.mu, 3),
            "sigma": round(self.sigma, 3),
            "conservative": round(self.conservative, 3),
            "matches": self.matches,
            "wins": self.wins,
            "mean_points": round(self.mean_points, 2),
            "points_ci95": round(self.points_ci95, 2) if math.isfinite(self.points_ci95) else None,
            "exact_rate": round(self.exact_rate, 4),
            "faults": self.faults,
            "forfeits": self.forfeits,
        }


@dataclass(frozen=True, slots=True)
class Leaderboard:
    standings: tuple[Standing, ...]
    history: tuple[tuple[int, str, str, float, float], ...]
    """(schedule position, match id, entrant, μ, σ) after each rated match."""


def rate(
    entrants: Iterable[str], schedule: Sequence[ScheduledMatch], stored: dict[str, StoredMatch]
) -> Leaderboard:
    """Standings of ``entrants`` from the complete stored matches of ``schedule``, in schedule order."""
    standings = {name: Standing(name) for name in entrants}
    ratings = {name: ENVIRONMENT.create_rating() for name in standings}
    history: list[tuple[int, str, str, float, float]] = []
    for scheduled in schedule:
        match = stored.get(scheduled.match_id)
        if match is None or match.status is not MatchStatus.COMPLETE:
            continue
        record = match.record
        names = scheduled.entrants
        groups = ENVIRONMENT.rate([(ratings[name],) for name in names], ranks=list(record.ranks))
        for seat, name in enumerate(names):
            ratings[name] = groups[seat][0]
            standing = standings[name]
            standing.matches += 1
            standing.wins += record.ranks[seat] == 1
            standing.points.append(record.totals[seat])
            standing.forfeits += seat in record.forfeits
            history.append(
                (scheduled.position, scheduled.match_id, name, ratings[name].mu, ratings[name].sigma)
            )
        for deal in record.deals:
            standing = standings[names[deal.declarer]]
            standing.declarations += 1
            standing.exact += deal.taken == deal.declaration.tricks
        for fault in match.faults:
            standings[names[fault.seat]].faults += 1
    for name, rating in ratings.items():
        standings[name].mu, standings[name].sigma = rating.mu, rating.sigma
    ordered = sorted(standings.values(), key=lambda s: (-s.conservative, s.entrant))
    for place, standing in enumerate(ordered, start=1):
        standing.rank = place
    return Leaderboard(tuple(ordered), tuple(history))
