"""One wrong message costs at most one fault and never the pending request (issue #24, item 3): real bot
processes over real gRPC, and the real CLI for what the organiser sees."""

from pyramid_sdk import Bot, Card, Declare, Observation, Play
from referee.match.faults import FaultKind
from referee.match.outcome import MatchStatus
from referee.match.sessions import MAX_NOTES, MAX_VIOLATIONS
from sample_bots.random_bot import RandomBot
from support import ROOT
from support.arena import FAST, RANDOM, assert_played_as, misbehaving, play
from support.cli import referee


class FirstLegal(Bot):
    """Chooses as tests/bots/misbehaving.py's raw clients do when they reply with the first legal action."""

    def declare(self, obs: Observation) -> Declare:
        return obs.legal_declarations[0]

    def play(self, obs: Observation) -> Card | Play:
        return obs.legal_cards[0]


class LastLegal(Bot):
    """Chooses the last legal action, which the referee's default never is in these matches' checks."""

    def declare(self, obs: Observation) -> Declare:
        return obs.legal_declarations[-1]

    def play(self, obs: Observation) -> Card | Play:
        return obs.legal_cards[-1]


def notices(messages):
    return [m.notice.text for m in messages if m.WhichOneof("kind") == "notice"]


def requests(messages):
    return [m.action_request for m in messages if m.WhichOneof("kind") == "action_request"]


def test_a_stale_reply_before_the_right_one_is_dropped_and_the_right_one_counts():
    """Before every reply but its first, the bot sends the previous request's reply again: each is a
    late reply to a decided request, dropped without a fault, and the right reply that follows answers
    the request still pending. (Before, each stale reply was a fault that took the pending request with
    it, and the right reply then landed on the next request as a second fault.)"""
    outcome, sent = play(
        [misbehaving("stale"), RANDOM, RANDOM], seed=21, time_control=FAST, record_messages=True
    )
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    assert outcome.faults == ()
    assert outcome.record.forfeits == ()
    assert_played_as(outcome.record, 0, LastLegal())  # every decision is the bot's own, none a default
    for seat in (1, 2):
        assert_played_as(outcome.record, seat, RandomBot())
    asked = requests(sent[0])
    assert len(asked) > MAX_NOTES
    # The bot is told which replies were dropped (the first few: it learns the pattern from them).
    assert notices(sent[0]) == [
        f"dropped a reply to request {number}: that request was already decided"
        for number in range(1, MAX_NOTES + 1)
    ]


def test_a_reply_to_a_request_never_sent_costs_one_fault_and_the_pending_request_stays_pending():
    """Before every right reply, one with an id the referee never sent: one malformed fault each, no
    timeout, and the right reply still answers its request, until the 201st such message closes the
    stream (the flood limit: a disconnect)."""
    outcome, sent = play(
        [misbehaving("wrong-id"), RANDOM], seed=5, time_control=FAST, max_faults=1000, record_messages=True
    )
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    faults = [f for f in outcome.faults if f.seat == 0]
    asked = requests(sent[0])
    assert [f.kind for f in faults[:MAX_VIOLATIONS]] == [FaultKind.MALFORMED] * MAX_VIOLATIONS
    assert [f.detail for f in faults[:MAX_VIOLATIONS]] == [
        f"reply to request {request.request_id + 1000}, which the referee never sent"
        for request in asked[:MAX_VIOLATIONS]
    ]
    assert faults[MAX_VIOLATIONS].kind is FaultKind.DISCONNECT
    assert faults[MAX_VIOLATIONS].detail.startswith(f"more than {MAX_VIOLATIONS} stray messages")
    assert_played_as(outcome.record, 0, FirstLegal(), decisions=MAX_VIOLATIONS)


def test_bytes_that_do_not_decode_cost_one_fault_and_the_right_reply_that_follows_counts():
    outcome, _ = play([misbehaving("garbage"), RANDOM], seed=6, time_control=FAST, record_messages=True)
    assert [f.kind for f in outcome.faults] == [FaultKind.MALFORMED] * 2
    assert_played_as(outcome.record, 0, FirstLegal())
    assert outcome.record.forfeits == ()


def test_a_second_hello_is_refused_shown_to_the_organiser_and_the_bot_and_costs_one_fault(tmp_path):
    outcome, sent = play(
        [misbehaving("second-hello"), RANDOM], seed=8, time_control=FAST, record_messages=True
    )
    assert outcome.status is MatchStatus.COMPLETE
    assert [(f.kind, f.detail) for f in outcome.faults] == [
        (FaultKind.MALFORMED, "a second hello on this stream, refused: a bot says hello once")
    ]
    assert_played_as(outcome.record, 0, LastLegal())  # its third request was answered all the same
    told = notices(sent[0])
    assert told[0].startswith("hello refused: this stream said hello already (session s")
    assert told[1] == f"fault 1 of 3 (malformed): {outcome.faults[0].detail}"
    # The organiser sees the refusal, as the refusals of replayed tokens: `referee match` logs it.
    result = referee("match", misbehaving("second-hello"), "sample_bots.random_bot:RandomBot", "--seed", "8")
    assert result.returncode == 0, result.stdout + result.stderr
    refusals = [line for line in result.stderr.splitlines() if "refused: " in line]
    assert len(refusals) == 1, result.stderr
    assert refusals[0].endswith(
        "(bot name 'raw', second hello's bot name 'raw'): a bot says hello once per stream"
    )
    assert "WARNING referee.match.sessions: refused: a second hello on the stream of session s" in refusals[0]
    faults = [line for line in result.stdout.splitlines() if line.startswith("fault: ")]
    assert len(faults) == 1
    assert faults[0].endswith(" malformed: a second hello on this stream, refused: a bot says hello once")


def test_referee_run_lists_a_second_hello_among_its_refusals(tmp_path):
    league = tmp_path / "league.yaml"
    league.write_text(
        f"""\
name: Hellos
seed: 4
players: 2
schedule: {{format: round-robin, rounds: 1, seating: balanced}}
database: results.sqlite
entrants:
  - name: hello-twice
    command: python tests/bots/misbehaving.py second-hello
    cwd: {ROOT}
  - name: random
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
""",
        encoding="utf-8",
    )
    result = referee("run", league)
    assert result.returncode == 0, result.stderr
    refusals = [line for line in result.stderr.splitlines() if line.startswith("refused: ")]
    assert len(refusals) == 2, result.stderr  # one in each of its two matches
    assert all("a second hello on the stream of session s" in line for line in refusals)
    log = (tmp_path / "results-logs" / "referee.log").read_text(encoding="utf-8")
    assert log.count("WARNING referee.match.sessions: refused: a second hello") == 2
