"""Matches between real bot processes over real gRPC on loopback, well-behaved and not."""

import asyncio
import json
import sys
import time

import grpc
import pytest

from pyramid_sdk import Match, Rules
from pyramid_sdk.bot import TimeControl
from pyramid_sdk.handshake import PROTOCOL_VERSION
from pyramid_sdk.stream import ENV_STREAM
from pyramid_sdk.transport import grpcio_checked
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import pyramid_pb2_grpc as pb_grpc
from referee.match import server as referee_server
from referee.match.bots import BotSpec
from referee.match.faults import FaultKind, FaultPolicy
from referee.match.outcome import MatchStatus
from referee.match.playing import LocalSeat, play_match
from referee.match.server import create_server
from referee.match.sessions import SessionRegistry
from referee.match.setup import open_table
from sample_bots.heuristic import HeuristicBot
from sample_bots.montecarlo import MonteCarloBot
from sample_bots.random_bot import RandomBot
from support import ROOT
from support.arena import FAST, RANDOM, assert_no_unknown_cards, assert_played_as, misbehaving, play


@pytest.mark.parametrize("players", [2, 3, 4])
def test_full_match_of_random_bot_processes(players):
    outcome, sent = play([RANDOM] * players, seed=100 + players, record_messages=True)
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    assert outcome.faults == ()
    record = outcome.record
    assert record.complete
    assert len(record.deals) == 16 * players
    assert Match.replay(record).record() == record
    for seat in range(players):
        assert_played_as(record, seat, RandomBot())
        assert assert_no_unknown_cards(record, seat, sent[seat]) > 16
    kinds = [m.WhichOneof("kind") for m in sent[0]]
    assert kinds[0] == "match_start"
    assert kinds[-1] == "match_end"
    reported = [
        m
        for m in sent[0]
        if m.WhichOneof("kind") in ("action_request", "match_end")
        and getattr(m, m.WhichOneof("kind")).HasField("last_deal")
    ]
    assert len(reported) == 16 * players  # every deal's end reaches the bot, the last one with the match end


@pytest.mark.parametrize("stream", ["", "asyncio"])
def test_a_python_bots_hooks_see_every_deal_end_and_the_match_end(tmp_path, monkeypatch, stream):
    """On either of the SDK's streams (the bots inherit the referee's environment)."""
    monkeypatch.setenv(ENV_STREAM, stream)
    outcome, _ = play([f"{sys.executable} tests/bots/hooks.py", RANDOM], seed=7, log_dir=tmp_path)
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    log = (tmp_path / "seat0.log").read_text(encoding="utf-8").splitlines()
    seen = [json.loads(line.removeprefix("HOOK ")) for line in log if line.startswith("HOOK ")]
    assert [entry["hook"] for entry in seen] == ["match_start"] + ["deal_end"] * 32 + ["match_end"]
    one_thread = stream == "" and grpcio_checked()
    assert (seen[0]["threads"] == 1) is one_thread
    deals = outcome.record.deals
    for entry, deal in zip(seen[1:-1], deals, strict=True):
        played = [[card.code for card in trick.cards] for trick in deal.tricks]
        assert (entry["deal"], entry["tricks"]) == (deal.number, played)
    assert seen[-2]["phase"] == "match-over"
    assert seen[-2]["totals"] == seen[-1]["totals"] == list(outcome.record.totals)


def test_the_heuristic_and_monte_carlo_bots_play_as_processes():
    """Each plays exactly as its in-process twin would: the sampling bot at a fixed number of worlds is
    deterministic for a given match seed, whatever the machine's speed: its clock (10 s an action) leaves
    its 5 s budget whole, so that a loaded machine cannot cut a decision short of the 8 worlds."""
    commands = [
        f"{sys.executable} sample_bots/heuristic.py",
        f"{sys.executable} sample_bots/montecarlo.py --budget 5 --samples 8",
    ]
    slow_clock = TimeControl(per_action=10.0, bank=300.0)
    outcome, _ = play(commands, seed=11, rules=Rules(players=2, talk="open"), time_control=slow_clock)
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    assert outcome.faults == ()
    assert_played_as(outcome.record, 0, HeuristicBot())
    assert_played_as(outcome.record, 1, MonteCarloBot(budget=5, samples=8))


