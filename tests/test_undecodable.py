"""Bytes the referee cannot decode, from real bot processes over real gRPC: a malformed fault that keeps
the seat, never a broken stream that forfeits it; and a refused handshake with a one-line status."""

import asyncio
import re

import grpc
import pytest

from pyramid_sdk import Match
from pyramid_sdk.actions import Declare
from pyramid_sdk.v1 import pyramid_pb2 as pb
from referee.match.faults import FaultKind
from referee.match.outcome import MatchStatus
from referee.match.server import create_server
from referee.match.sessions import Session, SessionRegistry
from sample_bots.random_bot import RandomBot
from support.arena import FAST, RANDOM, assert_no_unknown_cards, assert_played_as, misbehaving, play


def _faults_of_seat0(outcome):
    return [f for f in outcome.faults if f.seat == 0]


def _others_undisturbed(outcome, sent):
    record = outcome.record
    assert outcome.status is MatchStatus.COMPLETE, outcome.void_reason
    assert record.complete
    assert Match.replay(record).record() == record
    for seat in (1, 2):
        assert not [f for f in outcome.faults if f.seat == seat]
        assert_played_as(record, seat, RandomBot())
        assert_no_unknown_cards(record, seat, sent[seat])


@pytest.mark.parametrize(
    ("behaviour", "count", "detail"),
    [
        ("garbage", 2, "bytes that do not decode as a ConnectRequest: Wire format was corrupt"),
        ("bad-utf8-talk", 1, "bytes that do not decode as a ConnectRequest: String field had bad UTF-8"),
    ],
)
def test_undecodable_bytes_mid_match_are_a_malformed_fault_and_the_seat_plays_on(behaviour, count, detail):
    outcome, sent = play(
        [misbehaving(behaviour), RANDOM, RANDOM], seed=21, time_control=FAST, record_messages=True
    )
    _others_undisturbed(outcome, sent)
    faults = _faults_of_seat0(outcome)
    assert [f.kind for f in faults] == [FaultKind.MALFORMED] * count
    assert all(detail in f.detail for f in faults), faults
    assert outcome.record.forfeits == ()  # a disconnect would have forfeited the seat at once
    # The bot was told, and it kept receiving requests to the end of the match.
    notices = [m.notice.text for m in sent[0] if m.WhichOneof("kind") == "notice"]
    assert len(notices) == count
    assert all("(malformed)" in text and "forfeits" not in text for text in notices)
    assert sent[0][-1].WhichOneof("kind") == "match_end"
    assert not sent[0][-1].match_end.forfeited


def test_talk_attached_to_a_declaration_is_a_talk_fault_and_the_declaration_counts():
    outcome, sent = play(
        [misbehaving("declare-talk"), RANDOM, RANDOM], seed=22, time_control=FAST, record_messages=True
    )
    _others_undisturbed(outcome, sent)
    faults = _faults_of_seat0(outcome)
    assert [f.kind for f in faults] == [FaultKind.TALK]
    assert "declaration" in faults[0].detail
    # The bot declared the last legal declaration of its first declare request; the record has it.
    first = next(
        m.action_request
        for m in sent[0]
        if m.WhichOneof("kind") == "action_request" and m.action_request.observation.phase == pb.PHASE_DECLARE
    )
    deal = outcome.record.deals[first.observation.deal_number - 1]
    assert deal.declarer == 0
    wire = first.legal_actions[-1].declare
    assert (deal.declaration.tricks, deal.declaration.trump.code) == (wire.tricks, "SHDC"[wire.trump - 1])
    assert isinstance(deal.declaration, Declare)
    assert faults[0].deal == deal.number
    assert outcome.record.forfeits == ()
    assert all(message.seat != 0 for d in outcome.record.deals for message in d.talk)


def test_garbage_as_the_first_message_is_refused_with_invalid_argument(tmp_path):
    outcome, _ = play(
        [misbehaving("garbage-hello"), RANDOM], time_control=FAST, absent_ok=True, log_dir=tmp_path
    )
    log = (tmp_path / "seat0.log").read_text()
    line = next(line for line in log.splitlines() if line.startswith("stream ended:"))
    assert line == (
        "stream ended: INVALID_ARGUMENT: the first message is no hello: "
        "26 bytes that do not decode as a ConnectRequest: Wire format was corrupt"
    )
    assert [f.kind for f in _faults_of_seat0(outcome)] == [FaultKind.DISCONNECT]
    assert "before connecting" in outcome.faults[0].detail


@pytest.mark.quick
def test_handshake_with_undecodable_bytes_gets_invalid_argument_and_one_line():
    async def attempt(data: bytes) -> tuple[grpc.StatusCode, str]:
        registry = SessionRegistry()
        registry.expect("good-token")
        server, port = await create_server(registry, hello_timeout=1.0)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                connect = channel.stream_stream(
                    "/pyramid.v1.RefereeService/Connect", request_serializer=None, response_deserializer=None
                )
                call = connect()
                await call.write(data)
                try:
                    await call.read()
                except grpc.aio.AioRpcError as exc:
                    return exc.code(), exc.details() or ""
                return grpc.StatusCode.OK, ""
        finally:
            await server.stop(None)

    hello = pb.ConnectRequest(hello=pb.Hello(protocol_version=1, token="@@")).SerializeToString()
    for data, reason in [
        (b"\xff\xff", "Wire format was corrupt"),
        (hello.replace(b"@@", b"\xc3\x28"), "String field had bad UTF-8"),
    ]:
        code, details = asyncio.run(attempt(data))
        assert code is grpc.StatusCode.INVALID_ARGUMENT
        expected = f"{len(data)} bytes that do not decode as a ConnectRequest: {reason}"
        assert details == f"the first message is no hello: {expected}"
        assert "\n" not in details


def test_a_bot_gone_before_its_first_request_is_a_disconnect_that_says_how_it_exited(tmp_path):
    outcome, _ = play(
        [misbehaving("exit-after-welcome"), RANDOM], time_control=FAST, absent_ok=True, log_dir=tmp_path
    )
    assert outcome.status is MatchStatus.COMPLETE
    faults = _faults_of_seat0(outcome)
    assert [f.kind for f in faults] == [FaultKind.DISCONNECT]
    # How it exited (its code) and its last words, whatever the launcher's wording.
    assert re.search(r"\b4\b", faults[0].detail), faults[0].detail
    assert "'leaving after the welcome'" in faults[0].detail
    assert outcome.record.forfeits == (0,)


class _Scripted:
    """A stream that says the given messages, then ends; writes go nowhere."""

    def __init__(self, messages: list[bytes]) -> None:
        self.messages = messages

    async def read(self) -> object:
        return self.messages.pop(0) if self.messages else grpc.aio.EOF

    async def write(self, message: bytes) -> None:
        pass


@pytest.mark.quick
def test_undecodable_bytes_with_no_request_pending_wait_as_a_stray_for_the_next_decision():
    async def go() -> tuple[list[str], str]:
        reply = pb.ConnectRequest(action=pb.ActionReply(request_id=9, action=pb.Action(card="AS")))
        stream = _Scripted([b"\x0a\xff", reply.SerializeToString()])
        session = Session("s1", pb.Hello(bot_name="b"), stream)  # type: ignore[arg-type]
        await session.serve()
        return session.take_violations(), session.close_reason

    violations, reason = asyncio.run(go())
    assert violations == [
        "2 bytes that do not decode as a ConnectRequest: Wire format was corrupt",
        "reply to request 9, which the referee never sent",
    ]  # the stream went on past the garbage: the next message was read too
    assert reason == "the bot closed its stream"
