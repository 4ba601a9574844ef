"""The summaries a reader keeps packed at their schedule positions read back as they were stored, and a
summary that is not of its scheduled match (another seating, another seed) is kept whole."""

from dataclasses import replace

from referee.league.schedule import build_schedule
from referee.league.summary import MatchSummary
from referee.match.outcome import MatchStatus
from referee.results.packed import PackedSummaries

SCHEDULE = build_schedule(7, ("ann", "bob", "cid", "dee"), 3, 1)


def summary_of(number: int, status: MatchStatus = MatchStatus.COMPLETE) -> MatchSummary:
    s = SCHEDULE[number]
    return MatchSummary(
        s.match_id, s.round, s.table, s.rotation, s.seed, status, s.entrants,
        (1200 + number, -40, 70_000), (1200 + number, -40, 65_000), (1, 3, 2), (1,), (14,),
        (16, 13, 16), (5, 0, 7), (1, 1, 1, 2),
    )  # fmt: skip


def test_packed_summaries_read_back_equal_and_a_snapshot_stays_as_it_was():
    packed = PackedSummaries(SCHEDULE)
    for number in (0, 3, 5):
        packed[SCHEDULE[number].match_id] = summary_of(number)
    snapshot = packed.copy()
    packed[SCHEDULE[3].match_id] = summary_of(3, MatchStatus.VOID)  # a void match's replay, say
    packed.pop(SCHEDULE[0].match_id)
    assert dict(snapshot) == {SCHEDULE[n].match_id: summary_of(n) for n in (0, 3, 5)}
    assert dict(packed) == {
        SCHEDULE[3].match_id: summary_of(3, MatchStatus.VOID),
        SCHEDULE[5].match_id: summary_of(5),
    }
    assert list(packed) == [SCHEDULE[3].match_id, SCHEDULE[5].match_id]  # in schedule order
    assert len(packed) == 2
    assert SCHEDULE[0].match_id not in packed
    assert packed.get(SCHEDULE[1].match_id) is None


def test_a_summary_not_of_its_scheduled_match_is_kept_whole():
    packed = PackedSummaries(SCHEDULE)
    other_seed = replace(summary_of(1), seed=summary_of(1).seed + 1)
    unscheduled = replace(summary_of(2), match_id="r9:zed,ann,bob", seats=("zed", "ann", "bob"))
    packed[other_seed.match_id] = other_seed
    packed[unscheduled.match_id] = unscheduled
    assert packed[other_seed.match_id] == other_seed
    assert packed[unscheduled.match_id] == unscheduled
    assert len(packed) == 2
    assert dict(packed.repacked(SCHEDULE[:1])) == dict(packed)  # another schedule: the same summaries
