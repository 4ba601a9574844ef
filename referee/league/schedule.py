"""The schedule: a league's matches as a deterministic list with stable ids and seeds.

Every combination of ``players`` entrants is a table. A table is played once per *seating* of its
:class:`Seating` mode, every seating with the same seed, so the same cards go to the same seats and the
entrants take turns holding them (duplicate format): luck cancels out. A round repeats all that with
fresh seeds.

Which seatings matters. In Pyramid a player gains or loses by whoever plays just before him, so a fair
set of seatings must cancel neighbours as well as cards: each entrant holds each seat equally often *and*
plays right after each other entrant equally often. Cyclic rotation does the first only (the order
around the table never changes), which let the order of the entrants decide between two identical bots.

Ids, seeds and seatings depend on the round and the table's entrant *names*, not on their places in the
league file, so reordering the file changes nothing and adding an entrant only adds matches: those
already played keep their ids, seeds and results.

Which tables there are is the :class:`Design`: every combination (``round-robin``), a few tables per
entrant chosen to spread the pairs evenly (``sampled``, see :mod:`referee.league.designs`), or each challenger
against the field (``gauntlet``). A table is a set of entrants in a round whatever the format, with the
same id and seed, so a table found in two formats is the same table.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from pyramid_sdk.seeds import derive_seed
from referee.league.designs import Table, challenger_design, sampled_design
from referee.league.modes import Design, Format, Seating, seatings

ROUND_ROBIN: Final = Design()


def design_tables(design: Design, seed: int, names: Sequence[str], players: int) -> tuple[Table, ...]:
    """The tables of one round of ``design``, each as its entrants in name order, in playing order."""
    if design.format is Format.SAMPLED:
        assert design.tables_per_entrant is not None
        joined = {name for cohort in design.cohorts for name in cohort}
        last = tuple(sorted(set(names) - joined))
        sampled = _sampled(seed, (*design.cohorts, last), players, design.tables_per_entrant)
        present = set(names)
        return tuple(table for table in sampled if present.issuperset(table))
    if design.format is Format.GAUNTLET:
        field = [name for name in names if name not in design.challengers]
        return tuple(
            table
            for challenger in design.challengers
            for table in (
                _challenger(seed, challenger, tuple(field), players, design.tables_per_challenger)
                if design.tables_per_challenger is not None
                else (
                    tuple(sorted((challenger, *others)))
                    for others in itertools.combinations(field, players - 1)
                )
            )
        )
    return tuple(tuple(sorted(table)) for table in itertools.combinations(names, players))


@functools.lru_cache(maxsize=8)
def _sampled(
    seed: int, cohorts: tuple[tuple[str, ...], ...], players: int, per_entrant: int
) -> tuple[Table, ...]:
    """:func:`referee.league.designs.sampled_design`, kept: the design search takes up to a second, and a run
    asks for its schedule several times (the live report after every few matches)."""
    return sampled_design(seed, cohorts, players, per_entrant)


@functools.lru_cache(maxsize=64)
def _challenger(
    seed: int, challenger: str, field: tuple[str, ...], players: int, count: int
) -> tuple[Table, ...]:
    return challenger_design(seed, challenger, field, players, count)


@dataclass(frozen=True, slots=True)
class ScheduledMatch:
    position: int
    """0-based place in schedule order (ratings are applied in this order)."""
    match_id: str
    round: int
    """From 1."""
    table: int
    """From 1: the table's place among the round's tables (for display; :attr:`table_id` identifies)."""
    rotation: int
    """From 0: which of the table's seatings this is (named ``rotation`` in the database and exports)."""
    seed: int
    entrants: tuple[str, ...]
    """Entrant names by seat."""
    table_id: str
    """The table's identity, its round and entrants in name order: ``r1:{a,b,c,d}``. All the matches with
    one ``table_id`` are the table's set of seatings, and share one seed."""


def build_schedule(
    league_seed: int,
    entrant_names: tuple[str, ...],
    players: int,
    rounds: int,
    seating: Seating = Seating.BALANCED,
    design: Design = ROUND_ROBIN,
) -> tuple[ScheduledMatch, ...]:
    """The design's tables × the seating's matches × rounds, in that nesting order: every round plays
    the same tables with fresh deals. A round robin is C(N, players) tables.

    >>> [m.match_id for m in build_schedule(1, ("c", "a", "b"), 2, 1)]
    ['r1:a,c', 'r1:c,a', 'r1:b,c', 'r1:c,b', 'r1:a,b', 'r1:b,a']
    """
    matches: list[ScheduledMatch] = []
    orders = seatings(players, seating)
    every = design_tables(design, league_seed, entrant_names, players)
    for round_number in range(1, rounds + 1):
        for table_number, by_name in enumerate(every, start=1):
            seed = derive_seed(league_seed, "round", round_number, "table", *by_name)
            matches += table_matches(
                f"r{round_number}", round_number, table_number, seed, by_name, orders, len(matches)
            )
    return tuple(matches)


def table_matches(
    prefix: str,
    round_number: int,
    table_number: int,
    seed: int,
    by_name: tuple[str, ...],
    orders: tuple[tuple[int, ...], ...],
    position: int,
) -> list[ScheduledMatch]:
    """One table in all its seatings, from schedule place ``position`` on: every match with the table's
    seed, ids ``{prefix}:{names by seat}``, and the table's id ``{prefix}:{names in name order}``: the
    same whatever the order of the entrants in the league file.

    >>> [(m.match_id, m.table_id) for m in table_matches("r2", 2, 1, 7, ("b", "a"), ((0, 1), (1, 0)), 0)]
    [('r2:b,a', 'r2:{a,b}'), ('r2:a,b', 'r2:{a,b}')]
    """
    identity = f"{prefix}:{{{','.join(sorted(by_name))}}}"
    matches = []
    for index, order in enumerate(orders):
        seats = tuple(by_name[entrant] for entrant in order)
        matches.append(
            ScheduledMatch(
                position=position + index,
                match_id=f"{prefix}:{','.join(seats)}",
                round=round_number,
                table=table_number,
                rotation=index,
                seed=seed,
                entrants=seats,
                table_id=identity,
            )
        )
    return matches


def tables(schedule: Iterable[ScheduledMatch]) -> Iterator[list[ScheduledMatch]]:
    """The schedule's tables in schedule order, each as its matches (its set of seatings) in order."""
    for _key, group in itertools.groupby(schedule, key=lambda match: match.table_id):
        yield list(group)
