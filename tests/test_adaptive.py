"""``until: settled``: the choice of batches is a pure function of the seed, the entrants and the stored
results, and it stops once the adjacent pairs of the ranking are separated (or at ``max_matches``).

These tests feed the planner synthetic results (real :class:`MatchRecord` values without deals): each
entrant scores its strength plus seeded noise, so a match's result is fixed by its seed, as a real
match between seeded bots is. ``tests/test_settled_e2e.py`` plays real bots.
"""

import random
from collections.abc import Mapping

import pytest

from pyramid_sdk import Rules
from pyramid_sdk.record import MatchRecord
from pyramid_sdk.seeds import derive_seed
from referee.league.adaptive import Plan, Settling, Stop, plan
from referee.league.config import LeagueError, load_league
from referee.league.modes import Seating
from referee.league.planning import plan_of, schedule_of
from referee.league.ratings import RatingMode, rate
from referee.league.schedule import ScheduledMatch, tables
from referee.match.outcome import MatchStatus
from referee.results.reading import standings
from referee.results.store import StoredMatch

STRENGTHS = {"ann": 40, "bob": 30, "cid": 20, "dan": 10, "eve": 0}


def result(scheduled: ScheduledMatch, strengths: Mapping[str, int], noise: int) -> StoredMatch:
    """A complete match whose totals are each seat's strength plus noise drawn from the match seed."""
    totals = tuple(
        100 + strengths[name] + derive_seed(scheduled.seed, "noise", name) % (noise + 1)
        for name in scheduled.entrants
    )
    ranks = tuple(1 + sum(other > total for other in totals) for total in totals)
    players = len(scheduled.entrants)
    rules = Rules(players=players)
    record = MatchRecord(scheduled.entrants, scheduled.seed, rules, (), totals, ranks, (), True)
    return StoredMatch(
        scheduled.match_id,
        scheduled.round,
        scheduled.table,
        scheduled.rotation,
        scheduled.seed,
        MatchStatus.COMPLETE,
        record,
        (),
        (0,) * players,
        (0.0,) * players,
    )


def settle(
    strengths: Mapping[str, int],
    settling: Settling,
    players: int = 2,
    seed: int = 7,
    noise: int = 5,
    shuffle: random.Random | None = None,
) -> tuple[Plan, dict[str, StoredMatch]]:
    """Plays the plan to its end as a run does: every missing match, then asks for the next batch. With
    ``shuffle``, each batch's matches are stored in a random order (as concurrent workers finish them)."""
    stored: dict[str, StoredMatch] = {}
    while True:
        names = list(strengths)
        current = plan(seed, names, players, Seating.BALANCED, RatingMode.DUPLICATE, settling, stored)
        missing = [m for m in current.schedule if m.match_id not in stored]
        if not missing:
            return current, stored
        if shuffle is not None:
            shuffle.shuffle(missing)
        for scheduled in missing:
            stored[scheduled.match_id] = result(scheduled, strengths, noise)


def test_it_stops_once_every_adjacent_pair_is_separated_in_the_right_order():
    settling = Settling(max_matches=400, batch_tables=2)
    final, stored = settle(STRENGTHS, settling)
    settlement = final.settlement
    assert settlement.stop is Stop.SETTLED
    assert len(final.schedule) < 400
    assert [pair.higher for pair in settlement.pairs] == ["ann", "bob", "cid", "dan"]
    assert all(pair.separation >= 0.95 for pair in settlement.pairs)
    # the ranking it stopped on is the leaderboard's, computed from scratch by rate()
    board = rate(list(STRENGTHS), final.schedule, stored)
    assert [s.entrant for s in board.standings] == ["ann", "bob", "cid", "dan", "eve"]
    assert settlement.line().startswith(f"ranking settled after {settlement.batches} batches")


def test_tables_go_to_the_pairs_least_separated():
    """Ann is far ahead; bob and cid are close: after the first batch, tables go to the close pairs."""
    strengths = {"ann": 90, "bob": 31, "cid": 30, "dan": 0}
    final, _ = settle(strengths, Settling(max_matches=120, batch_tables=2), noise=4)
    later = [m.entrants for m in final.schedule if m.round > 2]
    assert later
    assert sum("ann" in seats for seats in later) < sum({"bob", "cid"} <= set(seats) for seats in later)


