"""A league's stored results followed as they grow, by a reader that lives as long as the league is
played (``referee serve``'s reader processes): after a new match it reads that match's summary and
folds the ratings forward (:class:`referee.league.ratings.Fold`), so that a read costs the same on the
league's ten-thousandth match as on its first.

Reading every summary and rating every table again, as a one-off command does, cost 170 ms at 2,000
stored matches against 20 ms at 100, per change of the results; here a change costs the matches it
brought. What is read again whole, once: everything after a deletion of stored matches (a new version
of an entrant, which the store counts in ``meta``), and the ratings after a change to a match of the
folded prefix (a void match replayed). An ``until: settled`` league's schedule is chosen from all its
stored results, so its standings are computed afresh at each read, as a command does (such a league
stops once settled, so it stays small). What is kept of each stored match is its figures, packed against
the schedule (:class:`referee.results.packed.PackedSummaries`), so that a reader's memory grows by about
130 bytes a stored match, not by a summary's 2.2 KB.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from referee.league.config import League
from referee.league.planning import schedule_of
from referee.league.ratings import Fold
from referee.league.schedule import ScheduledMatch
from referee.match.outcome import MatchStatus
from referee.results.packed import PackedSummaries
from referee.results.reading import Standings, standings
from referee.results.store import Since, Store


@dataclass(eq=False)
class Follower:
    """The stored results of the league whose database is ``database``, as last read."""

    database: Path
    stored: PackedSummaries = field(default_factory=PackedSummaries)
    reads: int = 0
    """Whole reads of the stored results (the first, and after each deletion): for the tests."""
    _last: int = -1
    _deletions: int = -1
    _voids: set[str] = field(default_factory=set)
    _schedule_key: tuple[object, ...] | None = None
    _schedule: tuple[ScheduledMatch, ...] = ()
    _fold: Fold | None = None
    _store: Store | None = None

    def opened(self) -> Store:
        """The database, opened (and checked whole) on first use and kept open: SQLite's check reads
        every page, so a reader that opened the file for each read would pay for every stored match."""
        if self._store is None:
            self._store = Store(self.database, write=False)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def read(self, league: League, seed: int) -> Standings:
        """The standings of what is stored now, under ``seed``. A failure to read closes the database:
        the next read opens and checks it again."""
        try:
            store = self.opened()
            planned = None if league.settling is not None else self._planned(league, seed)
            schedule = () if planned is None else planned[0]
            if self.stored.schedule is not schedule:
                self.stored = self.stored.repacked(schedule)
            since = store.summaries_since(self._last, sorted(self._voids))
            if since.deletions != self._deletions or self._last < 0:
                since = self._restart(store)
            added = self._merge(since)
            if len(self.stored) != since.count:  # a match gone unseen: read it all again
                added = self._merge(self._restart(store))
        except BaseException:
            self.close()
            raise
        snapshot = self.stored.copy()
        if planned is None:
            return standings(league, seed, snapshot)
        schedule, fold = planned
        return standings(league, seed, snapshot, fixed=schedule, fold=fold, added=added)

    def _restart(self, store: Store) -> Since:
        self.reads += 1
        self.stored.clear()
        self._voids.clear()
        if self._fold is not None:
            self._fold.restart()
        return store.summaries_since(0, ())

    def _merge(self, since: Since) -> list[str]:
        """Takes what ``since`` read in; returns the ids of the matches new or changed."""
        self._last, self._deletions = since.last, since.deletions
        added = []
        for match_id, summary in since.summaries.items():
            before = self.stored.get(match_id)
            if before == summary:
                continue  # a void match read again, still the same
            if before is not None and self._fold is not None and self._fold.folded(match_id):
                self._fold.restart()  # a match of the folded prefix changed
            self.stored[match_id] = summary
            if summary.status is MatchStatus.VOID:
                self._voids.add(match_id)
            else:
                self._voids.discard(match_id)
            added.append(match_id)
        return added

    def _planned(self, league: League, seed: int) -> tuple[tuple[ScheduledMatch, ...], Fold]:
        """The league's fixed schedule and the fold of its ratings, made again only when the league's
        schedule or rating mode changes (an entrant added, a cohort joined)."""
        names = tuple(entrant.name for entrant in league.entrants)
        key = (seed, names, league.players, league.rounds, league.seating, league.design, league.rating)
        if key != self._schedule_key or self._fold is None:
            self._schedule_key = key
            self._schedule = schedule_of(league, seed)
            self._fold = Fold(names, self._schedule, league.rating)
        return self._schedule, self._fold
