"""referee.api: matches and series from Python code, with bot objects, classes and real bot processes."""

from __future__ import annotations

import asyncio
import sys

import pytest

from pyramid_sdk import Match, Rules
from pyramid_sdk.bot import TimeControl
from referee.api import Played, Series, Text, match, series
from referee.match.outcome import MatchStatus
from sample_bots.heuristic import HeuristicBot
from sample_bots.random_bot import RandomBot
from support import ROOT
from support.arena import assert_played_as

PY = sys.executable


def test_a_match_between_a_bot_process_and_a_bot_object(tmp_path):
    played = match(
        [f"{PY} tests/bots/environment.py", HeuristicBot()], seed=11, cwd=ROOT, logs=tmp_path / "logs"
    )
    assert isinstance(played, Played)
    assert played.status is MatchStatus.COMPLETE
    assert played.faults == ()
    assert played.seats == ("environment", "heuristic")
    assert played.seed == 11
    assert Match.replay(played.record).record() == played.record
    assert_played_as(played.record, 0, RandomBot())  # the process really played seat 0, seeded as told
    assert played.totals == Match.replay(played.record).totals
    assert "ENV " in (tmp_path / "logs/environment.log").read_text()  # its stderr, kept
    text = played.deal(32)
    assert isinstance(text, Text)
    assert repr(text) == str(text)  # shows as text, not as a quoted string, in a notebook
    assert text.startswith("deal 32 of 32")
    assert len([line for line in text.splitlines() if line.startswith("trick ")]) == 6
    assert "<pre>" in text._repr_html_()
    assert "1. " in played.summary()
    with pytest.raises(ValueError, match="deals 1 to 32"):
        played.deal(33)


@pytest.mark.quick
def test_the_same_seed_deals_the_same_match_again():
    first = match([RandomBot, RandomBot, HeuristicBot], seed=5)
    again = match([RandomBot, RandomBot, HeuristicBot], seed=5)
    assert first.record == again.record
    assert first.seats == ("random", "random#2", "heuristic")
    assert len(first.record.deals) == 48


def test_a_series_rotates_the_bots_over_the_same_deals():
    result = series(
        [HeuristicBot, f"{PY} sample_bots/random_bot.py"],
        rounds=2,
        seed=3,
        cwd=ROOT,
        rules=Rules(players=2, trick_winner="highest-rank"),
        time_control=TimeControl(1.0, 20.0),
    )
    assert isinstance(result, Series)
    assert len(result.matches) == 4
    assert [played.seats for played in result.matches] == [
        ("heuristic", "random_bot"),
        ("random_bot", "heuristic"),
    ] * 2
    assert all(played.faults == () for played in result.matches)
    assert all(played.record.rules.trick_winner == "highest-rank" for played in result.matches)
    first, swapped, other, _ = result.records
    assert first.seed == swapped.seed != other.seed
    assert first.deals[0].hands == swapped.deals[0].hands  # the same cards, the seats swapped
    for name in result.names:
        assert result.totals[name] == sum(p.totals[p.seats.index(name)] for p in result.matches)
    assert sum(result.wins.values()) == 4
    assert result.totals["heuristic"] > result.totals["random_bot"]
    assert "heuristic" in result.summary().splitlines()[1]


def test_it_works_inside_a_running_event_loop_as_in_a_notebook():
    async def cell() -> Played:
        return match([RandomBot(), f"{PY} sample_bots/random_bot.py"], seed=2, cwd=ROOT)

    played = asyncio.run(cell())
    assert played.status is MatchStatus.COMPLETE
    assert played.faults == ()


@pytest.mark.quick
def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="2 to 4 bots"):
        match([RandomBot])
    with pytest.raises(TypeError, match="not a bot"):
        match([RandomBot, 42])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="no program"):
        match([RandomBot, "./nowhere/bot"], cwd=ROOT)
    with pytest.raises(ValueError, match="rounds"):
        series([RandomBot, RandomBot], rounds=0)
