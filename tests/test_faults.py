"""A fault's detail is one short line, whoever made it: the rule is kept by Fault itself."""

import asyncio

from pyramid_sdk import Rules
from referee.match.faults import MAX_DETAIL, Fault, FaultKind
from referee.match.outcome import MatchStatus
from referee.match.playing import LocalSeat, play_match
from sample_bots.random_bot import RandomBot


def test_a_fault_detail_is_made_one_line_of_bounded_length():
    text = "Traceback (most recent call last):\r\n  File x\n\nValueError: boom\n"
    fault = Fault(0, 1, FaultKind.MALFORMED, text)
    assert fault.detail == "Traceback (most recent call last): | File x | ValueError: boom"
    long = Fault(0, 1, FaultKind.MALFORMED, "y" * 1000 + "\u2028z\x00")
    assert len(long.detail) == MAX_DETAIL
    assert long.detail.endswith("…")
    odd = Fault(0, 1, FaultKind.TALK, "a\u2028b\x00c\x1bd\te")
    assert odd.detail == "a | b?c?d?e"
    assert Fault(0, 1, FaultKind.TALK, odd.detail) == odd  # stored and loaded again, it is unchanged


class _Raiser(RandomBot):
    """Raises an exception whose message spans lines, as a bot's error text often does."""

    def play(self, obs):
        raise ValueError("first line\nsecond line\n" + "x" * 500)


def test_an_in_process_bot_raising_a_multi_line_error_gets_a_one_line_fault():
    seats = [LocalSeat(_Raiser(), "raiser"), LocalSeat(RandomBot(), "random")]
    outcome = asyncio.run(play_match(seats, Rules(players=2), 3))
    assert outcome.status is MatchStatus.COMPLETE
    details = [fault.detail for fault in outcome.faults]
    assert details
    assert all("\n" not in detail and len(detail) <= MAX_DETAIL for detail in details)
    assert details[0].startswith("the bot raised ValueError: first line | second line | xxx")
