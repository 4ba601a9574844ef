"""Plays a comparison (``referee compare A B``): its pairs in order, every match through a
:class:`~referee.match.arbiter.Arbiter` (fresh bots, the start retry, void retries, stopping), until the
sequential test decides or every round is played. What a pair, a verdict or an estimate is lives in
``compare.py``.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from referee.compare import (
    MATCH_ID,
    SPRT_MIN_PAIRS,
    Comparison,
    DealPair,
    Plan,
    Side,
    Snapshot,
)
from referee.match.arbiter import Arbiter, Sitting, own_name
from referee.match.bots import BotSpec, BotSpecError
from referee.match.launcher import Confinement, Launcher, interrupted
from referee.match.outcome import MatchOutcome, NotStarted, VoidStreak
from referee.match.sessions import unique_names
from referee.match.setup import open_launcher
from referee.stats import Estimate, Verdict, fixed_verdict


async def compare(
    plan: Plan,
    on_progress: Callable[[Snapshot], None] | None = None,
    log_dir: Path | None = None,
    confinement: Confinement | None = None,
) -> Comparison:
    """Plays ``plan``'s pairs in order, up to ``plan.concurrency`` matches at once, until the sequential
    test decides (checked at the end of each round, from :data:`SPRT_MIN_PAIRS` pairs on) or every round
    is played. The verdict depends only on the pairs in schedule order, never on which match finished
    first, so any concurrency gives the same result. Command bots run in ``confinement`` (their sandbox),
    with their output in ``log_dir/NAME.log`` if given.

    Raises :class:`BotSpecError` when a bot cannot be loaded or started, :class:`RefereeInternalError`
    when pairs keep being void (``VOIDS_IN_A_ROW`` in a row).
    """
    async with open_launcher(log_dir, confinement) as launcher:
        plan = await own_names(plan, launcher)
        comparer = _Comparer(plan, launcher, on_progress)
        try:
            return await comparer.run()
        finally:
            await comparer.arbiter.close()


async def own_names(plan: Plan, launcher: Launcher) -> Plan:
    """``plan`` with every bot named as it names itself (a process's hello, an in-process bot's
    ``name``), as ``referee match`` names its seats: each distinct bot is started once and stopped
    before the first match, so that every match of the comparison seats the same names. When A and B
    give the same name (two versions of one bot often do), they keep the names of their command lines
    (``my_bot``, ``my_bot_v1``). A name taken already gets ``#2``, ``#3`` …, A's and B's first.

    Raises :class:`BotSpecError` when a bot cannot be loaded or started (tried twice)."""
    specs = [plan.a, plan.b, *plan.opponents]
    names = await self_named(specs, 2, Arbiter(launcher, plan.rules, plan.time_control, plan.max_faults))
    a, b, *others = (replace(spec, name=name) for spec, name in zip(specs, names, strict=True))
    return replace(plan, a=a, b=b, opponents=tuple(others))


async def self_named(specs: Sequence[BotSpec], candidates: int, arbiter: Arbiter) -> list[str]:
    """The names of ``specs`` as each bot names itself, each distinct bot started once by ``arbiter``
    (closed after) and stopped; among the first ``candidates``, those that give the same name keep the
    names of their command lines; a name taken already gets ``#2``, ``#3`` …, the first ones' first.
    Raises :class:`BotSpecError` when a bot cannot be loaded or started (tried twice)."""
    distinct = list({replace(spec, name=""): spec for spec in specs}.values())
    lineup = await arbiter.seat(Sitting(MATCH_ID, 0, tuple(distinct)))
    arbiter.release(lineup)
    await arbiter.close()
    if lineup.failed is not None:
        raise BotSpecError(lineup.failed.reason)
    own = {replace(spec, name=""): own_name(seat) for spec, seat in zip(distinct, lineup.seats, strict=True)}
    wanted = [own[replace(spec, name="")] or spec.name for spec in specs]
    first = wanted[:candidates]
    for index in range(candidates):
        if first.count(first[index]) > 1:
            wanted[index] = specs[index].name
    return unique_names(wanted)


class _Comparer:
    def __init__(
        self, plan: Plan, launcher: Launcher, on_progress: Callable[[Snapshot], None] | None
    ) -> None:
        self.plan = plan
        self.on_progress = on_progress
        self.slots = asyncio.Semaphore(plan.concurrency)
        self.void_reason = ""
        self.decided = False
        """The sequential test has decided: the matches still playing are cut short on purpose, and
        their bots see their streams end with OK, not CANCELLED as in an interrupted comparison."""
        self.arbiter = Arbiter(
            launcher,
            plan.rules,
            plan.time_control,
            plan.max_faults,
            cut=lambda: interrupted() and not self.decided,
        )

    async def run(self) -> Comparison:
        plan = self.plan
        keys = iter([(r, seat) for r in range(plan.rounds) for seat in range(plan.players)])
        window: collections.deque[asyncio.Task[DealPair | None]] = collections.deque()

        def refill() -> None:
            while len(window) < plan.concurrency:
                key = next(keys, None)
                if key is None:
                    return
                window.append(asyncio.create_task(self._pair(*key)))

        pairs: list[DealPair] = []
        void = done = 0
        streak = VoidStreak("pairs", "comparison")
        verdict: Verdict | None = None
        refill()
        try:
            while window and verdict is None:
                pair = await window.popleft()
                refill()
                done += 1
                streak.add(pair is None, self.void_reason)
                if pair is None:
                    void += 1
                else:
                    pairs.append(pair)
                estimate = Estimate.of([pair.difference for pair in pairs])
                test = plan.sprt
                if self.on_progress is not None:
                    llr = None if test is None else test.llr(estimate)
                    self.on_progress(Snapshot(done, plan.pairs, estimate, llr, void))
                if test is not None and done % plan.players == 0 and len(pairs) >= SPRT_MIN_PAIRS:
                    verdict = test.decide(estimate)
                    self.decided = verdict is not None
        finally:
            for task in window:
                task.cancel()
            await asyncio.gather(*window, return_exceptions=True)
        estimate = Estimate.of([pair.difference for pair in pairs])
        if verdict is None:
            verdict = Verdict.UNDECIDED if plan.sprt is not None else fixed_verdict(estimate)
        return Comparison(plan, tuple(pairs), verdict, void)

    async def _pair(self, round_number: int, seat: int) -> DealPair | None:
        """Both matches of a pair, at once where the concurrency allows; ``None`` if one stays void."""
        seed = self.plan.deals(round_number)
        outcomes = await asyncio.gather(
            *(
                self._match(self.plan.lineup(candidate, seat), seed)
                for candidate in (self.plan.a, self.plan.b)
            ),
            return_exceptions=True,  # one match's failure leaves the other to finish, not orphaned
        )
        a, b = outcomes
        for failure in (a, b):
            if isinstance(failure, BaseException):
                raise failure
        if not (isinstance(a, MatchOutcome) and isinstance(b, MatchOutcome)):
            return None
        return DealPair(round_number, seat, Side.of(a, seat), Side.of(b, seat))

    async def _match(self, specs: list[BotSpec], seed: int) -> MatchOutcome | None:
        """One match with fresh bots (a void one again from scratch, by the arbiter); ``None`` if it stays
        void. A bot that does not start raises :class:`BotSpecError`: a comparison needs every bot."""
        async with self.slots:
            result = await self.arbiter.play(Sitting(MATCH_ID, seed, tuple(specs)))
        if isinstance(result, NotStarted):
            raise BotSpecError(result.reason)
        if result.complete:
            return result.outcome
        self.void_reason = result.outcome.void_reason
        return None
