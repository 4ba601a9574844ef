"""Rank confidence (issue #36): rank probabilities from the posterior, tied groups, greedy fragility, and
where they show (the leaderboard's formats, the report's index)."""

import json
import re

import pytest

from referee.figures import probability
from referee.league.confidence import DRAWS, TIE_CONFIDENCE, confidence, fragility, separation, tied_groups
from referee.league.ratings import Leaderboard, RatingMode, Standing, rate, rated_games
from referee.league.schedule import ScheduledMatch
from referee.league.summary import MatchSummary
from referee.match.outcome import MatchStatus
from support import ROOT
from support.cli import referee
from support.leagues import write_league


def board_of(*beliefs: tuple[str, float, float]) -> Leaderboard:
    """A board of these (name, μ, σ), ranked as the leaderboard ranks (μ − 3σ, then name)."""
    standings = sorted(
        (Standing(n, mu, sigma) for n, mu, sigma in beliefs), key=lambda s: (-s.conservative, s.entrant)
    )
    for place, standing in enumerate(standings, start=1):
        standing.rank = place
    return Leaderboard(tuple(standings), ())


FIELD = board_of(("a", 31.0, 2.0), ("b", 29.5, 2.5), ("c", 24.0, 3.0), ("d", 23.0, 4.0), ("e", 15.0, 1.5))


@pytest.mark.quick
def test_the_probabilities_sum_to_one_per_entrant_and_per_rank():
    sure = confidence(FIELD)
    assert sure.names == ("a", "b", "c", "d", "e")
    assert sure.draws == DRAWS
    for row in sure.probabilities:
        assert sum(row) == pytest.approx(1.0)
    for rank in range(5):
        assert sum(row[rank] for row in sure.probabilities) == pytest.approx(1.0)
    # every probability is a count of draws
    assert all((p * DRAWS).is_integer() for row in sure.probabilities for p in row)


@pytest.mark.quick
def test_the_probabilities_are_the_same_for_the_same_board_and_move_with_it():
    first = confidence(FIELD).probabilities
    again = confidence(
        board_of(("a", 31.0, 2.0), ("b", 29.5, 2.5), ("c", 24.0, 3.0), ("d", 23.0, 4.0), ("e", 15.0, 1.5))
    )
    assert again.probabilities == first
    moved = confidence(
        board_of(("a", 31.0, 2.0), ("b", 29.5, 2.6), ("c", 24.0, 3.0), ("d", 23.0, 4.0), ("e", 15.0, 1.5))
    )
    assert moved.probabilities != first  # another board, other draws


@pytest.mark.quick
def test_the_draws_agree_with_the_exact_probability_of_two_entrants():
    board = board_of(("x", 27.0, 3.0), ("y", 25.0, 2.0))
    sure = confidence(board)
    assert sure.names == ("y", "x")  # μ − 3σ ranks y first, though x more probably is the better
    exact = separation(Standing("x", 27.0, 3.0), Standing("y", 25.0, 2.0))
    assert exact > 0.5
    assert sure.of("x")[0] == pytest.approx(exact, abs=4 * (0.25 / DRAWS) ** 0.5)


@pytest.mark.quick
def test_entrants_of_equal_mu_and_sigma_are_tied_and_a_clear_leader_is_not():
    board = board_of(("top", 45.0, 1.0), ("p", 25.0, 3.0), ("q", 25.0, 3.0), ("low", 5.0, 1.0))
    sure = confidence(board)
    assert sure.groups == (("p", "q"),)
    assert sure.tied_with("p") == ("q",)
    assert sure.tied_with("q") == ("p",)
    assert sure.tied_with("top") == ()
    assert sure.of("top")[0] > 0.999
    assert sure.of("low")[3] > 0.999
    assert sure.of("p")[1] == pytest.approx(0.5, abs=0.05)
    assert sure.lines() == ["tied (order not decided): p = q"]


@pytest.mark.quick
def test_undecided_neighbours_chain_into_one_group_and_a_decided_pair_splits_groups():
    standings = [
        Standing(n, mu, 1.0) for n, mu in (("a", 30.0), ("b", 28.6), ("c", 27.2), ("d", 20.0), ("e", 19.5))
    ]
    assert separation(standings[0], standings[2]) > TIE_CONFIDENCE  # a and c apart, chained through b
    assert tied_groups(standings) == (("a", "b", "c"), ("d", "e"))


def two_player_games(results: list[tuple[str, str]]) -> tuple[list[ScheduledMatch], dict[str, MatchSummary]]:
    """One single-match table per (winner, loser), in this order: 120 points to 90."""
    schedule, stored = [], {}
    for position, (winner, loser) in enumerate(results):
        match_id = f"r{position + 1}:{winner},{loser}"
        table_id = f"r{position + 1}:{{{','.join(sorted((winner, loser)))}}}"
        schedule.append(ScheduledMatch(position, match_id, position + 1, 1, 0, 7, (winner, loser), table_id))
        stored[match_id] = MatchSummary(
            match_id, position + 1, 1, 0, 7, MatchStatus.COMPLETE, (winner, loser),
            (120, 90), (120, 90), (1, 2), (), (), (16, 16), (4, 4), (),
        )  # fmt: skip
    return schedule, stored


