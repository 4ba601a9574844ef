"""The schedule: a league's matches as a deterministic list with stable ids and seeds.

Every combination of ``players`` entrants is a table. With ``rotate_seats`` a table is played once per
cyclic rotation of its entrants over the seats, every rotation with the same seed, so each entrant holds
each seat's cards (duplicate format) and luck cancels out. A round repeats all that with fresh seeds.

Ids and seeds depend on the round and the table's entrants, not on positions, so adding an entrant to a
league only adds matches: those already played keep their ids, seeds and results.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from pyramid_sdk.seeds import derive_seed


@dataclass(frozen=True, slots=True)
class ScheduledMatch:
    position: int
    """0-based place in schedule order (ratings are applied in this order)."""
    match_id: str
    round: int
    """From 1."""
    table: int
    """From 1: the table's place among the round's tables."""
    rotation: int
    """From 0: seat ``s`` holds ``table_entrants[(s + rotation) % players]``."""
    seed: int
    entrants: tuple[str, ...]
    """Entrant names by seat."""


def build_schedule(
    league_seed: int, entrant_names: tuple[str, ...], players: int, rounds: int, rotate_seats: bool
) -> tuple[ScheduledMatch, ...]:
    """C(N, players) tables × (players rotations, or 1) × rounds, in that nesting order.

    >>> [m.match_id for m in build_schedule(1, ("a", "b", "c"), 2, 1, True)]
    ['r1:a,b', 'r1:b,a', 'r1:a,c', 'r1:c,a', 'r1:b,c', 'r1:c,b']
    """
    matches: list[ScheduledMatch] = []
    rotations = players if rotate_seats else 1
    for round_number in range(1, rounds + 1):
        for table_number, table in enumerate(itertools.combinations(entrant_names, players), start=1):
            seed = derive_seed(league_seed, "round", round_number, "table", *sorted(table))
            for rotation in range(rotations):
                seats = tuple(table[(seat + rotation) % players] for seat in range(players))
                matches.append(
                    ScheduledMatch(
                        position=len(matches),
                        match_id=f"r{round_number}:{','.join(seats)}",
                        round=round_number,
                        table=table_number,
                        rotation=rotation,
                        seed=seed,
                        entrants=seats,
                    )
                )
    return tuple(matches)
