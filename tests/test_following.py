"""A reader that follows the results (``referee serve``'s, ``referee run --report``'s): after each
change it reads and writes only what changed, and what it shows is always what a command reading
everything afresh shows."""

import random
import time

import pytest

from referee.league.config import load_league
from referee.league.planning import league_settings, schedule_of
from referee.match.outcome import MatchStatus
from referee.report.on_request import OnRequest
from referee.report.site import Written, rewrite_report
from referee.results.following import Follower
from referee.results.reading import standings
from referee.results.store import Store
from support.playthrough import played_outcome
from twins import league_text

FIELD = (("ann", "sample_bots.random_bot:RandomBot"), ("bob", "sample_bots.random_bot:RandomBot"))
FIELD += (("cid", "sample_bots.random_bot:RandomBot"), ("dee", "sample_bots.random_bot:RandomBot"))


@pytest.fixture
def league(tmp_path):
    path = tmp_path / "league.yaml"
    text = league_text(7, FIELD, "balanced", "duplicate", 3).replace("rounds: 1", "rounds: 2")
    path.write_text(text, encoding="utf-8")
    league = load_league(path)
    store = Store(league.database)
    store.bind(league.name, league_settings(league, league.seed), path)
    yield league, store
    store.close()


def afresh(league):
    """The standings as every command reads them: every summary, rated from the start."""
    store = Store(league.database, write=False)
    try:
        return standings(league, league.seed, store.summaries())
    finally:
        store.close()


def same(followed, fresh):
    assert followed.board == fresh.board
    assert dict(followed.stored) == dict(fresh.stored)
    assert followed.schedule == fresh.schedule


