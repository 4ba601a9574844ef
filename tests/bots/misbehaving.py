"""Bots that break the rules on purpose, one behaviour per name: ``python misbehaving.py BEHAVIOUR``.

Each plays randomly (seeded like sample_bots/random_bot.py) until its misbehaviour is due, so the tests
can check that the other seats' play is exactly what it would have been against a well-behaved bot.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import sys
import time
from collections.abc import Callable, Iterator

from pyramid_sdk import transport

transport.configure()  # as in any SDK bot: before gRPC loads
# isort: split
import grpc

from pyramid_sdk.actions import Declare, Play
from pyramid_sdk.bot import Bot, MatchInfo
from pyramid_sdk.cards import DECK, Card
from pyramid_sdk.client import ENV_ADDRESS, read_token, run
from pyramid_sdk.handshake import PROTOCOL_VERSION
from pyramid_sdk.observation import Observation
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import pyramid_pb2_grpc as pb_grpc


class Seeded(Bot):
    name = "misbehaving"

    def __init__(self) -> None:
        self.rng = random.Random(0)
        self.decisions = 0

    def match_start(self, info: MatchInfo) -> None:
        self.rng = random.Random(info.seed)
        self.decisions = 0

    def declare(self, obs: Observation) -> Declare:
        self.decisions += 1
        return self.rng.choice(obs.legal_declarations)

    def play(self, obs: Observation) -> Card | Play:
        self.decisions += 1
        return self.rng.choice(obs.legal_cards)


class Sleeper(Seeded):
    """Sleeps far past its time on its first three decisions."""

    def play(self, obs: Observation) -> Card | Play:
        if self.decisions < 4:
            time.sleep(2.0)
        return super().play(obs)


class Crasher(Seeded):
    """Exits in the middle of the third deal it plays a card in."""

    def play(self, obs: Observation) -> Card | Play:
        if obs.deal_number >= 3:
            print("crashing on purpose", file=sys.stderr, flush=True)
            os._exit(3)
        return super().play(obs)


class Steady(Seeded):
    """Takes 30 ms over every decision, by the clock rather than the CPU: a bot of known speed."""

    def declare(self, obs: Observation) -> Declare:
        time.sleep(0.03)
        return super().declare(obs)

    def play(self, obs: Observation) -> Card | Play:
        time.sleep(0.03)
        return super().play(obs)


class TenthMoveQuitter(Seeded):
    """Exits on its 10th decision (issue #24: the referee's autopilot then finished its matches, and
    its points were credited to it)."""

    def declare(self, obs: Observation) -> Declare:
        self._quit_on_tenth()
        return super().declare(obs)

    def play(self, obs: Observation) -> Card | Play:
        self._quit_on_tenth()
        return super().play(obs)

    def _quit_on_tenth(self) -> None:
        if self.decisions == 9:
            print("leaving on my 10th move", file=sys.stderr, flush=True)
            os._exit(3)


class Segfaulter(Seeded):
    """Dies of SIGSEGV in the middle of the third deal it plays a card in, as a native crash would."""

    def play(self, obs: Observation) -> Card | Play:
        if obs.deal_number >= 3:
            os.kill(os.getpid(), signal.SIGSEGV)
        return super().play(obs)


class Cheater(Seeded):
    """Plays a card it does not hold (in the deck, but not in its hand) every time."""

    def play(self, obs: Observation) -> Card | Play:
        super().play(obs)
        return next(card for card in DECK if card not in obs.hand)


class Flooder(Seeded):
    """Attaches an over-long talk message to every card (and talks even as declarer)."""

    def play(self, obs: Observation) -> Card | Play:
        card = super().play(obs)
        return Play(card if isinstance(card, Card) else card.card, "blah " * 100)


Answer = Callable[[pb.ConnectResponse], list[pb.ConnectRequest | bytes]]
CONNECT = "/pyramid.v1.RefereeService/Connect"
GARBAGE = b"\xff\xff\xff not a protobuf message"
TOKEN = ""


def raw_stream(first: list[pb.ConnectRequest | bytes], answer: Answer) -> None:
    """A hand-written client for behaviours the SDK would never produce. It sends bytes as they are
    (messages are serialised first), so it can send what no protobuf library would write."""
    outbox: queue.Queue[bytes | None] = queue.Queue()
    for message in first:
        outbox.put(message if isinstance(message, bytes) else message.SerializeToString())

    def requests() -> Iterator[bytes]:
        while (message := outbox.get()) is not None:
            yield message

    received: list[str] = []
    with grpc.insecure_channel(os.environ[ENV_ADDRESS]) as channel:
        connect = channel.stream_stream(CONNECT, request_serializer=None, response_deserializer=None)
        try:
            for data in connect(requests()):
                response = pb.ConnectResponse.FromString(data)
                received.append(response.WhichOneof("kind"))
                for reply in answer(response):
                    outbox.put(reply if isinstance(reply, bytes) else reply.SerializeToString())
        except grpc.RpcError as exc:
            print(f"stream ended: {exc.code().name}: {exc.details()}", file=sys.stderr)
            sys.exit(1)
        finally:
            outbox.put(None)
            print(f"received: {' '.join(received)}", file=sys.stderr)


def hello(token: str | None = None) -> pb.ConnectRequest:
    return pb.ConnectRequest(
        hello=pb.Hello(protocol_version=PROTOCOL_VERSION, token=token or read_token(), bot_name="raw")
    )


def first_legal(request: pb.ActionRequest) -> pb.Action:
    return request.legal_actions[0]


def wrong_ids(response: pb.ConnectResponse) -> list[pb.ConnectRequest]:
    """A reply to a request never sent (its id + 1000) before each right one."""
    if response.WhichOneof("kind") != "action_request":
        return []
    request = response.action_request
    wrong = pb.ActionReply(request_id=request.request_id + 1000, action=first_legal(request))
    return [pb.ConnectRequest(action=wrong), reply(request)]


def oversized(response: pb.ConnectResponse) -> list[pb.ConnectRequest]:
    if response.WhichOneof("kind") != "action_request":
        return []
    request = response.action_request
    reply = pb.ActionReply(request_id=request.request_id, action=first_legal(request), talk="x" * 200_000)
    return [pb.ConnectRequest(action=reply)]


def flood(response: pb.ConnectResponse) -> list[pb.ConnectRequest]:
    """Answers its first request, then sends 300 replies nobody asked for (more than the referee takes)."""
    if response.WhichOneof("kind") != "action_request":
        return []
    request = response.action_request
    answer = pb.ConnectRequest(
        action=pb.ActionReply(request_id=request.request_id, action=first_legal(request))
    )
    stray = pb.ConnectRequest(action=pb.ActionReply(request_id=0, action=first_legal(request)))
    return [answer] + [stray] * 300 if request.request_id == 1 else [answer]


class Counted:
    """An answer function that knows how many action requests it has seen."""

    def __init__(self, answer: Callable[[int, pb.ActionRequest], list[pb.ConnectRequest | bytes]]) -> None:
        self.answer = answer
        self.requests = 0

    def __call__(self, response: pb.ConnectResponse) -> list[pb.ConnectRequest | bytes]:
        if response.WhichOneof("kind") != "action_request":
            return []
        self.requests += 1
        return self.answer(self.requests, response.action_request)


def reply(request: pb.ActionRequest, action: pb.Action | None = None, talk: str = "") -> pb.ConnectRequest:
    action = action if action is not None else first_legal(request)
    return pb.ConnectRequest(action=pb.ActionReply(request_id=request.request_id, action=action, talk=talk))


def garbage(number: int, request: pb.ActionRequest) -> list[pb.ConnectRequest | bytes]:
    """Bytes that are no message before its 2nd and 4th replies (a hiccup); the right answer always."""
    return [GARBAGE, reply(request)] if number in (2, 4) else [reply(request)]


def stale(number: int, request: pb.ActionRequest) -> list[pb.ConnectRequest | bytes]:
    """Before each reply but the first, the previous request's reply sent again (a stale id); each
    reply is its request's last legal action, never the referee's default."""
    right = reply(request, request.legal_actions[-1])
    if number == 1:
        return [right]
    again = pb.ActionReply(request_id=request.request_id - 1, action=first_legal(request))
    return [pb.ConnectRequest(action=again), right]


def error_field(number: int, request: pb.ActionRequest) -> list[pb.ConnectRequest | bytes]:
    """Action-less replies: the 1st as an old client sends it (no error), the 2nd with an error of many
    lines, an unprintable character and far too long; the right answer otherwise."""
    if number == 1:
        return [pb.ConnectRequest(action=pb.ActionReply(request_id=request.request_id))]
    if number == 2:
        error = "Boom\n\x07" + "é" * 400
        return [pb.ConnectRequest(action=pb.ActionReply(request_id=request.request_id, error=error))]
    return [reply(request)]


def second_hello(number: int, request: pb.ActionRequest) -> list[pb.ConnectRequest | bytes]:
    """A second hello (with its own token again) before its 3rd reply; the right answers always."""
    right = reply(request, request.legal_actions[-1])
    return [hello(TOKEN), right] if number == 3 else [right]


def bad_utf8_talk(number: int, request: pb.ActionRequest) -> list[pb.ConnectRequest | bytes]:
    """Its 3rd reply is well formed protobuf except that its talk is not UTF-8 (a string field must be)."""
    if number != 3:
        return [reply(request)]
    data = reply(request, talk="@@").SerializeToString()
    return [data.replace(b"@@", b"\xff\xfe")]


class DeclareTalk:
    """Attaches talk to its first declaration, and declares the last legal one (never the default)."""

    def __init__(self) -> None:
        self.talked = False

    def __call__(self, number: int, request: pb.ActionRequest) -> list[pb.ConnectRequest | bytes]:
        if request.observation.phase != pb.PHASE_DECLARE or self.talked:
            return [reply(request)]
        self.talked = True
        return [reply(request, request.legal_actions[-1], talk="I shall take them all")]


def exit_after_welcome(response: pb.ConnectResponse) -> list[pb.ConnectRequest | bytes]:
    if response.WhichOneof("kind") == "welcome":
        print("leaving after the welcome", file=sys.stderr, flush=True)
        os._exit(4)
    return []


def main() -> None:
    behaviour = sys.argv[1]
    if behaviour == "wrong-token":
        run(Seeded(), token="not-the-token")
    elif behaviour == "silent":
        with grpc.insecure_channel(os.environ[ENV_ADDRESS]) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            try:
                for _ in stub.Connect(iter(lambda: time.sleep(3600), None)):
                    pass
            except grpc.RpcError as exc:
                print(f"stream ended: {exc.code().name}: {exc.details()}", file=sys.stderr)
                sys.exit(1)
    elif behaviour == "wrong-id":
        raw_stream([hello()], wrong_ids)
    elif behaviour == "oversized":
        raw_stream([hello()], oversized)
    elif behaviour == "flood":
        raw_stream([hello()], flood)
    elif behaviour == "garbage":
        raw_stream([hello()], Counted(garbage))
    elif behaviour == "error-field":
        raw_stream([hello()], Counted(error_field))
    elif behaviour == "stale":
        raw_stream([hello()], Counted(stale))
    elif behaviour == "second-hello":
        global TOKEN  # noqa: PLW0603  (read once: the pipe can be read only once)
        TOKEN = read_token()
        raw_stream([hello(TOKEN)], Counted(second_hello))
    elif behaviour == "bad-utf8-talk":
        raw_stream([hello()], Counted(bad_utf8_talk))
    elif behaviour == "declare-talk":
        raw_stream([hello()], Counted(DeclareTalk()))
    elif behaviour == "garbage-hello":
        raw_stream([GARBAGE], Counted(garbage))
    elif behaviour == "exit-after-welcome":
        raw_stream([hello()], exit_after_welcome)
    else:
        bots = {
            "sleep": Sleeper,
            "crash": Crasher,
            "exit-10th": TenthMoveQuitter,
            "steady-30ms": Steady,
            "segv": Segfaulter,
            "illegal": Cheater,
            "flood-talk": Flooder,
            "good": Seeded,
        }
        run(bots[behaviour]())


if __name__ == "__main__":
    main()
