"""TrueSkill ratings and the leaderboard, computed from stored matches in schedule order.

Ratings are always recomputed from the stored results, in schedule order (not completion order), so they
are the same whatever the concurrency, however often a run was interrupted, and whichever driver
played the matches.

What counts as one rated game is the :class:`RatingMode`. The seatings of a table replay the same deals,
so their results are strongly correlated: rated one by one, as independent games, they would shrink σ
far below what the evidence supports and let the seat of the cards weigh in every update. In duplicate
mode (the default) a table's whole set of seatings is one game, as in duplicate bridge. The points
statistics are per table in both modes, for the same reason.

Points are always credited points (:attr:`pyramid_sdk.record.MatchRecord.credited_totals`): what the
referee's autopilot made for a forfeited seat is not its entrant's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

import trueskill

from referee.league.modes import RatingMode as RatingMode  # noqa: PLC0414 (re-exported, defined here before)
from referee.league.rating_history import Entry, RatingHistory
from referee.league.schedule import ScheduledMatch, tables
from referee.league.summary import Summarized
from referee.match.outcome import MatchStatus
from referee.stats import ci95, group_means, mean

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
    """Matches counted (rated ones: in duplicate mode, those of complete tables)."""
    wins: int = 0
    """Matches finished first (a shared first place counts)."""
    table_points: dict[str, list[int]] = field(default_factory=dict)
    """Its credited totals per table (by table id), in schedule order."""
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
    def tables(self) -> int:
        return len(self.table_points)

    @property
    def per_table(self) -> list[float]:
        """Mean points per match at each of its tables: the independent observations. The matches of a
        table replay the same deals, so they are not independent of one another."""
        return list(group_means(self.table_points.values()))

    @property
    def mean_points(self) -> float:
        """Mean points per match, each table weighing the same."""
        return mean(self.per_table)

    @property
    def points_ci95(self) -> float:
        """Half-width of the 95% interval of :attr:`mean_points`, from the spread between tables."""
        return ci95(self.per_table)

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
            "tables": self.tables,
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
    history: Sequence[Entry]
    """(schedule position, rated game, entrant, μ, σ) after each rated game: the game is a match id, or in
    duplicate mode a table id, at the position of the table's last match (a tuple, or the fold's
    :class:`~referee.league.rating_history.RatingHistory` as it was when the board was made)."""
    mode: RatingMode = RatingMode.DUPLICATE


Game = list[tuple[ScheduledMatch, Summarized]]


def rated_games(
    schedule: Sequence[ScheduledMatch], stored: Mapping[str, Summarized], mode: RatingMode
) -> list[Game]:
    """The complete games of ``schedule`` in schedule order: single complete matches, or whole tables."""
    return list(each_rated_game(schedule, stored, mode))


def each_rated_game(
    schedule: Sequence[ScheduledMatch], stored: Mapping[str, Summarized], mode: RatingMode
) -> Iterator[Game]:
    """:func:`rated_games` one at a time, the games of a table after each other: a reader that goes
    through every game once (the crosstable) holds one table's matches, not every stored match."""
    for table in tables(schedule):
        played = [(s, stored[s.match_id]) for s in table if s.match_id in stored]
        complete = [(s, m) for s, m in played if m.summary.status is MatchStatus.COMPLETE]
        if mode is RatingMode.MATCH:
            yield from ([pair] for pair in complete)
        elif len(complete) == len(table):
            yield complete


def game_result(game: Game) -> dict[str, tuple[int, int]]:
    """Per entrant: (matches forfeited, credited points) over the game's matches."""
    result: dict[str, tuple[int, int]] = {}
    for scheduled, match in game:
        summary = match.summary
        for seat, name in enumerate(scheduled.entrants):
            forfeits, points = result.get(name, (0, 0))
            result[name] = (forfeits + (seat in summary.forfeits), points + summary.credited[seat])
    return result