@pytest.mark.quick
def test_a_league_that_one_table_decides_has_fragility_one():
    # a beats c first (c still unrated), then z beats c (a weaker c by then), then z beats a: without that
    # last table a, whose win counted for more, leads
    schedule, stored = two_player_games([("a", "c"), ("z", "c"), ("z", "a")])
    names = ["a", "c", "z"]
    board = rate(names, schedule, stored)
    assert board.standings[0].entrant == "z"
    games = rated_games(schedule, stored, RatingMode.DUPLICATE)
    found = fragility(board, names, games)
    assert found is not None
    assert (found.count, found.removed, found.new_leader) == (1, ("r3:{a,z}",), "a")
    without = rate(names, schedule[:2], stored)
    assert without.standings[0].entrant == "a"  # the greedy answer is true: a is the leader without it
    assert found.text().startswith("fragility: at most 1 table (removing r3:{a,z} makes a the leader")


@pytest.mark.quick
def test_a_leader_no_few_tables_overturn_is_more_than_the_cap():
    schedule, stored = two_player_games(
        [("z", other) for other in ("a", "b", "c") * 4] + [("a", "b"), ("b", "c")]
    )
    names = ["a", "b", "c", "z"]
    board = rate(names, schedule, stored)
    found = fragility(board, names, rated_games(schedule, stored, RatingMode.DUPLICATE), cap=3)
    assert found is not None
    assert found.leader == "z"
    assert (found.count, found.changed, len(found.removed)) == (None, False, 3)
    assert found.text().startswith("fragility: more than 3 tables")


@pytest.mark.quick
def test_no_fragility_without_a_rated_game():
    board = board_of(("a", 25.0, 8.3), ("b", 25.0, 8.3))
    assert fragility(board, ["a", "b"], []) is None


LEAGUE = f"""\
name: Confident League
seed: 3
players: 2
schedule: {{format: round-robin, rounds: 1, seating: cyclic}}
entrants:
  - name: heuristic
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
  - name: random
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
  - name: random2
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
"""


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    path = write_league(tmp_path_factory.mktemp("confidence"), LEAGUE)
    referee("run", path, check=True)
    return path


def test_the_leaderboard_shows_the_rank_confidence_in_every_format(played):
    rows = json.loads(referee("leaderboard", played, "--format", "json", check=True).stdout)
    old = ["rank", "entrant", "mu", "sigma", "conservative", "tables", "matches", "wins", "mean_points"]
    assert list(rows[0])[: len(old)] == old  # the keys of before come first, unchanged
    assert list(rows[0])[-3:] == ["p_rank", "rank_probabilities", "tied_with"]
    for place, row in enumerate(rows):
        assert len(row["rank_probabilities"]) == len(rows)
        assert sum(row["rank_probabilities"]) == pytest.approx(1.0, abs=1e-3)
        assert row["p_rank"] == row["rank_probabilities"][place]
    for rank in range(len(rows)):
        assert sum(row["rank_probabilities"][rank] for row in rows) == pytest.approx(1.0, abs=1e-3)
    again = referee("leaderboard", played, "--format", "json", check=True)
    assert json.loads(again.stdout) == rows  # deterministic from the stored results
    assert again.stderr.startswith("fragility: ")

    csv = referee("leaderboard", played, "--format", "csv", check=True).stdout.splitlines()
    assert csv[0].endswith(",format,p_rank,rank_probabilities,tied_with")
    first = csv[1].split(",")
    assert first[-3] == str(rows[0]["p_rank"])
    assert first[-2] == " ".join(str(p) for p in rows[0]["rank_probabilities"])

    table = referee("leaderboard", played, check=True).stdout
    assert "P(rank)" in table
    shown = f"{100 * rows[0]['p_rank']:.0f}%" if 0.005 < rows[0]["p_rank"] < 0.995 else None
    if shown:
        assert re.search(rf"{rows[0]['entrant']}\s.*\s{shown}\s*$", table, re.M)
    tied = [row for row in rows if row["tied_with"]]
    if tied:
        assert "tied (order not decided): " in table
    else:
        assert "every neighbour decided" in table
    assert re.search(r"^fragility: (at most \d+ tables? \(removing|more than \d+ tables)", table, re.M)


def test_the_report_shows_the_rank_confidence_beside_the_standings(played, tmp_path):
    rows = json.loads(referee("leaderboard", played, "--format", "json", check=True).stdout)
    made = referee("report", played, "-o", tmp_path / "site", check=True)
    assert re.search(r"^fragility: ", made.stdout, re.M)  # on the terminal, never on the pages
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    section = html[html.index('id="rank-probabilities"') : html.index('id="tied"')]
    cells = [
        re.findall(r"<td>(.*?)</td>", row)
        for row in re.findall(r'<tr><th scope="row">.*?</th>(.*?)</tr>', section, re.S)
    ]
    assert cells == [[probability(p) for p in row["rank_probabilities"]] for row in rows]
    assert "fragility" in html
    assert "referee leaderboard</code> computes it" in html