def test_a_follower_reads_each_match_once_in_any_order_of_completion(league):
    league, store = league
    schedule = schedule_of(league, league.seed)
    order = list(schedule)
    random.Random(3).shuffle(order[: len(order) // 2])  # the first half out of order, then in order
    follower = Follower(league.database)
    for scheduled in order:
        store.save(scheduled, played_outcome(scheduled, league.rules), time.time())
        same(follower.read(league, league.seed), afresh(league))
    assert follower.reads == 1  # the first read only: every later one read the new match alone


def test_a_void_match_replayed_in_its_own_row_and_deleted_matches_are_seen(league):
    league, store = league
    schedule = schedule_of(league, league.seed)
    follower = Follower(league.database)
    for scheduled in schedule[:6]:
        store.save(scheduled, played_outcome(scheduled, league.rules), time.time())
    last = schedule[6]
    store.save(last, played_outcome(last, league.rules, MatchStatus.VOID), time.time())
    read = follower.read(league, league.seed)
    assert read.stored[last.match_id].status is MatchStatus.VOID
    # the replay takes the void match's place, in the same row (the last one, deleted then inserted)
    store.save(last, played_outcome(last, league.rules), time.time())
    read = follower.read(league, league.seed)
    assert read.stored[last.match_id].status is MatchStatus.COMPLETE
    same(read, afresh(league))
    # a match of the folded prefix replaced: the ratings are folded again from the start
    first = schedule[0]
    store.save(first, played_outcome(first, league.rules, MatchStatus.VOID), time.time())
    same(follower.read(league, league.seed), afresh(league))
    assert follower.reads == 1
    store.set_versions({}, ["ann"])  # ann's new version: her matches are deleted
    read = follower.read(league, league.seed)
    same(read, afresh(league))
    assert follower.reads == 2
    assert all("ann" not in match.seats for match in read.stored.values())


def test_a_report_rewritten_after_each_match_writes_only_what_changed_and_equals_one_written_afresh(
    league, tmp_path
):
    league, store = league
    schedule = schedule_of(league, league.seed)
    table = max(sum(1 for s in schedule if s.table_id == t.table_id) for t in schedule)
    written = Written()
    for number, scheduled in enumerate(schedule):
        store.save(scheduled, played_outcome(scheduled, league.rules), time.time())
        before = written.decoded
        rewrite_report(league, league.seed, tmp_path / "kept", store, written=written)
        # the new match, and when it completes its table, the table's others (their deals now shown)
        assert written.decoded - before <= table
        if number % 5 == 4 or number == len(schedule) - 1:
            rewrite_report(league, league.seed, tmp_path / "afresh", store)
            kept = {p.name: p.read_bytes() for p in (tmp_path / "kept").iterdir()}
            assert kept == {p.name: p.read_bytes() for p in (tmp_path / "afresh").iterdir()}
    assert written.decoded < 2 * len(schedule)


def test_the_writer_keeps_the_complete_ids_as_it_saves_and_deletes(tmp_path, league):
    """The competition's store (exclusive: the one writer) reads the complete ids once and keeps them
    as it saves and deletes, so that planning after each match costs the same at any size; what it
    keeps is always what a fresh read finds: a void match, its replay, an entrant's matches deleted
    (a new version), everything forgotten (``--fresh``)."""
    league, store = league
    store.close()
    writer = Store(league.database, exclusive=True)
    try:

        def fresh() -> frozenset[str]:
            reader = Store(league.database, write=False)
            try:
                return frozenset(i for i, s in reader.summaries().items() if s.status is MatchStatus.COMPLETE)
            finally:
                reader.close()

        schedule = schedule_of(league, league.seed)
        assert writer.complete_ids() == frozenset()
        for n, scheduled in enumerate(schedule[:12]):
            status = MatchStatus.VOID if n in (3, 7) else MatchStatus.COMPLETE
            writer.save(scheduled, played_outcome(scheduled, league.rules, status), time.time())
            assert writer.complete_ids() == fresh(), n
        assert schedule[3].match_id not in writer.complete_ids()
        writer.save(schedule[3], played_outcome(schedule[3], league.rules), time.time())  # the replay
        assert schedule[3].match_id in writer.complete_ids()
        assert writer.complete_ids() == fresh()
        writer.set_versions({}, ["ann"])  # ann's matches deleted: a new version plays them again
        assert writer.complete_ids() == fresh()
        assert not any("ann" in s.entrants for s in schedule if s.match_id in writer.complete_ids())
        writer.forget(tmp_path / "backup.sqlite")
        assert writer.complete_ids() == fresh() == frozenset()
    finally:
        writer.close()


def test_pages_rendered_on_request_after_each_match_equal_the_report_written_afresh(league, tmp_path):
    """``referee serve``'s pages: rendered when asked, from the results as followed after each match,
    each equals the page ``referee report`` writes afresh, byte for byte (a new match, a table whose
    deals are now shown, an entrant's tally); asking decodes at most the new match and the rest of its
    table, and a page asked again in the same state is not rendered again."""
    league, store = league
    schedule = schedule_of(league, league.seed)
    table = max(sum(1 for s in schedule if s.table_id == t.table_id) for t in schedule)
    follower = Follower(league.database)
    report = OnRequest()
    for number, scheduled in enumerate(schedule):
        store.save(scheduled, played_outcome(scheduled, league.rules), time.time())
        read = follower.read(league, league.seed)
        before = report.decoded
        names = ["index.html", "matches.html", "entrant-ann.html", f"match-{scheduled.position + 1:04d}.html"]
        asked = {name: report.page(league, read, number, store.stream, name) for name in names}
        assert report.decoded - before <= table
        assert report.page(league, read, number, store.stream, "index.html") is asked["index.html"]
        if number % 4 == 3 or number == len(schedule) - 1:
            folder = tmp_path / f"afresh-{number}"
            rewrite_report(league, league.seed, folder, store)
            for path in folder.iterdir():  # every page, asked for now
                assert report.page(league, read, number, store.stream, path.name) == path.read_text(), (
                    path.name
                )
            for name, html in asked.items():
                assert html == (folder / name).read_text(), name
    assert report.page(league, read, "last", store.stream, "match-9999.html") is None
    assert report.page(league, read, "last", store.stream, "entrant-nobody.html") is None