def test_equal_entrants_play_to_max_matches_unless_a_margin_settles_them():
    twins = {"ann": 0, "bob": 0, "cid": 0}
    capped, _ = settle(twins, Settling(max_matches=60, batch_tables=2), noise=20)
    assert capped.settlement.stop is Stop.CAPPED
    assert 60 - 2 < len(capped.schedule) <= 60  # a batch never takes it past the cap
    margin, _ = settle(twins, Settling(max_matches=2000, batch_tables=2, margin=6.0), noise=20)
    assert margin.settlement.stop is Stop.SETTLED
    assert all(max(pair.separation, pair.equal) >= 0.95 for pair in margin.settlement.pairs)
    assert any(pair.equal >= 0.95 for pair in margin.settlement.pairs)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_schedule_depends_on_the_results_not_on_the_order_they_were_stored(players):
    settling = Settling(max_matches=300, batch_tables=3)
    one, stored = settle(STRENGTHS, settling, players)
    other, _ = settle(STRENGTHS, settling, players, shuffle=random.Random(players))
    assert one.schedule == other.schedule
    # every table: all its seatings, one seed, a unique id naming its batch
    seen = set()
    for table in tables(one.schedule):
        assert len(table) == {2: 2, 3: 6, 4: 12}[players]
        assert len({m.seed for m in table}) == 1
        assert table[0].table_id not in seen
        assert table[0].table_id.startswith(f"b{table[0].round}")
        seen.add(table[0].table_id)
    assert len({m.match_id for m in one.schedule}) == len(one.schedule)
    # batch 1 seats everybody
    assert {name for m in one.schedule if m.round == 1 for name in m.entrants} == set(STRENGTHS)
    # a read-only command with the stored results sees the same plan
    again = plan(7, list(STRENGTHS)[::-1], players, Seating.BALANCED, RatingMode.DUPLICATE, settling, stored)
    assert again == one


def test_a_batch_is_chosen_from_the_earlier_batches_only_and_once_they_are_complete():
    settling = Settling(max_matches=400, batch_tables=2)
    final, stored = settle(STRENGTHS, settling, noise=60)
    last = final.settlement.batches
    assert last >= 3

    def planned(results):
        return plan(7, list(STRENGTHS), 2, Seating.BALANCED, RatingMode.DUPLICATE, settling, results)

    # other results in the last batch change nothing before it, nor the choice of it
    flipped = dict(stored)
    for scheduled in final.schedule:
        if scheduled.round == last:
            flipped[scheduled.match_id] = result(scheduled, {name: -s for name, s in STRENGTHS.items()}, 0)
    assert planned(flipped).schedule[: len(final.schedule)] == final.schedule
    # one match of batch 2 missing: the plan stops there, playing; nothing of batch 3 is chosen
    gap = next(m for m in final.schedule if m.round == 2)
    without = {key: value for key, value in stored.items() if key != gap.match_id}
    waiting = planned(without)
    assert waiting.settlement.stop is Stop.PLAYING
    assert waiting.settlement.batches == 2
    assert max(m.round for m in waiting.schedule) == 2
    assert waiting.schedule == tuple(m for m in final.schedule if m.round <= 2)
    # a void match does not complete its batch either
    void = StoredMatch(*[getattr(stored[gap.match_id], f) for f in StoredMatch.__slots__])
    object.__setattr__(void, "status", MatchStatus.VOID)
    assert planned({**without, gap.match_id: void}).schedule == waiting.schedule
    # and other results in batch 1 do change what comes later
    reversed_ = {k: result(m, {n: -s for n, s in STRENGTHS.items()}, 0) for k, m in _by_id(final, 1).items()}
    assert planned({**stored, **reversed_}).schedule != final.schedule


