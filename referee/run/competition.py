"""A league's competition: it says which matches to play next and records what each came to; it never
plays one. (gomill's ringmaster split: a competition that plans and records, driven by interchangeable
job managers.)

Every driver is a driver of one :class:`Competition`: it asks for the matches still to play (a batch
at a time for an ``until: settled`` league), plays them where it likes (through a
:class:`~referee.match.arbiter.Arbiter`), and hands each result back: :meth:`Competition.record` for every
attempt (stored at once, one transaction per match), :meth:`Competition.finished` for a match played,
:meth:`Competition.not_started` for one whose bots did not start (left unplayed, never a result). The
competition alone counts progress, start failures, disqualifications and void matches in a row, and
sums the run up as a :class:`RunReport` value. Because what it plans depends only on what is stored, any
driver gives the same results.

It holds the league's seed from construction: the file's own, or the secret one drawn once and kept in
the results database (:meth:`Competition.open`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from referee.league.config import League
from referee.league.location import backup_path
from referee.league.planning import league_settings, plan_of, schedule_of, with_cohorts
from referee.league.schedule import ScheduledMatch
from referee.league.summary import Summarized
from referee.match.arbiter import Sitting
from referee.match.outcome import (
    VOID_RETRIES,
    Attempt,
    Finished,
    MatchOutcome,
    MatchStatus,
    NotStarted,
    VoidStreak,
)
from referee.results.disclosure import table_key
from referee.results.history import replay_new_versions
from referee.results.reading import Standings, joined, known_seed, standings
from referee.results.store import Store
from referee.run.preflight import Broken, PreflightError

if TYPE_CHECKING:
    from referee.league.adaptive import Settlement

START_FAILURES: Final = 3
"""Failed starts in a row after which an entrant is disqualified for the rest of the run (in one
process; the Dask driver counts distinct workers instead). A match whose bot does not start is not played
(nor stored): it goes back to the end of the queue, and the next run plays it if this one does not."""
LOGGER = logging.getLogger(__name__)


@dataclass(slots=True)
class Progress:
    """What the progress display shows; updated by the competition after every match it records."""

    total: int
    done: int = 0
    played: int = 0
    void: int = 0
    started: float = field(default_factory=time.monotonic)
    last: MatchOutcome | None = None
    settled: str = ""
    """An ``until: settled`` league's :meth:`~referee.league.adaptive.Settlement.line`, updated per batch."""
    points: dict[str, list[int]] = field(default_factory=dict)
    """Each entrant's credited totals in the complete matches so far, stored ones included."""

    def count(self, entrants: tuple[str, ...], totals: tuple[int, ...]) -> None:
        for name, total in zip(entrants, totals, strict=True):
            self.points.setdefault(name, []).append(total)

    @property
    def leader(self) -> tuple[str, float] | None:
        """The entrant with the best mean points per match so far (ratings come at the end)."""
        if not self.points:
            return None
        means = {name: sum(points) / len(points) for name, points in self.points.items()}
        name = max(sorted(means), key=means.__getitem__)
        return name, means[name]


@dataclass(frozen=True, slots=True)
class RunReport:
    """What a run came to, besides the stored matches: its progress at the end, its standings, the
    entrants that failed the preflight or were disqualified, the matches left unplayed, and what the
    drivers saw of the bots."""

    progress: Progress
    scheduled: int
    standings: Standings
    broken: tuple[Broken, ...] = ()
    disqualified: tuple[tuple[str, str], ...] = ()
    skipped: int = 0
    processes_started: int = 0
    refusals: tuple[str, ...] = ()


PRUNE_EVERY: Final = 32
"""Looks for the missing matches (:meth:`Competition.pending`) between two prunings of the kept list."""


