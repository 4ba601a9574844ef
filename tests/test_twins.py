"""Issue #14's twin experiment as tests: a fair league cannot tell two copies of one bot apart.

In-process deterministic bots only (heuristic, random and a second random stream), so each league here
takes a second or two. The same experiment with the Monte Carlo bot, for the figures in docs/LEAGUE.md,
is ``tests/twins.py`` run as a script.
"""

import asyncio
import itertools

import pytest

from pyramid_sdk.bot import MatchInfo, TimeControl
from pyramid_sdk.rules import Rules
from referee.league.ratings import RatingMode
from referee.match.playing import LocalSeat, play_match
from sample_bots.random_bot import RandomBot
from twins import HEURISTIC, OTHER_RANDOM, RANDOM, play

SEEDS = (101, 202, 303, 404, 505)
TWINS = (("heuristic", HEURISTIC), ("heuristic2", HEURISTIC))
FIELD = (("random", RANDOM), *TWINS, ("other", OTHER_RANDOM))
"""As in the issue: a weak bot, the twins, and a fourth that is a copy of none of them (a second copy
of random would make the even permutations symmetric in the twins too, and hide what is measured)."""


SWAP = {"heuristic": "heuristic2", "heuristic2": "heuristic"}


def twins_of(played):
    by_name = {standing.entrant: standing for standing in played.board.standings}
    return by_name["heuristic"], by_name["heuristic2"]


@pytest.mark.parametrize("field", [(("random", RANDOM), *TWINS), FIELD], ids=["3-players", "4-players"])
def test_twins_tie_exactly_under_all(tmp_path, field):
    """Every order: swapping the twins maps the set of seatings onto itself, so each game of one has a
    mirror game of the other with the same cards, seeds and moves."""
    played = play(tmp_path, 404, field, seating="all")
    tables = played.table_totals()
    assert len(played.stored) == len(list(itertools.permutations(field)))
    for totals in tables.values():
        assert totals["heuristic"] == totals["heuristic2"]
    first, second = twins_of(played)
    assert (first.mu, first.sigma, first.mean_points) == (second.mu, second.sigma, second.mean_points)
    assert [s.entrant for s in played.board.standings].index("heuristic") + 1 == first.rank  # by name
    by_seats = {scheduled.entrants: scheduled.match_id for scheduled in played.schedule}
    for scheduled in played.schedule:  # the mirror game: the twins swapped, everything else the same
        mirror = tuple(
            {"heuristic": "heuristic2", "heuristic2": "heuristic"}.get(n, n) for n in scheduled.entrants
        )
        one = played.stored[scheduled.match_id].record
        other = played.stored[by_seats[mirror]].record
        assert one.totals == other.totals
        assert [d.tricks for d in one.deals] == [d.tricks for d in other.deals]


def test_under_balanced_neither_twin_is_systematically_ahead_and_under_cyclic_the_first_one_is(tmp_path):
    """Five seeds. Balanced: the twins' order changes from seed to seed. Cyclic (the old rotate_seats):
    the twin that plays after the weak random bot comes out ahead, which is what the check can see."""
    balanced = [twins_of(play(tmp_path / f"b{seed}", seed, FIELD)) for seed in SEEDS]
    ahead = [first.mean_points - second.mean_points for first, second in balanced]
    assert any(d > 0 for d in ahead), ahead
    assert any(d < 0 for d in ahead), ahead
    assert sum(first.mu > second.mu for first, second in balanced) in (2, 3)
    cyclic = [
        twins_of(play(tmp_path / f"c{seed}", seed, FIELD, seating="cyclic", rating="match")) for seed in SEEDS
    ]
    assert all(first.mean_points >= second.mean_points for first, second in cyclic)
    assert sum(first.mean_points > second.mean_points for first, second in cyclic) >= 4


def test_swapping_the_twins_in_the_league_file_changes_nothing(tmp_path):
    """A table's seatings are built on its entrants' names, not their places in the file."""
    swapped = (FIELD[0], FIELD[2], FIELD[1], FIELD[3])
    for seed in SEEDS[:2]:
        one = play(tmp_path / f"a{seed}", seed, FIELD).board
        other = play(tmp_path / f"b{seed}", seed, swapped).board
        assert [s.to_dict() for s in one.standings] == [s.to_dict() for s in other.standings]
        assert one.history == other.history


def test_duplicate_rating_makes_one_game_per_table_and_match_rating_one_per_match(tmp_path):
    duplicate = play(tmp_path / "d", 7, FIELD, rounds=2)
    per_match = play(tmp_path / "m", 7, FIELD, rating="match", rounds=2)
    assert duplicate.board.mode is RatingMode.DUPLICATE
    assert {label for _, label, *_ in duplicate.board.history} == {
        "r1:{heuristic,heuristic2,other,random}",
        "r2:{heuristic,heuristic2,other,random}",
    }
    assert len(duplicate.board.history) == 2 * 4  # two tables, four entrants
    assert len(per_match.board.history) == 24 * 4
    for standing in duplicate.board.standings:
        assert (standing.tables, standing.matches) == (2, 24)
    # correlated replays rated as independent games: σ far too small
    assert max(s.sigma for s in per_match.board.standings) < min(s.sigma for s in duplicate.board.standings)


def test_bot_seeds_depend_on_the_seat_not_the_entrant():
    """The symmetry needs it: whoever sits in seat s gets the seed of seat s."""
    seen: dict[tuple[str, ...], list[int]] = {}

    class Recorder(RandomBot):
        def match_start(self, info: MatchInfo) -> None:
            super().match_start(info)
            seen.setdefault(info.seat_names, [0] * len(info.seat_names))[info.seat] = info.seed

    for names in (("a", "b", "c"), ("c", "a", "b"), ("b", "c", "a")):
        seats = [LocalSeat(Recorder(), name) for name in names]
        asyncio.run(play_match(seats, Rules(players=3), 99, time_control=TimeControl(5, 50)))
    assert len(seen) == 3
    seeds = list(seen.values())
    assert seeds[0] == seeds[1] == seeds[2]
    assert len(set(seeds[0])) == 3
