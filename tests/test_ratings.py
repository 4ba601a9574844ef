"""Ratings: a table counts once, only when complete; points and their intervals are per table."""

import itertools
import math
import statistics

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.league.ratings import (
    ENVIRONMENT,
    Fold,
    RatingMode,
    ci95,
    game_ranks,
    rate,
    rate_game,
    rated_games,
)
from referee.report.crosstable import crosstable
from twins import HEURISTIC, OTHER_RANDOM, RANDOM, play

FIELD = (("random", RANDOM), ("heuristic", HEURISTIC), ("other", OTHER_RANDOM))
NAMES = [name for name, _ in FIELD]


@pytest.fixture(scope="module")
def three_tables(tmp_path_factory):
    """Three rounds of one 3-player table, 6 seatings each: 18 matches."""
    return play(tmp_path_factory.mktemp("ratings"), 31, FIELD, rounds=3)


def test_a_table_is_rated_once_and_only_when_complete(three_tables):
    schedule, stored = three_tables.schedule, dict(three_tables.stored)
    last = schedule[-1]
    del stored[last.match_id]  # the third table lacks one seating
    duplicate = rate(NAMES, schedule, stored, RatingMode.DUPLICATE)
    assert sorted({label for _, label, *_ in duplicate.history}) == [
        "r1:{heuristic,other,random}",
        "r2:{heuristic,other,random}",
    ]
    assert all((s.tables, s.matches) == (2, 12) for s in duplicate.standings)
    per_match = rate(NAMES, schedule, stored, RatingMode.MATCH)
    assert len({label for _, label, *_ in per_match.history}) == 17
    assert all((s.tables, s.matches) == (3, 17) for s in per_match.standings)
    # the update comes at the table's last match, in schedule order
    assert [position for position, *_ in duplicate.history[::3]] == [5, 11]


def test_the_update_ranks_entrants_by_their_points_over_the_table(three_tables):
    one_table = [m for m in three_tables.schedule if m.round == 1]
    board = rate(NAMES, one_table, three_tables.stored, RatingMode.DUPLICATE)
    totals = three_tables.table_totals()["r1:{heuristic,other,random}"]
    by_points = sorted(NAMES, key=lambda name: -totals[name])
    assert [s.entrant for s in sorted(board.standings, key=lambda s: -s.mu)] == by_points
    assert game_ranks({name: (0, totals[name]) for name in NAMES})[by_points[0]] == 1


def test_mean_points_and_interval_come_from_per_table_means(three_tables):
    board = three_tables.board
    tables = three_tables.table_totals()
    for standing in board.standings:
        means = [tables[table][standing.entrant] / 6 for table in sorted(tables)]
        assert standing.mean_points == pytest.approx(statistics.fmean(means))
        half = 4.303 * statistics.stdev(means) / math.sqrt(3)  # Student's t, 2 degrees of freedom
        assert standing.points_ci95 == pytest.approx(half)
        assert standing.to_dict()["tables"] == 3


def test_interval_needs_two_tables():
    assert ci95([]) == 0.0
    assert math.isinf(ci95([110.0]))
    assert ci95([100.0, 110.0]) == pytest.approx(12.706 * statistics.stdev([100.0, 110.0]) / math.sqrt(2))
    many = [float(v) for v in range(30)]
    assert ci95(many) == pytest.approx(1.96 * statistics.stdev(many) / math.sqrt(30))


def test_forfeits_rank_below_points():
    ranks = game_ranks({"a": (0, 900), "b": (2, 1400), "c": (1, 1300), "d": (0, 900)})
    assert ranks == {"a": 1, "d": 1, "c": 3, "b": 4}


def test_the_crosstable_compares_every_pair_over_the_matches_the_leaderboard_counts(three_tables):
    schedule, stored = three_tables.schedule, dict(three_tables.stored)
    del stored[schedule[-1].match_id]  # the third table lacks one seating: not counted in duplicate mode
    duplicate = crosstable(NAMES, schedule, stored, RatingMode.DUPLICATE)
    assert sorted(duplicate.pairs) == sorted((a, b) for a in NAMES for b in NAMES if a != b)
    for (first, second), pair in duplicate.pairs.items():
        per_match = [
            stored[m.match_id].record.totals[m.entrants.index(first)]
            - stored[m.match_id].record.totals[m.entrants.index(second)]
            for m in schedule[:12]
        ]
        assert (len(pair.tables), pair.matches) == (2, 12)
        assert pair.mean == pytest.approx(statistics.fmean(per_match))  # equal seatings per table
        assert pair.ci95 == pytest.approx(12.706 * statistics.stdev(pair.tables) / math.sqrt(2))
        other = duplicate.pairs[second, first]
        assert other.mean == pytest.approx(-pair.mean)
        assert pair.los + other.los == pytest.approx(1.0)
        assert pair.significant == (pair.los >= 0.975 or pair.los <= 0.025)
    per_match = crosstable(NAMES, schedule, stored, RatingMode.MATCH)
    assert all((len(p.tables), p.matches) == (3, 17) for p in per_match.pairs.values())
    assert [(a, b) for a, b, _ in duplicate.neighbours()] == list(itertools.pairwise(NAMES))


def test_one_table_gives_a_difference_without_interval(three_tables):
    first_table = [m for m in three_tables.schedule if m.round == 1]
    pair = crosstable(NAMES, first_table, three_tables.stored).pairs["random", "heuristic"]
    assert math.isinf(pair.ci95)
    assert pair.los is None
    assert not pair.significant


def rated_afresh(schedule, stored, mode):
    """The history and final ratings of the stored games, rated one after another from the start."""
    ratings = {name: ENVIRONMENT.create_rating() for name in NAMES}
    history = []
    for game in rated_games(schedule, stored, mode):
        ratings = rate_game(ratings, game)
        last = game[-1][0]
        label = last.table_id if mode is RatingMode.DUPLICATE else last.match_id
        history += [(last.position, label, n, ratings[n].mu, ratings[n].sigma) for n in game[0][0].entrants]
    return tuple(history), {name: (r.mu, r.sigma) for name, r in ratings.items()}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(18)), mode=st.sampled_from(RatingMode))
def test_a_fold_fed_match_by_match_in_any_order_gives_the_leaderboard_of_rating_afresh(
    three_tables, order, mode
):
    """What serve's pages keep (``Fold``) against what every command computes (``rate``): after each
    match stored, in any order of completion, the two leaderboards are the same, history included."""
    schedule = tuple(three_tables.schedule)
    fold = Fold(tuple(NAMES), schedule, mode)
    stored = {}
    for number in order:
        match_id = schedule[number].match_id
        stored[match_id] = three_tables.stored[match_id]
        board = fold.board(stored, [match_id])
        assert board == rate(NAMES, schedule, stored, mode)
        assert (board.history, {s.entrant: (s.mu, s.sigma) for s in board.standings}) == rated_afresh(
            schedule, stored, mode
        )
    assert fold.done == 3  # every table folded into the kept state


def test_a_fold_restarted_after_a_change_to_its_prefix_reads_it_again(three_tables):
    schedule = tuple(three_tables.schedule)
    fold = Fold(tuple(NAMES), schedule, RatingMode.DUPLICATE)
    stored = dict(three_tables.stored)
    fold.board(stored)
    first = schedule[0].match_id
    assert fold.folded(first)
    del stored[first]  # its entrant's new version: the match is deleted
    fold.restart()
    assert fold.board(stored, []) == rate(NAMES, schedule, stored, RatingMode.DUPLICATE)
    assert fold.done == 0
