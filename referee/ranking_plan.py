"""What a ranking of many bots plays and what it found (``referee compare A B C …``): the plan (the
candidates, the fillers of seats left over, the table, the limits), the tables in balanced seatings, and
the result as a bot author reads it. The statistics are :mod:`referee.ranking`'s; the playing is
:mod:`referee.ranking_play`'s.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from pyramid_sdk import Rules
from pyramid_sdk.bot import TimeControl
from pyramid_sdk.seeds import derive_seed
from referee.compare import OPPONENT, CompareError, signed
from referee.league.modes import Seating, seatings
from referee.match.bots import BotSpec
from referee.match.faults import MAX_FAULTS
from referee.ranking import Ending, Method, Relation, Standing, Table, planned, standing

MAX_TABLES: Final = 100
"""Tables at most unless ``--max-tables`` says: 1,200 matches at four seats."""


@dataclass(frozen=True, slots=True)
class RankPlan:
    """What to rank and how."""

    candidates: tuple[BotSpec, ...]
    fillers: tuple[BotSpec, ...]
    """Who fills the seats the candidates leave (only when there are fewer candidates than seats)."""
    rules: Rules
    seed: int
    max_tables: int
    method: Method
    time_control: TimeControl = field(default_factory=TimeControl)
    max_faults: int = MAX_FAULTS
    concurrency: int = 1

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def seats_for_candidates(self) -> int:
        return min(self.players, len(self.candidates))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.candidates)

    @property
    def orders(self) -> tuple[tuple[int, ...], ...]:
        """The table's seatings: ``balanced`` (docs/LEAGUE.md, "Seating")."""
        return seatings(self.players, Seating.BALANCED)

    @property
    def matches_per_table(self) -> int:
        return len(self.orders)

    def opening(self) -> tuple[str, ...]:
        """The candidates in the order the seed shuffles them: the first tables are windows of it."""
        order = list(self.names)
        random.Random(derive_seed(self.seed, "ranking", "opening")).shuffle(order)
        return tuple(order)

    def next_table(self, tables: Sequence[Table]) -> tuple[str, ...] | None:
        """The candidates of the next table, ``None`` when decided or ``max_tables`` are played."""
        if len(tables) >= self.max_tables:
            return None
        return planned(self.opening(), self.seats_for_candidates, tables, self.method)

    def deals(self, table_number: int) -> int:
        """The seed of table ``table_number`` (from 0): every seating of the table plays these deals."""
        return derive_seed(self.seed, "ranking", table_number)

    def lineups(self, candidates: Sequence[str]) -> list[list[BotSpec]]:
        """Every match of a table of ``candidates``: the table's entrants are the candidates and then the
        fillers, and match ``i`` seats them by the ``i``-th balanced seating."""
        by_name = {spec.name: spec for spec in self.candidates}
        entrants = [by_name[name] for name in candidates] + list(self.fillers)
        return [[entrants[entrant] for entrant in order] for order in self.orders]


def make_rank_plan(
    bots: Sequence[str],
    against: Sequence[str],
    rules: Rules,
    seed: int,
    max_tables: int,
    method: Method,
    time_control: TimeControl | None = None,
    max_faults: int = MAX_FAULTS,
    concurrency: int = 1,
    paths: tuple[Path, ...] = (),
) -> RankPlan:
    """A plan from bot specs as ``referee match`` takes them. Fillers (``against``, default
    :data:`~referee.compare.OPPONENT`) sit only where there are fewer candidates than seats. Raises
    :class:`CompareError` for one bot given twice or fillers that have no seat, :class:`BotSpecError`
    for a bot that does not load.

    >>> plan = make_rank_plan(["sample_bots.random_bot:RandomBot", "sample_bots.heuristic:HeuristicBot",
    ...                        "sample_bots.epsilon:Epsilon50"], (), Rules(players=4), 1, 10, Method())
    >>> plan.names, [spec.name for spec in plan.fillers]
    (('RandomBot', 'HeuristicBot', 'Epsilon50'), ['HeuristicBot#2'])
    """
    seen: set[str] = set()
    for text in bots:
        if text in seen:
            raise CompareError(f"{text!r} is given twice: each candidate once")
        seen.add(text)
    if max_tables < 1:
        raise CompareError(f"--max-tables {max_tables}: at least 1")
    spare = rules.players - len(bots)
    if against and spare <= 0:
        raise CompareError(
            f"--against fills seats the candidates leave, and {len(bots)} candidates fill every seat of a "
            f"{rules.players}-player table"
        )
    if len(against) > max(spare, 0):
        raise CompareError(f"--against given {len(against)} times, but {spare} seat(s) are left at the table")
    chosen = list(against) or [OPPONENT]
    texts = [*bots, *(chosen[index % len(chosen)] for index in range(max(spare, 0)))]
    specs, taken = [], set()
    for text in texts:
        spec = BotSpec.parse(text)
        spec.check()
        name, number = spec.name, 1
        while name in taken:
            number += 1
            name = f"{spec.name}#{number}"
        taken.add(name)
        specs.append(replace(spec, name=name, paths=paths))
    return RankPlan(
        candidates=tuple(specs[: len(bots)]),
        fillers=tuple(specs[len(bots) :]),
        rules=rules,
        seed=seed,
        max_tables=max_tables,
        method=method,
        time_control=time_control or TimeControl(),
        max_faults=max_faults,
        concurrency=concurrency,
    )