class Competition:
    """Plans and records one league's run on its results database; see the module's doc."""

    def __init__(
        self,
        league: League,
        seed: int,
        store: Store,
        skip_broken: bool = False,
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.league = league
        self.seed: Final = seed
        """The league's seed: the file's, or the secret one its database keeps; fixed for the
        competition's life (a league file that changes it is refused by :meth:`replan`)."""
        self.store = store
        self.skip_broken = skip_broken
        """Go on without the entrants that fail the preflight (disqualified) instead of stopping."""
        self.say = say
        """Where the competition tells the organiser what its opening did (``--fresh``, a new version)."""
        self.known: dict[str, Summarized] | None = None
        """An ``until: settled`` league's stored results as read so far (see :meth:`_plan`)."""
        self.settlement: Settlement | None = None
        """An ``until: settled`` league's standing after its last complete batch."""
        self._cursor: tuple[object, object, list[int], int] = (None, None, [], 0)
        """(the schedule, the complete ids' set, the positions of that schedule not in that set when
        last pruned, the looks since): see :meth:`pending`."""
        self._tables: tuple[object, dict[int, tuple[str, ...]]] = (None, {})
        """(the schedule, its match ids by table): see :meth:`table_of`."""
        self.schedule = self._plan()
        self.disqualified: dict[str, str] = {}
        self.start_failures: dict[str, int] = {}
        """Failed starts in a row of each entrant in this run."""
        self.skipped = 0
        self.broken: list[Broken] = []
        self.voids = VoidStreak()
        self.progress = Progress(total=len(self.schedule))

    @classmethod
    def open(
        cls,
        league: League,
        fresh: bool = False,
        say: Callable[[str], None] = lambda line: None,
        skip_broken: bool = False,
    ) -> Competition:
        """The competition of ``league`` on its results database, held by this process alone until
        :meth:`close`, opened whole: a league file without ``seed:`` gets a secret random one, drawn once
        and kept in the database (``fresh`` draws anew); the entrants and their cohorts are stored; the
        matches of an entrant with a new version are played again (``say`` tells which); then the
        schedule is planned, once, from what is left.

        Another live run of the league raises :class:`~referee.results.lock.LeagueBusyError`; a damaged or
        unwritable file :class:`~referee.results.errors.StorageError`; the database of another league
        file :class:`~referee.results.store.OtherLeagueError`, with ``fresh`` too: ``fresh`` forgets only
        this league's own results, and keeps a copy of them beside the database first (``say`` tells
        where)."""
        store = Store(league.database, exclusive=True)
        try:
            store.claim(league.path, league.name, league_settings(league, known_seed(league, store)))
            if fresh:
                backup = backup_path(league.database, time.strftime("%Y%m%d-%H%M%S"))
                if forgotten := store.forget(backup):
                    say(
                        f"--fresh: the {forgotten} match(es) stored in {league.database} are forgotten; "
                        f"a copy of them is kept in {backup}"
                    )
            seed = league.seed if league.seed is not None else store.secret_seed(renew=fresh)
            store.bind(league.name, league_settings(league, seed), league.path)
            return cls(_opened(store, league, seed, say), seed, store, skip_broken, say)
        except BaseException:
            store.close()
            raise

    def replan(self, league: League) -> list[ScheduledMatch]:
        """The league file changed while the competition is open (an entrant joined or left, say): the
        same seed and results, the entrants stored again (a newcomer joins as a cohort of its own), the
        matches of a new version played again, the schedule planned again; returns the matches still to
        play. The run's disqualifications and failed starts are forgotten: an entrant may be a new
        version now, and the driver runs the preflight again (``referee serve`` does, per change of the
        file). Settings that would invalidate the stored results (rules, time control, fault limit,
        another seed) raise ``ValueError``."""
        if known_seed(league, self.store) != self.seed:
            raise ValueError(f"{league.path}: its seed changed; the stored results would not be its own")
        if league_settings(league, self.seed) != league_settings(self.league, self.seed):
            raise ValueError(f"{league.path}: its settings changed; the stored results would not be its own")
        self.league = _opened(self.store, league, self.seed, self.say)
        self.disqualified, self.start_failures, self.broken = {}, {}, []
        self.known = None
        self.schedule = self._plan()
        return self.begin()

    def grow(self, league: League) -> None:
        """Remote entrants joined the league while it plays (``referee serve``'s entry,
        :func:`referee.league.changes.remote_newcomers`): entered in the database as a cohort of their
        own, the schedule planned again with their tables (the others' keep their ids, seeds and
        results), and nothing else of the run forgotten: the other entrants' disqualifications, failed
        starts and preflight stand, since none of them changed."""
        if known_seed(league, self.store) != self.seed:
            raise ValueError(f"{league.path}: its seed changed; the stored results would not be its own")
        self.league = _opened(self.store, league, self.seed, self.say)
        self.schedule = self._plan()
        self.progress.total = len(self.schedule)

    def reinstate(self, name: str) -> None:
        """``name`` may play again (a remote entrant that sat out for want of a token has one now)."""
        if self.disqualified.pop(name, None) is not None:
            self.store.clear_disqualified(name)
        self.start_failures.pop(name, None)
        self.broken = [item for item in self.broken if item.name != name]

    def close(self) -> None:
        self.store.close()

    # -- planning ------------------------------------------------------------------------------------

    def begin(self) -> list[ScheduledMatch]:
        """The matches still to play now, the progress counting the matches stored before."""
        missing = self.missing()
        progress = self.progress = Progress(total=len(self.schedule), done=len(self.schedule) - len(missing))
        progress.settled = self.settlement.line() if self.settlement is not None else ""
        stored = self.store.summaries()  # no deal decoded: the points are in each match's summary
        for planned in self.schedule:
            earlier = stored.get(planned.match_id)
            if earlier is not None and earlier.status is MatchStatus.COMPLETE:
                progress.count(planned.entrants, earlier.credited)
        return missing

    def missing(self) -> list[ScheduledMatch]:
        return list(self.pending())

    def pending(self) -> Iterator[ScheduledMatch]:
        """The missing matches in schedule order, lazily: a served league takes the first it can start
        before each match, and a scan of the whole schedule made each start cost more the more was
        stored. The schedule's positions not known complete are kept while the schedule and the store's
        complete ids (one set an exclusive store keeps, replaced when matches are deleted:
        :meth:`Store.complete_ids`) stay the same objects (a complete match is never replaced), and
        pruned of the matches stored since every :data:`PRUNE_EVERY` looks: a look passes over the
        matches stored since the last pruning and the missing ones that cannot start (an absent
        entrant's), never over every stored one."""
        done = self.store.complete_ids()
        schedule = self.schedule
        kept_schedule, kept_done, missing, looks = self._cursor
        if kept_schedule is not schedule or kept_done is not done:
            missing, looks = [i for i, m in enumerate(schedule) if m.match_id not in done], 0
        elif looks >= PRUNE_EVERY:
            missing, looks = [i for i in missing if schedule[i].match_id not in done], 0
        self._cursor = (schedule, done, missing, looks + 1)
        return (schedule[i] for i in missing if schedule[i].match_id not in done)

    def table_of(self, scheduled: ScheduledMatch) -> tuple[str, ...]:
        """The ids of the matches of ``scheduled``'s table (which deal its deals), itself included;
        grouped once per schedule."""
        schedule, tables = self._tables
        if schedule is not self.schedule:
            grouped: dict[int, list[str]] = {}
            for match in self.schedule:
                grouped.setdefault(table_key(match), []).append(match.match_id)
            tables = {key: tuple(ids) for key, ids in grouped.items()}
            self._tables = (self.schedule, tables)
        return tables.get(table_key(scheduled), (scheduled.match_id,))

    def next_batch(self) -> list[ScheduledMatch]:
        """The matches of the next batch of an ``until: settled`` league, chosen now that the stored
        results complete the last one; none once the ranking is settled, at ``max_matches``, or while
        a match of the last batch is missing (void or unplayed: the next run plays it first). Every
        driver calls it between batches, so what is chosen never depends on how they play."""
        if self.league.settling is None:
            return []
        before = len(self.schedule)
        self.schedule = self._plan()
        self.progress.total = len(self.schedule)
        self.progress.settled = self.settlement.line() if self.settlement is not None else ""
        return self.missing() if len(self.schedule) > before else []

    def _plan(self) -> tuple[ScheduledMatch, ...]:
        """The schedule now. An ``until: settled`` league's is planned from the stored results: all of
        them read once, then only the matches of the schedule not yet known complete (the batch just
        played), since a complete match is never replaced during a run."""
        if self.league.settling is None:
            return schedule_of(self.league, self.seed)
        if self.known is None:
            self.known = dict(self.store.summaries())
        else:
            self.known.update(
                self.store.matches([m.match_id for m in self.schedule if not self._complete(m)])
            )
        planned = plan_of(self.league, self.seed, self.known)
        self.settlement = planned.settlement
        return planned.schedule

    def _complete(self, scheduled: ScheduledMatch) -> bool:
        assert self.known is not None
        stored = self.known.get(scheduled.match_id)
        return stored is not None and stored.summary.status is MatchStatus.COMPLETE

    def playable(self, scheduled: ScheduledMatch) -> bool:
        """Whether no entrant of the match is disqualified."""
        return not any(name in self.disqualified for name in scheduled.entrants)

    def sitting(self, scheduled: ScheduledMatch) -> Sitting:
        """The match as a table plays it: every entrant's bot in its seat."""
        bots = tuple(self.league.entrant(name).spec for name in scheduled.entrants)
        return Sitting(scheduled.match_id, scheduled.seed, bots)

    # -- recording -------------------------------------------------------------------------------------

    def preflight_failed(self, broken: list[Broken]) -> None:
        """The entrants that failed the preflight (or their build): with ``skip_broken`` they are
        disqualified for the run, else :class:`PreflightError` stops it before anything is stored."""
        self.broken = broken
        if broken and not self.skip_broken:
            raise PreflightError(broken)  # before anything is stored
        self.disqualified.update((item.name, item.reason) for item in broken)
        self.store.set_disqualified(self.disqualified)

    def record(self, scheduled: ScheduledMatch, attempt: Attempt, number: int) -> None:
        """Stores one attempt (``number`` from 0) of a match at once; raises
        :class:`~referee.match.faults.RefereeInternalError` once voids keep coming, whichever driver
        played them."""
        outcome = attempt.outcome
        self.store.save(scheduled, outcome, attempt.started)
        void = outcome.status is not MatchStatus.COMPLETE
        if void:
            LOGGER.error(
                "match %s is void (attempt %d of %d): %s",
                scheduled.match_id,
                number + 1,
                VOID_RETRIES + 1,
                outcome.void_reason,
            )
        self.voids.add(void, outcome.void_reason)

    def finished(self, scheduled: ScheduledMatch, result: Finished) -> Progress:
        """Counts a match played (its attempts recorded already); its bots started, so an earlier
        disqualification of theirs is over."""
        self.started(scheduled.entrants)
        self._count(scheduled, result.outcome)
        return self.progress

    def _count(self, scheduled: ScheduledMatch, outcome: MatchOutcome) -> None:
        progress = self.progress
        progress.played += 1
        progress.last = outcome
        if outcome.status is MatchStatus.COMPLETE:
            progress.done += 1
            progress.count(scheduled.entrants, outcome.record.credited_totals)
        else:
            progress.void += 1

    def started(self, names: tuple[str, ...]) -> None:
        """These entrants' bots started: their failures in a row are over, and so is a disqualification
        by an earlier run."""
        for name in names:
            self.start_failures.pop(name, None)
            if name not in self.disqualified:
                self.store.clear_disqualified(name)

    def not_started(self, scheduled: ScheduledMatch, result: NotStarted, tries: int) -> bool:
        """Counts a match whose bots did not all start, on its ``tries``-th try: the entrant's failures
        in a row (:data:`START_FAILURES` disqualify it; a lasting failure at once). Returns whether to
        try the match again later in the run; if not, it is left unplayed, never a result. A match with
        void attempts before the failed start counts as played void (they are stored)."""
        self.started(result.started)
        for name in result.failed:
            if result.lasting:
                self.disqualify(name, result.reason)
            else:
                self.start_failed(name, result.reason)
        if result.attempts:
            self._count(scheduled, result.attempts[-1].outcome)
            return False
        if self.playable(scheduled) and tries < START_FAILURES:
            return True
        self.skipped += 1
        return False

    def start_failed(self, name: str, reason: str) -> None:
        """Counts a failed start; the entrant is disqualified for the rest of the run after
        :data:`START_FAILURES` in a row."""
        count = self.start_failures[name] = self.start_failures.get(name, 0) + 1
        LOGGER.warning("%s did not start (%d in a row): %s", name, count, reason)
        if count >= START_FAILURES:
            self.disqualify(name, f"did not start {count} times in a row: {reason}")

    def disqualify(self, name: str, reason: str) -> None:
        """Out for the rest of the run: its matches are left unplayed (the next run tries them)."""
        if name not in self.disqualified:
            self.disqualified[name] = reason
            self.store.set_disqualified(self.disqualified)

    def unplayed(self) -> None:
        """A match left unplayed because an entrant of it is disqualified."""
        self.skipped += 1

    def rated(self) -> Standings:
        """The standings now, read, planned and rated once, the ratings stored with the results: how every
        driver's run ends (``referee serve``'s too), so that the stored ratings describe the results
        whichever command played them. A fixed schedule is the competition's own; an ``until: settled``
        league's is planned from the results read here, with its settlement."""
        fixed = self.schedule if self.league.settling is None else None
        read = standings(self.league, self.seed, self.store.summaries(), fixed)
        self.store.write_ratings(list(read.board.history))
        return read

    def report(self, processes_started: int, refusals: tuple[str, ...], standings: Standings) -> RunReport:
        """The run summed up, once its drivers are done (each disqualification is stored as it comes)."""
        return RunReport(
            self.progress,
            len(self.schedule),
            standings,
            tuple(self.broken),
            tuple(self.disqualified.items()),
            self.skipped,
            processes_started,
            refusals,
        )


def _opened(store: Store, league: League, seed: int, say: Callable[[str], None]) -> League:
    """The league entered in its database, and the stored matches of an entrant with a new version
    deleted (to be played again), entered again if there were any: what the schedule is planned from."""
    entered = _enter(store, league)
    if replay_new_versions(store, entered, lambda stored: standings(entered, seed, stored).board, say):
        entered = _enter(store, league)  # the cohorts as the matches left say
    return entered


def _enter(store: Store, league: League) -> League:
    """Stores the league's entrants and the cohorts in which they joined; returns the league with them."""
    store.set_entrants(
        [
            (e.name, "module" if e.in_process else "command", e.spec.module or " ".join(e.spec.command))
            for e in league.entrants
        ]
    )
    cohorts = joined(store, league)
    store.set_cohorts(cohorts)
    return with_cohorts(league, cohorts)