@pytest.mark.parametrize(
    ("behaviour", "kind", "detail"),
    [
        ("sleep", FaultKind.TIMEOUT, "no answer within"),
        ("illegal", FaultKind.ILLEGAL_ACTION, "not in the seat's hand"),
        ("wrong-id", FaultKind.MALFORMED, "which the referee never sent"),
        ("oversized", FaultKind.MALFORMED, "bytes; the limit is"),
        ("flood-talk", FaultKind.TALK, "talk"),
        ("flood", FaultKind.MALFORMED, "reply to request 0, which the referee never sent"),
        ("crash", FaultKind.DISCONNECT, "exited with code 3; its last output: 'crashing on purpose'"),
        ("segv", FaultKind.DISCONNECT, "; it was killed by SIGSEGV"),
        ("wrong-token", FaultKind.DISCONNECT, "exited with code 1 before connecting"),
        ("silent", FaultKind.DISCONNECT, "before connecting"),
    ],
)
def test_a_misbehaving_bot_faults_forfeits_and_the_match_completes(behaviour, kind, detail, tmp_path):
    commands = [misbehaving(behaviour), RANDOM, RANDOM]
    outcome, sent = play(
        commands, seed=5, time_control=FAST, record_messages=True, absent_ok=True, log_dir=tmp_path
    )
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    record = outcome.record
    assert record.complete
    assert Match.replay(record).record() == record
    faults = [f for f in outcome.faults if f.seat == 0]
    assert faults, "the misbehaving seat has no fault"
    assert {f.kind for f in faults} == {kind}
    assert all(detail in f.detail for f in faults)
    assert record.forfeits == (0,)
    assert max(record.ranks[1:]) < record.ranks[0] == 3
    for seat in (1, 2):  # the well-behaved seats: no fault, and exactly the play of their own bot
        assert not [f for f in outcome.faults if f.seat == seat]
        assert_played_as(record, seat, RandomBot())
        assert_no_unknown_cards(record, seat, sent[seat])
    assert_no_unknown_cards(record, 0, sent[0])
    notices = [[m.notice.text for m in messages if m.WhichOneof("kind") == "notice"] for messages in sent]
    assert notices[1] == notices[2] == []
    if kind is not FaultKind.DISCONNECT:  # a bot still connected is told of each fault, and of its forfeit
        assert len(notices[0]) == len(faults)
        assert all(f"({kind})" in text and detail in text for text in notices[0])
        assert "forfeits" in notices[0][-1]


def test_a_bot_that_floods_stray_messages_is_cut_off(tmp_path):
    outcome, _ = play([misbehaving("flood"), RANDOM], time_control=FAST, log_dir=tmp_path)
    assert outcome.status is MatchStatus.COMPLETE
    assert len([f for f in outcome.faults if f.seat == 0]) == 3  # then it forfeits; the rest is not recorded
    log = (tmp_path / "seat0.log").read_text()
    received = log.split("received: ")[1].split()
    assert "match_end" not in received  # the referee closed the stream after 200 stray messages
    assert "stream ended: RESOURCE_EXHAUSTED: more than 200 stray messages" in log  # and said why


def test_wrong_token_is_refused_with_unauthenticated(tmp_path):
    play([misbehaving("wrong-token"), RANDOM], time_control=FAST, absent_ok=True, log_dir=tmp_path)
    assert "UNAUTHENTICATED" in (tmp_path / "seat0.log").read_text()


def test_silent_connection_is_dropped_after_the_hello_deadline(tmp_path):
    play([misbehaving("silent"), RANDOM], time_control=FAST, absent_ok=True, log_dir=tmp_path)
    assert "DEADLINE_EXCEEDED: no hello within 1s" in (tmp_path / "seat0.log").read_text()


def test_faults_below_the_limit_do_not_forfeit():
    outcome, sent = play(
        [misbehaving("sleep"), RANDOM], seed=9, time_control=FAST, max_faults=100, record_messages=True
    )
    assert outcome.record.forfeits == ()
    # Three 2 s naps; the requests that queue up behind a nap time out too, then the bot catches up and
    # plays the rest of the match cleanly.
    timeouts = [f for f in outcome.faults if f.kind is FaultKind.TIMEOUT]
    assert len(timeouts) == len(outcome.faults) >= 3
    assert max(f.deal for f in timeouts) <= 3
    assert outcome.record.complete
    # The first nap spends the whole bank, and every later request says so.
    banks = [m.action_request.bank_ms for m in sent[0] if m.WhichOneof("kind") == "action_request"]
    assert banks[0] == 1000
    assert banks[-1] == 0
    assert banks == sorted(banks, reverse=True)


class _Napper(RandomBot):
    """Takes 0.35 s over each of its first six cards."""

    def __init__(self) -> None:
        super().__init__()
        self.naps = 6

    def play(self, obs):
        if self.naps:
            self.naps -= 1
            time.sleep(0.35)
        return super().play(obs)


def test_a_bot_that_thinks_long_keeps_its_connection(monkeypatch):
    """The SDK reads a bot's socket only while the bot waits, so the referee must send it nothing that
    needs an answer meanwhile. With any ping left unanswered for 1 s cutting the connection, a bot that
    thinks 2 s three times still plays the whole match without a fault."""
    strict = (
        ("grpc.http2.ping_timeout_ms", 1000),
        ("grpc.keepalive_timeout_ms", 1000),
        ("grpc.http2.max_pings_without_data", 0),
    )
    options = (*referee_server.SERVER_OPTIONS, *strict)
    monkeypatch.setattr(referee_server, "SERVER_OPTIONS", options)
    outcome, _ = play([misbehaving("sleep"), RANDOM], seed=9, time_control=TimeControl(3.0, 10.0))
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    assert outcome.faults == ()
    assert max(outcome.latencies[0]) > 2.0