@dataclass(frozen=True, slots=True)
class Tally:
    """A candidate's faults and forfeited matches over the ranking."""

    faults: int = 0
    forfeits: int = 0


def decision_line(now: Standing, index: int) -> str:
    """One adjacent pair as the progress and the summary print it.

    >>> from referee.ranking import Pair
    >>> now = Standing(("a", "b"), {}, (Pair("a", "b", 6, 5.0, 2.0),), (Relation.BETTER,), 9)
    >>> decision_line(now, 0)
    'a > b: +5.00 points per match, [+3.00, +7.00] over 6 shared tables'
    """
    pair, relation = now.pairs[index], now.relations[index]
    interval = (
        f"[{signed(pair.low)}, {signed(pair.high)}]" if pair.half_width != float("inf") else "no interval yet"
    )
    return (
        f"{pair.upper} {relation.value} {pair.lower}: {signed(pair.mean)} points per match, {interval} "
        f"over {pair.tables} shared tables"
    )


@dataclass(frozen=True, slots=True)
class Ranked:
    """A finished ranking: every table, the final standing, and how it ended."""

    plan: RankPlan
    tables: tuple[Table, ...]
    tally: dict[str, Tally]
    void: int = 0
    """Tables left out because a match of theirs stayed void."""

    @property
    def standing(self) -> Standing:
        return standing(self.plan.opening(), self.tables, self.plan.method)

    @property
    def ending(self) -> Ending:
        return Ending.DECIDED if self.standing.decided else Ending.UNDECIDED

    @property
    def matches(self) -> int:
        return len(self.tables) * self.plan.matches_per_table

    def lines(self) -> list[str]:
        """The summary a bot author reads."""
        plan, now = self.plan, self.standing
        fillers = ", ".join(spec.name for spec in plan.fillers)
        lines = [
            f"{len(plan.candidates)} candidates at {plan.players}-player tables"
            + (f" with {fillers}" if fillers else "")
            + f"; margin {plan.method.margin:g}, alpha {plan.method.alpha:g} (family-wise)",
            f"{len(self.tables)} tables ({self.matches} matches)"
            + (f", {self.void} void table(s) left out" if self.void else ""),
            "ranking: "
            + " ".join(
                f"{name} {relation.value}" for name, relation in zip(now.order, now.relations, strict=False)
            )
            + f" {now.order[-1]}",
        ]
        lines += [f"  {decision_line(now, index)}" for index in range(len(now.pairs))]
        for name in plan.names:
            tally = self.tally.get(name, Tally())
            if tally.faults or tally.forfeits:
                lines.append(f"{name}: {tally.faults} fault(s), {tally.forfeits} forfeited match(es)")
        if self.ending is Ending.DECIDED:
            lines.append(f"verdict: every adjacent pair decided after {len(self.tables)} tables (exit 0)")
        else:
            undecided = sum(relation is Relation.UNDECIDED for relation in now.relations)
            lines.append(
                f"verdict: undecided: {undecided} adjacent pair(s) open after --max-tables {plan.max_tables} "
                "(exit 2)"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; docs/COMPARE.md lists the keys."""
        plan, now = self.plan, self.standing
        return {
            "candidates": list(plan.names),
            "against": [spec.name for spec in plan.fillers],
            "players": plan.players,
            "seed": plan.seed,
            "margin": plan.method.margin,
            "alpha": plan.method.alpha,
            "tables": len(self.tables),
            "matches": self.matches,
            "void_tables": self.void,
            "order": list(now.order),
            "pairs": [
                {
                    "upper": pair.upper,
                    "lower": pair.lower,
                    "relation": relation.name.lower(),
                    "mean": pair.mean,
                    "interval": None if pair.half_width == float("inf") else [pair.low, pair.high],
                    "shared_tables": pair.tables,
                }
                for pair, relation in zip(now.pairs, now.relations, strict=True)
            ],
            "faults": {
                name: {"faults": tally.faults, "forfeits": tally.forfeits}
                for name, tally in self.tally.items()
            },
            "verdict": "decided" if self.ending is Ending.DECIDED else "undecided",
            "exit_code": int(self.ending),
            "played": [
                {"entrants": list(table.entrants), "points": list(table.points)} for table in self.tables
            ],
        }