def _by_id(final: Plan, batch: int) -> dict[str, ScheduledMatch]:
    return {m.match_id: m for m in final.schedule if m.round == batch}


def test_another_seed_chooses_other_tables():
    settling = Settling(max_matches=300, batch_tables=2)
    one, _ = settle(STRENGTHS, settling, 4, seed=1)
    two, _ = settle(STRENGTHS, settling, 4, seed=2)
    assert {m.match_id for m in one.schedule} != {m.match_id for m in two.schedule}


LEAGUE = """\
name: Settling
seed: 3
players: 4
schedule:
  {schedule}
entrants:
  - {{name: a, module: "sample_bots.random_bot:RandomBot"}}
  - {{name: b, module: "sample_bots.random_bot:RandomBot"}}
  - {{name: c, module: "sample_bots.random_bot:RandomBot"}}
  - {{name: d, module: "sample_bots.random_bot:RandomBot"}}
  - {{name: e, module: "sample_bots.random_bot:RandomBot"}}
"""


def write(tmp_path, schedule: str):
    path = tmp_path / "league.yaml"
    path.write_text(LEAGUE.format(schedule=schedule.replace("\n", "\n  ")), encoding="utf-8")
    return path


def test_the_standings_are_the_plan_rated_once(tmp_path):
    """``results/reading.standings`` plans an until: settled league once, for both its schedule and its
    settlement, and rates that schedule as the leaderboard does; a fixed schedule has no settlement."""
    league = load_league(write(tmp_path, "until: settled\nmax_matches: 100"), check_commands=False)
    strengths = dict(zip("abcde", (40, 30, 20, 10, 0), strict=True))
    stored: dict[str, StoredMatch] = {}
    while missing := [m for m in standings(league, 3, stored).schedule if m.match_id not in stored]:
        stored.update((m.match_id, result(m, strengths, 5)) for m in missing)
    read, planned = standings(league, 3, stored), plan_of(league, 3, stored)
    assert read.stored is stored
    assert (read.schedule, read.settlement) == (planned.schedule, planned.settlement)
    assert read.settlement.stop is not Stop.PLAYING
    expected = rate("abcde", planned.schedule, stored, league.rating)
    assert [s.to_dict() for s in read.board.standings] == [s.to_dict() for s in expected.standings]
    assert read.board.history == expected.history
    fixed = load_league(write(tmp_path, "seating: cyclic"), check_commands=False)
    assert standings(fixed, 3, {}).schedule == schedule_of(fixed, 3)
    assert standings(fixed, 3, {}).settlement is None


def test_the_league_keys_and_their_defaults(tmp_path):
    league = load_league(write(tmp_path, "until: settled"), check_commands=False)
    assert league.settling == Settling(max_matches=5 * 12, batch_tables=2)  # a round robin's size at most
    given = "until: settled\nmax_matches: 100\nbatch_tables: 3\nconfidence: 0.9\nmargin: 2"
    league = load_league(write(tmp_path, given), check_commands=False)
    assert league.settling == Settling(100, 3, 0.9, 2.0)
    assert load_league(write(tmp_path, "seating: cyclic"), check_commands=False).settling is None


@pytest.mark.parametrize(
    ("schedule", "line", "message"),
    [
        ("max_matches: 50", 5, r"schedule\.max_matches: only for until: settled"),
        ("until: settled\nrounds: 2", 6, r"schedule\.rounds: until: settled plays batches"),
        ("until: settled\nmax_matches: 23", 6, r"schedule\.max_matches: the first batch, .* is 24 matches"),
        ("until: settled\nconfidence: 1.5", 6, r"schedule\.confidence: Input should be less than 1"),
        ("until: sometime", 5, r"schedule\.until: Input should be 'complete' or 'settled'"),
    ],
)
def test_bad_keys_are_one_line_naming_file_line_and_key(tmp_path, schedule, line, message):
    path = write(tmp_path, schedule)
    with pytest.raises(LeagueError, match=message) as caught:
        load_league(path, check_commands=False)
    text = str(caught.value)
    assert text.startswith(f"{path}:{line}: schedule.")
    assert "\n" not in text
