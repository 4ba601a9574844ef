"""Plays a ranking of many bots (``referee compare A B C …``): its tables one after another, each in
every balanced seating through an :class:`~referee.match.arbiter.Arbiter` (fresh bots per match, the
start retry, void retries), the next table chosen from the tables before it, until every adjacent pair
is decided or ``max_tables`` are played. What a table, a decision or a verdict is lives in
``ranking.py`` and ``ranking_plan.py``.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from referee.compare import MATCH_ID
from referee.compare_play import self_named
from referee.match.arbiter import Arbiter, Sitting
from referee.match.bots import BotSpec, BotSpecError
from referee.match.launcher import Confinement, Launcher, interrupted
from referee.match.outcome import MatchOutcome, NotStarted, VoidStreak
from referee.match.setup import open_launcher
from referee.ranking import Relation, Standing, Table, standing
from referee.ranking_plan import Ranked, RankPlan, Tally


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a ranking stands after a table: what the progress lines print."""

    tables: int
    """Tables counted so far."""
    table: tuple[str, ...]
    """The candidates of the table just played (empty when it was void and left out)."""
    standing: Standing
    decided: tuple[int, ...]
    """Adjacent pairs (by index into ``standing.pairs``) decided by this table and not before."""
    void: int = 0


async def rank(
    plan: RankPlan,
    on_progress: Callable[[Progress], None] | None = None,
    log_dir: Path | None = None,
    confinement: Confinement | None = None,
) -> Ranked:
    """Plays ``plan``'s tables until every adjacent pair is decided or ``max_tables`` are played. A
    table's matches play up to ``plan.concurrency`` at once; the next table is chosen from the tables
    before it only, so any concurrency gives the same tables and the same result.

    Raises :class:`BotSpecError` when a bot cannot be loaded or started, :class:`RefereeInternalError`
    when tables keep being void."""
    async with open_launcher(log_dir, confinement) as launcher:
        plan = await own_names(plan, launcher)
        ranker = _Ranker(plan, launcher, on_progress)
        try:
            return await ranker.run()
        finally:
            await ranker.arbiter.close()


async def own_names(plan: RankPlan, launcher: Launcher) -> RankPlan:
    """``plan`` with every bot named as it names itself, as ``referee compare A B`` names its bots: each
    distinct bot is started once and stopped. Candidates that give the same name keep the names of their
    command lines; a name taken already gets ``#2``, ``#3`` …, the candidates' first."""
    specs = [*plan.candidates, *plan.fillers]
    count = len(plan.candidates)
    arbiter = Arbiter(launcher, plan.rules, plan.time_control, plan.max_faults)
    names = await self_named(specs, count, arbiter)
    named = [replace(spec, name=name) for spec, name in zip(specs, names, strict=True)]
    return replace(plan, candidates=tuple(named[:count]), fillers=tuple(named[count:]))


class _Ranker:
    def __init__(
        self, plan: RankPlan, launcher: Launcher, on_progress: Callable[[Progress], None] | None
    ) -> None:
        self.plan = plan
        self.on_progress = on_progress
        self.slots = asyncio.Semaphore(plan.concurrency)
        self.void_reason = ""
        self.tally = {name: Tally() for name in plan.names}
        self.arbiter = Arbiter(launcher, plan.rules, plan.time_control, plan.max_faults, cut=interrupted)

    async def run(self) -> Ranked:
        plan = self.plan
        tables: list[Table] = []
        void = 0
        streak = VoidStreak("tables", "ranking")
        before = standing(plan.opening(), tables, plan.method)
        number = 0
        while (candidates := plan.next_table(tables)) is not None and number < plan.max_tables:
            table = await self._table(number, candidates)
            number += 1
            streak.add(table is None, self.void_reason)
            if table is None:
                void += 1
            else:
                tables.append(table)
            now = standing(plan.opening(), tables, plan.method)
            known = {
                (pair.upper, pair.lower)
                for pair, relation in zip(before.pairs, before.relations, strict=True)
                if relation is not Relation.UNDECIDED
            }
            decided = tuple(
                index
                for index, (pair, relation) in enumerate(zip(now.pairs, now.relations, strict=True))
                if relation is not Relation.UNDECIDED and (pair.upper, pair.lower) not in known
            )
            if self.on_progress is not None:
                self.on_progress(Progress(len(tables), candidates if table else (), now, decided, void))
            before = now
        return Ranked(plan, tuple(tables), dict(self.tally), void)

    async def _table(self, number: int, candidates: tuple[str, ...]) -> Table | None:
        """Every seating of one table, at once where the concurrency allows; ``None`` if a match stays
        void (the table is left out: its seatings balance only together)."""
        seed = self.plan.deals(number)
        lineups = self.plan.lineups(candidates)
        outcomes = await asyncio.gather(
            *(self._match(lineup, seed) for lineup in lineups),
            return_exceptions=True,  # one match's failure leaves the others to finish, not orphaned
        )
        for failure in outcomes:
            if isinstance(failure, BaseException):
                raise failure
        played = [outcome for outcome in outcomes if isinstance(outcome, MatchOutcome)]
        if len(played) < len(lineups):
            return None
        totals: dict[str, list[int]] = {name: [] for name in candidates}
        for lineup, outcome in zip(lineups, played, strict=True):
            for seat, spec in enumerate(lineup):
                if spec.name in totals:
                    totals[spec.name].append(outcome.record.credited_totals[seat])
                    tally = self.tally[spec.name]
                    self.tally[spec.name] = Tally(
                        tally.faults + sum(fault.seat == seat for fault in outcome.faults),
                        tally.forfeits + (seat in outcome.record.forfeits),
                    )
        return Table(candidates, tuple(statistics.fmean(totals[name]) for name in candidates))

    async def _match(self, specs: list[BotSpec], seed: int) -> MatchOutcome | None:
        async with self.slots:
            result = await self.arbiter.play(Sitting(MATCH_ID, seed, tuple(specs)))
        if isinstance(result, NotStarted):
            raise BotSpecError(result.reason)
        if result.complete:
            return result.outcome
        self.void_reason = result.outcome.void_reason
        return None
