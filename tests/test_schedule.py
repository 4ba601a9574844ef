"""The schedule: seatings that cancel cards and neighbours, stable ids and seeds, tables by identity."""

import math
from collections import Counter

import pytest

from referee.schedule import Seating, build_schedule, seatings, tables

NAMES = ("erin", "bob", "dave", "alice", "carol")


def seat_counts(table):
    """How often each entrant holds each seat over the table's matches."""
    return Counter((name, seat) for match in table for seat, name in enumerate(match.entrants))


def neighbour_counts(table):
    """How often each entrant plays right after (clockwise from) each other entrant."""
    return Counter(
        (match.entrants[seat], match.entrants[seat - 1])
        for match in table
        for seat in range(len(match.entrants))
    )


def balanced(table, players):
    """Each entrant holds each seat equally often and follows each other entrant equally often."""
    entrants = set(table[0].entrants)
    seats = seat_counts(table)
    after = neighbour_counts(table)
    seat_ok = len(set(seats.values())) == 1 and len(seats) == players * players
    pairs = players * (players - 1)
    neighbour_ok = len(set(after.values())) == 1 and len(after) == pairs
    return seat_ok and neighbour_ok and all(set(m.entrants) == entrants for m in table)


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("mode", [Seating.BALANCED, Seating.ALL])
def test_every_table_cancels_seats_and_neighbours(players, mode):
    schedule = build_schedule(7, NAMES, players, 2, mode)
    every = list(tables(schedule))
    assert len(every) == 2 * math.comb(len(NAMES), players)
    for table in every:
        assert balanced(table, players), table[0].table_id
        assert len({m.seed for m in table}) == 1  # every seating deals the same cards
        assert len({m.table_id for m in table}) == 1


@pytest.mark.parametrize(
    ("players", "mode", "per_seat", "per_pair"),
    [
        (2, Seating.BALANCED, 1, 2),
        (3, Seating.BALANCED, 2, 3),
        (4, Seating.BALANCED, 3, 4),
        (4, Seating.ALL, 6, 8),
    ],
)
def test_the_counts_of_docs_league(players, mode, per_seat, per_pair):
    """The table in docs/LEAGUE.md, "Seatings": times each entrant holds each seat, times it plays right
    after each other entrant (A4 at 4 players: 3 and 4)."""
    table = next(tables(build_schedule(1, NAMES[:players], players, 1, mode)))
    assert set(seat_counts(table).values()) == {per_seat}
    assert set(neighbour_counts(table).values()) == {per_pair}
    assert len(table) == per_seat * players


def test_cyclic_cancels_seats_but_not_neighbours():
    """The defect of issue #14, and proof that the check above can fail."""
    for players in (3, 4):
        table = next(tables(build_schedule(1, NAMES[:players], players, 1, Seating.CYCLIC)))
        assert len(set(seat_counts(table).values())) == 1
        after = neighbour_counts(table)
        assert len(after) == players  # each entrant always follows the same one
        assert not balanced(table, players)
    two = next(tables(build_schedule(1, NAMES[:2], 2, 1, Seating.CYCLIC)))
    assert balanced(two, 2)  # at two players both orders are all there is


def test_sizes_of_each_mode():
    expected = {
        Seating.SINGLE: (1, 1, 1),
        Seating.CYCLIC: (2, 3, 4),
        Seating.BALANCED: (2, 6, 12),
        Seating.ALL: (2, 6, 24),
    }
    for mode, sizes in expected.items():
        assert tuple(len(seatings(players, mode)) for players in (2, 3, 4)) == sizes
        for players in (2, 3, 4):
            orders = seatings(players, mode)
            assert orders[0] == tuple(range(players))
            assert len(set(orders)) == len(orders)
    schedule = build_schedule(7, NAMES, 4, 2, Seating.BALANCED)
    assert len(schedule) == 5 * 12 * 2  # C(5,4) tables x 12 seatings x 2 rounds


def test_ids_are_unique_and_stable_and_tables_are_entrants_and_round():
    schedule = build_schedule(7, NAMES, 4, 2, Seating.ALL)
    assert len({m.match_id for m in schedule}) == len(schedule)
    assert [m.position for m in schedule] == list(range(len(schedule)))
    first = schedule[0]
    assert first.table_id == "r1:{alice,bob,dave,erin}"
    assert first.match_id == "r1:alice,bob,dave,erin"  # the identity seating comes first, in name order
    assert schedule[0].seed != schedule[5 * 24].seed  # a new round, new deals
    assert build_schedule(7, NAMES, 4, 2, Seating.ALL) == schedule
    grown = build_schedule(7, (*NAMES, "frank"), 4, 2, Seating.ALL)
    old = {m.match_id: (m.seed, m.table_id, m.entrants) for m in schedule}
    kept = [m for m in grown if m.match_id in old]
    assert len(kept) == len(schedule)  # adding an entrant only adds matches
    assert all(old[m.match_id] == (m.seed, m.table_id, m.entrants) for m in kept)


@pytest.mark.parametrize("mode", list(Seating))
def test_the_order_of_the_league_file_changes_no_match(mode):
    """Seatings are built on the table's names in sorted order, so reordering the file changes nothing
    but the order in which tables are played."""
    matches = {(m.match_id, m.seed, m.table_id) for m in build_schedule(3, NAMES, 3, 1, mode)}
    reordered = {(m.match_id, m.seed, m.table_id) for m in build_schedule(3, NAMES[::-1], 3, 1, mode)}
    assert matches == reordered


def test_a_seating_in_two_modes_is_the_same_match():
    """Switching modes keeps what was played: same id, same seed."""
    balanced_ = {m.match_id: m.seed for m in build_schedule(5, NAMES[:4], 4, 1, Seating.BALANCED)}
    every = {m.match_id: m.seed for m in build_schedule(5, NAMES[:4], 4, 1, Seating.ALL)}
    cyclic = {m.match_id: m.seed for m in build_schedule(5, NAMES[:4], 4, 1, Seating.CYCLIC)}
    assert balanced_.items() <= every.items()
    assert cyclic.items() <= every.items()
