"""The match runner's debug lines with in-process bots: each answer's text lands at its deal and step,
the caps refuse a text whole and cost no fault, and the lines never change the play."""

from __future__ import annotations

import asyncio

from pyramid_sdk import Rules
from pyramid_sdk.actions import Declare
from pyramid_sdk.cards import Card
from pyramid_sdk.debugging import MAX_DEBUG_BYTES, MAX_DEBUG_PER_MATCH
from pyramid_sdk.observation import Observation
from referee.match.debug import DebugBook, DebugFate
from referee.match.outcome import MatchOutcome
from referee.match.playing import LocalSeat, play_match
from sample_bots.random_bot import RandomBot


class Counter(RandomBot):
    """Writes, with each answer, how many actions of the deal it has seen before it: its step less one.
    ``size`` pads the line to that many bytes, and the first answer also carries a lone surrogate."""

    def __init__(self, size: int = 0) -> None:
        super().__init__()
        self.size = size
        self.answers = 0

    def _note(self, obs: Observation) -> None:
        self.answers += 1
        seen = (obs.declaration is not None) + sum(len(t.cards) for t in obs.tricks)
        text = f"seen {seen + len(obs.current_trick.cards)}" + ("\ud800" if self.answers == 1 else "")
        self.debug(text.ljust(self.size, "x"))

    def declare(self, obs: Observation) -> Declare:
        self._note(obs)
        return super().declare(obs)

    def play(self, obs: Observation) -> Card:
        self._note(obs)
        return super().play(obs)


def play(first: RandomBot) -> MatchOutcome:
    seats = [LocalSeat(first, "counter"), LocalSeat(RandomBot(), "random")]
    return asyncio.run(play_match(seats, Rules(players=2), 5))


def test_each_line_lands_at_its_deal_and_step_and_the_play_is_unchanged():
    outcome = play(Counter())
    assert outcome.faults == ()
    assert len(outcome.debug) == len(outcome.latencies[0]) > 100
    assert {line.seat for line in outcome.debug} == {0}
    assert all(line.text.startswith(f"seen {line.step - 1}") for line in outcome.debug)
    assert outcome.debug[0].text == "seen 0?"  # a lone surrogate cannot be stored: "?" in its place
    assert [line.deal for line in outcome.debug] == sorted(line.deal for line in outcome.debug)
    assert outcome.record == play(RandomBot()).record


def test_a_text_over_either_cap_is_not_kept_and_costs_no_fault():
    outcome = play(Counter(size=MAX_DEBUG_BYTES + 1))
    assert outcome.faults == ()
    assert {(line.fate, line.size, line.text) for line in outcome.debug} == {
        (DebugFate.TOO_LONG, MAX_DEBUG_BYTES + 1, "")
    }
    full = play(Counter(size=1000)).debug
    kept = [line for line in full if line.fate is DebugFate.KEPT]
    assert len(kept) == MAX_DEBUG_PER_MATCH // 1000
    assert list(full[: len(kept)]) == kept
    assert {line.fate for line in full[len(kept) :]} == {DebugFate.MATCH_FULL}


def test_the_seat_is_told_of_its_first_texts_not_kept():
    book = DebugBook(players=2)
    notices = [book.take(1, 2, step, "é" * 600) for step in range(1, 9)]
    assert notices[0] == (
        "debug text of deal 2, step 1 not kept (1200 bytes): over the limit of 1024 bytes per answer; "
        "the action counts"
    )
    assert notices[4] is not None
    assert notices[4].endswith("; further ones this match are not told")
    assert notices[5:] == [None, None, None]
    assert book.take(0, 2, 9, "fine") is None  # the other seat's budget is its own
    assert [line.fate for line in book.lines][-1] is DebugFate.KEPT
