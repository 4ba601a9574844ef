"""Connects a :class:`~pyramid_sdk.bot.Bot` to a referee over gRPC and plays until the referee is done.

>>> from pyramid_sdk.client import run   # doctest: +SKIP
>>> run(MyBot())                          # address and token from PYRAMID_ADDRESS, PYRAMID_TOKEN

The stream is served by gRPC's own threads, so a slow ``play()`` only delays this bot's answer; the
referee's time control decides what that costs.
"""

from __future__ import annotations

import os
import queue
import sys
import traceback
from collections.abc import Iterator

import grpc

from pyramid_sdk.bot import Bot, MatchInfo, MatchResult, TimeControl
from pyramid_sdk.rules import Rules
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import pyramid_pb2_grpc as pb_grpc
from pyramid_sdk.wire import (
    PROTOCOL_VERSION,
    action_to_wire,
    observation_from_wire,
    rules_from_wire,
)

ENV_ADDRESS = "PYRAMID_ADDRESS"
ENV_TOKEN = "PYRAMID_TOKEN"


class ConnectionRefused(RuntimeError):
    """The referee refused this bot (wrong token, protocol version) or could not be reached."""


def run(bot: Bot, address: str | None = None, token: str | None = None) -> None:
    """Plays every match the referee asks for, then returns when the referee closes the stream.

    ``address`` and ``token`` default to the environment variables the launcher sets,
    ``PYRAMID_ADDRESS`` and ``PYRAMID_TOKEN``. A refusal exits the process with a one-line message.
    """
    address = address or os.environ.get(ENV_ADDRESS)
    token = token if token is not None else os.environ.get(ENV_TOKEN, "")
    if not address:
        raise SystemExit(f"{bot.name}: no referee address: set {ENV_ADDRESS} or pass address=")
    try:
        _Connection(bot, address, token).serve()
    except ConnectionRefused as exc:
        raise SystemExit(f"{bot.name}: {exc}") from None


class _Connection:
    def __init__(self, bot: Bot, address: str, token: str) -> None:
        self.bot = bot
        self.address = address
        self.token = token
        self.outbox: queue.Queue[pb.ConnectRequest | None] = queue.Queue()
        self.rules: dict[str, Rules] = {}

    def _requests(self) -> Iterator[pb.ConnectRequest]:
        while (message := self.outbox.get()) is not None:
            yield message

    def serve(self) -> None:
        hello = pb.Hello(
            protocol_version=PROTOCOL_VERSION,
            token=self.token,
            bot_name=self.bot.name,
            bot_version=self.bot.version,
        )
        self.outbox.put(pb.ConnectRequest(hello=hello))
        with grpc.insecure_channel(self.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]
            try:
                for message in stub.Connect(self._requests()):
                    self._handle(message)
            except grpc.RpcError as exc:
                code = exc.code() if hasattr(exc, "code") else None
                details = exc.details() if hasattr(exc, "details") else str(exc)
                if code is not grpc.StatusCode.CANCELLED:
                    raise ConnectionRefused(f"{code.name if code else 'error'}: {details}") from None
            finally:
                self.outbox.put(None)

    def _handle(self, message: pb.ConnectResponse) -> None:
        kind = message.WhichOneof("kind")
        if kind == "action_request":
            self._answer(message.action_request)
        elif kind == "match_start":
            start = message.match_start
            rules = rules_from_wire(start.rules)
            self.rules[start.match_id] = rules
            time_control = TimeControl(
                start.time_control.per_action_ms / 1000, start.time_control.bank_ms / 1000
            )
            info = MatchInfo(
                start.match_id, start.seat, tuple(start.seat_names), rules, time_control, start.seed
            )
            self._hook(self.bot.match_start, info)
        elif kind == "deal_end":
            end = message.deal_end
            obs = observation_from_wire(end.observation, self.rules[end.match_id], [])
            self._hook(self.bot.deal_end, obs)
        elif kind == "match_end":
            end_message = message.match_end
            self.rules.pop(end_message.match_id, None)
            faults = tuple(f"{pb.FaultKind.Name(f.kind)}: {f.detail}" for f in end_message.faults)
            result = MatchResult(
                end_message.match_id, tuple(end_message.totals), tuple(end_message.ranks), faults
            )
            self._hook(self.bot.match_end, result)
        elif kind == "notice":
            print(f"{self.bot.name}: referee says: {message.notice.text}", file=sys.stderr)

    def _answer(self, request: pb.ActionRequest) -> None:
        reply = pb.ActionReply(request_id=request.request_id)
        try:
            obs = observation_from_wire(
                request.observation, self.rules[request.match_id], list(request.legal_actions)
            )
            action = self.bot.act(obs)
            reply.action.CopyFrom(action_to_wire(action))
            talk = getattr(action, "talk", None)
            if talk:
                reply.talk = talk
        except Exception:
            # A bug in the bot or a request it cannot read: an action-less reply reports it at once as a
            # fault, where silence would cost the whole time limit.
            traceback.print_exc()
        self.outbox.put(pb.ConnectRequest(action=reply))

    def _hook(self, hook: object, argument: object) -> None:
        try:
            hook(argument)  # type: ignore[operator]
        except Exception:
            traceback.print_exc()