def game_ranks(result: dict[str, tuple[int, int]]) -> dict[str, int]:
    """1 = best. More points rank higher, equal totals share a place, and (as in a match) an entrant that
    forfeited ranks below every one that did not, fewer forfeits first.

    >>> game_ranks({"a": (0, 1200), "b": (0, 1310), "c": (1, 1500), "d": (0, 1200)})
    {'a': 2, 'b': 1, 'c': 4, 'd': 2}
    """
    keys = {name: (forfeits, -points) for name, (forfeits, points) in result.items()}
    return {name: 1 + sum(other < key for other in keys.values()) for name, key in keys.items()}


def even_ties(
    names: Sequence[str],
    ranks: dict[str, int],
    before: dict[str, trueskill.Rating],
    after: dict[str, trueskill.Rating],
) -> dict[str, trueskill.Rating]:
    """``after``, where entrants that shared a place from equal ratings get equal ratings.

    The exact update is symmetric in them, but trueskill passes its messages along the ranking for at
    most 10 sweeps, so the one listed first ends a little lower (29.0492 against 29.0496 after a
    four-player table): two copies of one bot that tie at every table would still be ranked apart. Such
    a group gets the mean of its members' updates.
    """
    result = dict(after)
    groups: dict[tuple[int, float, float], list[str]] = {}
    for name in names:
        groups.setdefault((ranks[name], before[name].mu, before[name].sigma), []).append(name)
    for group in groups.values():
        if len(group) > 1:
            mu = statistics.fmean(after[name].mu for name in group)
            sigma = statistics.fmean(after[name].sigma for name in group)
            for name in group:
                result[name] = ENVIRONMENT.create_rating(mu, sigma)
    return result


def rate_game(ratings: dict[str, trueskill.Rating], game: Game) -> dict[str, trueskill.Rating]:
    """``ratings`` after one rated game: the one update :func:`rate` makes per game, which
    ``until: settled`` (``referee.league.adaptive``) applies batch by batch to reach the same ratings."""
    names = game[0][0].entrants
    ranks = game_ranks(game_result(game))
    groups = ENVIRONMENT.rate([(ratings[name],) for name in names], ranks=[ranks[n] for n in names])
    rated = {name: group[0] for name, group in zip(names, groups, strict=True)}
    return {**ratings, **even_ties(names, ranks, ratings, rated)}


def rate(
    entrants: Iterable[str],
    schedule: Sequence[ScheduledMatch],
    stored: Mapping[str, Summarized],
    mode: RatingMode = RatingMode.DUPLICATE,
) -> Leaderboard:
    """Standings of ``entrants`` from the complete stored games of ``schedule``, in schedule order."""
    return Fold(tuple(entrants), tuple(schedule), mode).board(stored)


@dataclass(slots=True)
class _State:
    """Ratings and counts after some rated games, and the history of them."""

    ratings: dict[str, trueskill.Rating]
    standings: dict[str, Standing]
    history: RatingHistory

    def copy(self) -> _State:
        """A state to fold further without changing this one: each standing's lists of points are those
        of tables it holds already, which no later game adds to, so they are shared, not copied."""
        standings = {
            name: replace(standing, table_points=dict(standing.table_points))
            for name, standing in self.standings.items()
        }
        return _State(dict(self.ratings), standings, self.history.fork())

    def add(self, game: Game, mode: RatingMode) -> None:
        last = game[-1][0]
        self.ratings = rate_game(self.ratings, game)
        label = last.table_id if mode is RatingMode.DUPLICATE else last.match_id
        for name in game[0][0].entrants:
            rating = self.ratings[name]
            self.history.append((last.position, label, name, rating.mu, rating.sigma))
        for scheduled, match in game:
            _count(self.standings, scheduled, match)