def test_time_over_the_limit_is_charged_to_the_bank_until_it_runs_out():
    control = TimeControl(per_action=0.05, bank=1.0)
    seats = [LocalSeat(_Napper(), "napper"), LocalSeat(RandomBot(), "quick")]
    outcome = asyncio.run(
        play_match(seats, Rules(players=2), 3, time_control=control, fault_policy=FaultPolicy(100))
    )
    # Replay the bank from the measured times: a decision times out exactly when it took longer than
    # the limit plus what was left in the bank, and everything over the limit is charged to the bank.
    bank, expected = control.bank, []
    for number, elapsed in enumerate(outcome.latencies[0]):
        if elapsed > control.per_action + bank:
            expected.append(number)
        bank = max(0.0, bank - max(0.0, elapsed - control.per_action))
    faults = [f for f in outcome.faults if f.seat == 0]
    assert [f.kind for f in faults] == [FaultKind.TIMEOUT] * len(expected)
    naps = [number for number, elapsed in enumerate(outcome.latencies[0]) if elapsed >= 0.35]
    assert len(naps) == 6
    assert expected
    assert expected == naps[-len(expected) :]  # the first naps fit in the bank, the last ones do not
    assert naps[0] not in expected
    assert bank == 0.0
    assert not [f for f in outcome.faults if f.seat == 1]


def test_rules_variants_travel_to_the_bots():
    rules = Rules(players=2, trick_winner="highest-rank", talk="off")
    outcome, sent = play([RANDOM, RANDOM], rules=rules, record_messages=True)
    assert outcome.faults == ()
    start = sent[1][0].match_start
    assert start.rules.players == 2
    assert start.seat == 1
    assert list(start.seat_names) == ["seat0", "seat1"]
    assert_played_as(outcome.record, 1, RandomBot())


@pytest.mark.quick
def test_handshake_refusals_carry_the_right_status():
    async def attempt(hello: pb.Hello) -> grpc.StatusCode:
        registry = SessionRegistry()
        registry.expect("good-token")
        server, port = await create_server(registry, hello_timeout=1.0)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = pb_grpc.RefereeServiceStub(channel).Connect()
                await call.write(pb.ConnectRequest(hello=hello))
                try:
                    await call.read()
                    await call.read()
                except grpc.aio.AioRpcError as exc:
                    return exc.code()
                return grpc.StatusCode.OK
        finally:
            await server.stop(None)

    def hello(**fields):
        return pb.Hello(**{"protocol_version": PROTOCOL_VERSION, "token": "good-token", **fields})

    assert asyncio.run(attempt(hello(protocol_version=2))) is grpc.StatusCode.FAILED_PRECONDITION
    assert asyncio.run(attempt(hello(token="bad"))) is grpc.StatusCode.UNAUTHENTICATED
    assert asyncio.run(attempt(hello(token=""))) is grpc.StatusCode.UNAUTHENTICATED


class _BrokenSeat(LocalSeat):
    """A seat whose referee-side code fails mid-match: the match is void, not the bot's fault."""

    async def deal_end(self, obs):
        if obs.deal_number == 3:
            raise RuntimeError("disk full")


@pytest.mark.quick
def test_a_referee_side_failure_makes_the_match_void():
    seats = [_BrokenSeat(RandomBot(), "a"), LocalSeat(RandomBot(), "b")]
    outcome = asyncio.run(play_match(seats, Rules(players=2), 1))
    assert outcome.status is MatchStatus.VOID
    assert "RuntimeError: disk full" in outcome.void_reason
    assert outcome.faults == ()
    assert not outcome.record.complete
    assert len(outcome.record.deals) == 3


def test_late_replies_from_one_match_never_answer_the_next_on_the_same_connection():
    specs = [
        BotSpec.parse(command, name=f"seat{i}", cwd=ROOT)
        for i, command in enumerate([misbehaving("sleep"), RANDOM])
    ]

    async def two_matches():
        async with open_table(specs) as seats:
            first = await play_match(seats, Rules(players=2), 1, time_control=FAST)
            second = await play_match(
                seats, Rules(players=2), 2, time_control=FAST
            )  # the bot is still asleep
            return first, second

    first, second = asyncio.run(two_matches())
    assert first.record.forfeits == (0,)
    # Whatever the sleeper answers late in the second match was asked in the first: never applied there.
    assert {f.kind for f in second.faults if f.seat == 0} <= {FaultKind.TIMEOUT}
    assert second.status is MatchStatus.COMPLETE
    assert_played_as(second.record, 1, RandomBot())
