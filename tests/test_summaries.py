"""The per-match summaries that the read commands use instead of decoding every deal (issue #25) agree
with the decoded matches, on a real league played by real bot processes through the real CLI: one that
forfeits every match, one that faults, two honest ones (the session's shared quitter league,
tests/support/leagues.py). And a database from before the summaries (no
``summaries`` table) reads exactly the same, writes nothing when read, and gets its summaries from the
next run.
"""

import contextlib
import sqlite3
from pathlib import Path

from referee.league.config import load_league
from referee.league.planning import schedule_of
from referee.report.crosstable import crosstable
from referee.report.text import matches_text
from referee.results.disclosure import disclosure
from referee.results.reading import open_results, standings
from support.cli import referee
from support.leagues import copy_league

READS = (("leaderboard", "--crosstable"), ("leaderboard", "--format", "json"), ("matches",), ("export",))


def read(path: Path):
    """The league with its results opened read-only, as the read commands open them."""
    store, league, seed = open_results(load_league(path, check_commands=False), str(path))
    return store, league, seed


def test_the_summaries_agree_with_the_decoded_matches(quitter_league):
    store, loaded, seed = read(quitter_league.path)
    try:
        summaries, whole = store.summaries(), store.matches()
        stored_rows = store.db.execute("SELECT count(*) FROM summaries").fetchone()[0]
    finally:
        store.close()
    assert stored_rows == len(whole) == 24  # each written with its match, none left to compute
    assert summaries == {match_id: match.summary for match_id, match in whole.items()}
    assert list(summaries) == list(whole)
    assert any(summary.forfeits for summary in summaries.values())
    floaty = [s for s in summaries.values() if "floaty" in s.seats]
    assert all(s.fault_seats.count(s.seats.index("floaty")) > 0 for s in floaty)

    schedule = schedule_of(loaded, seed, whole)
    board, expected = standings(loaded, seed, summaries).board, standings(loaded, seed, whole).board
    assert [s.to_dict() for s in board.standings] == [s.to_dict() for s in expected.standings]
    assert board.history == expected.history
    by_name = {standing.entrant: standing for standing in board.standings}
    assert by_name["quitter"].forfeits == by_name["quitter"].matches == 12
    assert by_name["floaty"].faults > 0
    assert by_name["heuristic"].declarations > 0
    order = [standing.entrant for standing in board.standings]
    assert crosstable(order, schedule, summaries) == crosstable(order, schedule, whole)
    assert matches_text(schedule, summaries) == matches_text(schedule, whole)
    assert matches_text(schedule, summaries, "floaty", "complete") == matches_text(
        schedule, whole, "floaty", "complete"
    )
    assert disclosure(schedule, summaries) == disclosure(schedule, whole)


def test_a_database_without_summaries_reads_the_same_and_the_next_run_fills_them_in(quitter_league, tmp_path):
    league = quitter_league.path
    expected = {args: referee(args[0], league, *args[1:]) for args in READS}
    assert all(result.returncode == 0 for result in expected.values()), expected
    old = copy_league(league, tmp_path)  # the shared league stays as it was played
    database = old.with_suffix(".sqlite")
    with contextlib.closing(sqlite3.connect(database)) as db, db:  # as a referee before summaries wrote it
        db.execute("DROP TABLE summaries")  # closed: the last connection puts the change in the file itself
    before = database.read_bytes()

    for args in READS:
        result = referee(args[0], old, *args[1:])
        assert result.returncode == 0, result.stderr
        assert result.stdout == expected[args].stdout
    assert database.read_bytes() == before  # reading wrote nothing, not even the table

    run = referee("run", old)  # nothing to play: it only opens the database to write, and fills it in
    assert run.returncode == 7, run.stderr
    store, _, _ = read(old)
    try:
        rows = store.db.execute("SELECT count(*) FROM summaries").fetchone()[0]
        filled = store.summaries()
    finally:
        store.close()
    original, _, _ = read(league)
    try:
        assert filled == original.summaries()
    finally:
        original.close()
    assert rows == len(filled) == 24
    for args in READS:
        assert referee(args[0], old, *args[1:]).stdout == expected[args].stdout