class Fold:
    """The leaderboard of a schedule, kept as its stored results grow: what a long-running reader
    (``referee serve``'s pages) holds, so that the cost of a read after a new match does not grow with
    the matches stored before it.

    Ratings are folded in schedule order, so the state after the *complete prefix* (the tables, from the
    schedule's first, whose every match is stored) is final: a match stored later cannot change it. It
    is kept, and each :meth:`board` folds it forward over the tables completed since, in order; the
    tables beyond the first one not yet complete (completed out of order, or in duplicate mode... none
    rated until whole) are rated on a copy each time, until the gap before them fills. A stored match
    of the prefix that changes (a void match replayed, an entrant's matches deleted for a new version)
    makes the caller :meth:`restart` it."""

    def __init__(
        self, entrants: tuple[str, ...], schedule: tuple[ScheduledMatch, ...], mode: RatingMode
    ) -> None:
        self.entrants = entrants
        self.schedule = schedule
        self.mode = mode
        self._tables = list(tables(schedule))
        self._table_of = {s.match_id: number for number, table in enumerate(self._tables) for s in table}
        self.restart()

    def restart(self) -> None:
        """Forgets what was folded: the next :meth:`board` folds from the schedule's first table."""
        self.done = 0
        """Tables of the complete prefix folded into the kept state."""
        self._started: set[int] = set()
        """Tables beyond the prefix with a stored match, by number."""
        self._rescan = True
        """Whether the next :meth:`board` looks at every stored match, whatever it is told was added."""
        self._state = _State(
            {name: ENVIRONMENT.create_rating() for name in self.entrants},
            {name: Standing(name) for name in self.entrants},
            RatingHistory(),
        )

    def folded(self, match_id: str) -> bool:
        """Whether ``match_id`` is of the folded prefix: a change to it needs a :meth:`restart`. (Asked of
        the tables, not of a set of the prefix's ids, which would grow with every match stored.)"""
        return self._table_of.get(match_id, self.done) < self.done

    def board(self, stored: Mapping[str, Summarized], added: Iterable[str] | None = None) -> Leaderboard:
        """The leaderboard of ``stored``, which holds every match of the prefix folded so far. ``added``:
        the ids stored since the last call (then only their tables are looked at), or ``None`` to look at
        every stored match."""
        self._started.update(
            number
            for match_id in (stored if added is None or self._rescan else added)
            if (number := self._table_of.get(match_id)) is not None
        )
        self._rescan = False
        while self.done < len(self._tables) and all(s.match_id in stored for s in self._tables[self.done]):
            table = self._tables[self.done]
            for game in rated_games(table, stored, self.mode):
                self._state.add(game, self.mode)
            self._started.discard(self.done)
            self.done += 1
        state = self._state
        beyond = [s for number in sorted(self._started) for s in self._tables[number]]
        if tail := rated_games(beyond, stored, self.mode):
            state = state.copy()
            for game in tail:
                state.add(game, self.mode)
        standings = {
            name: replace(standing, table_points=dict(standing.table_points))
            for name, standing in state.standings.items()
        }
        for name, rating in state.ratings.items():
            standings[name].mu, standings[name].sigma = rating.mu, rating.sigma
        ordered = sorted(standings.values(), key=lambda s: (-s.conservative, s.entrant))
        for place, standing in enumerate(ordered, start=1):
            standing.rank = place
        return Leaderboard(tuple(ordered), state.history.snapshot(), self.mode)


def _count(standings: dict[str, Standing], scheduled: ScheduledMatch, match: Summarized) -> None:
    """Adds one counted match to its entrants' statistics."""
    summary = match.summary
    for seat, name in enumerate(scheduled.entrants):
        standing = standings[name]
        standing.matches += 1
        standing.wins += summary.ranks[seat] == 1
        standing.table_points.setdefault(scheduled.table_id, []).append(summary.credited[seat])
        standing.forfeits += seat in summary.forfeits
        standing.declarations += summary.declarations[seat]
        standing.exact += summary.exact[seat]
    for seat in summary.fault_seats:
        standings[scheduled.entrants[seat]].faults += 1
