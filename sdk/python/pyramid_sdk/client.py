"""Connects a :class:`~pyramid_sdk.bot.Bot` to a referee over gRPC and plays until the referee is done.

::

    from pyramid_sdk.client import run
    run(MyBot())   # address from PYRAMID_ADDRESS, token from the pipe PYRAMID_TOKEN_FD names

A slow ``play()`` only delays this bot's answer; the referee's time control decides what that costs.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import traceback

from pyramid_sdk import transport

transport.configure()  # before gRPC loads: it reads its settings once (see pyramid_sdk.transport)
# isort: split
import grpc

from pyramid_sdk.actions import PLAYS, Action, Declare, Play
from pyramid_sdk.bot import Bot, MatchInfo, MatchResult, TimeControl
from pyramid_sdk.cards import Card
from pyramid_sdk.encoding import action_reply
from pyramid_sdk.observation import Clock, Observation
from pyramid_sdk.stream import AsyncioStream, StreamEnded, ThreadStream, single_thread
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import views_pb2 as views
from pyramid_sdk.wire import PROTOCOL_VERSION, ObservationDecoder, rules_from_wire

ENV_ADDRESS = "PYRAMID_ADDRESS"
ENV_TOKEN_FD = "PYRAMID_TOKEN_FD"
"""The file descriptor the referee's launcher passes the token on: read once, then closed."""
ENV_TOKEN = "PYRAMID_TOKEN"
"""A token given by hand, for a bot started outside the launcher (the launcher never sets it)."""

CONNECT = f"/{pb.DESCRIPTOR.services_by_name['RefereeService'].full_name}/Connect"
"""The stream's method. The SDK sends bytes it wrote itself and reads each response's bytes as a
``ConnectResponseView`` (proto/pyramid/v1/views.proto), with the observations left undecoded until the
bot reads them."""


MAX_ERROR = 200
"""Characters of an exception's line sent with an action-less reply (``ActionReply.error``)."""


def error_line(exc: BaseException) -> str:
    """An exception as the SDK reports it to the referee: its type and message on one line of at most
    :data:`MAX_ERROR` characters (the referee's fault then reads "the bot raised ...").

    >>> error_line(ValueError("oops")), error_line(KeyError()), error_line(RuntimeError("a\\nb"))
    ('ValueError: oops', 'KeyError', 'RuntimeError: a | b')
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = f"{type(exc).__name__}: {' | '.join(lines)}" if lines else type(exc).__name__
    return text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 1] + "…"


def _checked(action: Action, obs: Observation) -> Action:
    """``action`` if it can be sent; otherwise ``TypeError`` saying what the bot's method returned."""
    if isinstance(action, Declare) or (isinstance(action, Play) and isinstance(action.card, Card)):
        return action
    declaring = bool(obs.legal_actions) and isinstance(obs.legal_actions[0], Declare)
    method, wanted = ("declare", "a Declare") if declaring else ("play", "a card")
    shown = action.card if isinstance(action, Play) else action
    raise TypeError(f"{method}() returned {shown!r}, not {wanted}")


class ConnectionRefused(RuntimeError):
    """The referee refused this bot (wrong token, protocol version) or could not be reached."""


def run(bot: Bot, address: str | None = None, token: str | None = None) -> None:
    """Plays every match the referee asks for, then returns when the referee ends the stream: with OK
    (done with this bot), or with CANCELLED (the referee was interrupted; a line on stderr says so).

    ``address`` defaults to ``PYRAMID_ADDRESS``, and ``token`` to what the launcher wrote on the pipe
    ``PYRAMID_TOKEN_FD`` names (or, for a bot started by hand, ``PYRAMID_TOKEN``; when both are set, the
    pipe wins). A refusal exits the
    process with a one-line message.
    """
    address = address or os.environ.get(ENV_ADDRESS)
    if not address:
        raise SystemExit(f"{bot.name}: no referee address: set {ENV_ADDRESS} or pass address=")
    try:
        token = token if token is not None else read_token()
    except ValueError as exc:
        raise SystemExit(f"{bot.name}: {exc}") from None
    try:
        on_one_thread = single_thread()
    except ValueError as exc:
        raise SystemExit(f"{bot.name}: {exc}") from None
    try:
        _Connection(bot, address, token).serve(on_one_thread)
    except ConnectionRefused as exc:
        raise SystemExit(f"{bot.name}: {exc}") from None


def read_token() -> str:
    """The token from the launcher's pipe, read to its end and closed, so that nothing else can read it
    later; else ``PYRAMID_TOKEN``; else ``""``. Raises ``ValueError`` for a descriptor that is not open."""
    fd = os.environ.pop(ENV_TOKEN_FD, None)
    if fd is None:
        return os.environ.get(ENV_TOKEN, "")
    try:
        with os.fdopen(int(fd), "rb") as pipe:
            return pipe.read(1024).decode("ascii", "replace").strip()
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the token from {ENV_TOKEN_FD}={fd}: {exc}") from None


class _Connection:
    def __init__(self, bot: Bot, address: str, token: str) -> None:
        self.bot = bot
        self.address = address
        self.token = token
        self.decoders: dict[str, ObservationDecoder] = {}
        # A deal's final observation is decoded only for a bot that overrides the hook: it is a whole
        # observation, and most bots do not look at it.
        self.wants_deal_end = getattr(type(bot), "deal_end", None) is not Bot.deal_end or (
            "deal_end" in getattr(bot, "__dict__", {})
        )

    def serve(self, on_one_thread: bool) -> None:
        """Plays until the referee ends the stream, on :class:`~pyramid_sdk.stream.ThreadStream` or, if not
        ``on_one_thread``, on :class:`~pyramid_sdk.stream.AsyncioStream`."""
        hello = pb.Hello(
            protocol_version=PROTOCOL_VERSION,
            token=self.token,
            bot_name=self.bot.name,
            bot_version=self.bot.version,
        )
        first = pb.ConnectRequest(hello=hello).SerializeToString()
        try:
            if on_one_thread:
                # The bot's methods run on this thread, between two messages: one decision is one round
                # trip with no thread hand-off (see pyramid_sdk.stream).
                with ThreadStream(self.address, CONNECT, first) as stream:
                    reply = None
                    while (message := stream.exchange(reply)) is not None:
                        reply = self._handle(message)
            else:
                asyncio.run(self._serve_asyncio(first))
        except StreamEnded as exc:
            if exc.code is not grpc.StatusCode.CANCELLED:
                raise ConnectionRefused(str(exc)) from None
            # The referee was interrupted: not this bot's failure, so run() returns (exit code 0).
            print(f"{self.bot.name}: the referee cancelled the stream: {exc.details}", file=sys.stderr)

    async def _serve_asyncio(self, first: bytes) -> None:
        async with AsyncioStream(self.address, CONNECT, first) as stream:
            reply = None
            while (message := await stream.exchange(reply)) is not None:
                reply = self._handle(message)

    def _handle(self, data: bytes) -> bytes | None:
        """Handles one message from the referee; the reply to send, if it asked for one."""
        message = views.ConnectResponseView.FromString(data)
        kind = message.WhichOneof("kind")
        if kind == "action_request":
            return self._answer(message.action_request)
        if kind == "match_start":
            start = pb.MatchStart.FromString(message.match_start)
            rules = rules_from_wire(start.rules)
            self.decoders[start.match_id] = ObservationDecoder(rules)
            time_control = TimeControl(
                start.time_control.per_action_ms / 1000, start.time_control.bank_ms / 1000
            )
            info = MatchInfo(
                start.match_id, start.seat, tuple(start.seat_names), rules, time_control, start.seed
            )
            self._hook(self.bot.match_start, info)
        elif kind == "match_end":
            end = pb.MatchEnd.FromString(message.match_end)
            if end.HasField("last_deal"):
                self._deal_end(end.match_id, end.last_deal)
            self.decoders.pop(end.match_id, None)
            faults = tuple(f"{pb.FaultKind.Name(f.kind)}: {f.detail}" for f in end.faults)
            result = MatchResult(end.match_id, tuple(end.totals), tuple(end.ranks), faults)
            self._hook(self.bot.match_end, result)
        elif kind == "notice":
            text = pb.Notice.FromString(message.notice).text
            print(f"{self.bot.name}: referee says: {text}", file=sys.stderr)
        return None

    def _deal_end(self, match_id: str, last_deal: pb.Observation | bytes) -> None:
        decoder = self.decoders.get(match_id)
        if self.wants_deal_end and decoder is not None:
            self._hook(self.bot.deal_end, decoder.decode(last_deal))

    def _answer(self, request: views.ActionRequestView) -> bytes:
        # The clock starts before the deal-end hook: the referee's clock is already running.
        clock = Clock(request.per_action_ms / 1000, request.bank_ms / 1000, time.monotonic())
        if request.last_deal:
            self._deal_end(request.match_id, request.last_deal)
        try:
            obs = self.decoders[request.match_id].decode(request.observation, request.legal_actions, clock)
            action = _checked(self.bot.act(obs), obs)
            try:
                reply = action_reply(request.request_id, action)
            except (TypeError, ValueError):
                traceback.print_exc()  # talk that is not text, or not encodable: the card is still played
                reply = action_reply(request.request_id, PLAYS[action.card.index])  # type: ignore[union-attr]
        except Exception as exc:
            # A bug in the bot or a request it cannot read: an action-less reply reports it at once as a
            # fault, where silence would cost the whole time limit, and says what happened.
            traceback.print_exc()
            reply = action_reply(request.request_id, None, error_line(exc))
        return reply

    def _hook(self, hook: object, argument: object) -> None:
        try:
            hook(argument)  # type: ignore[operator]
        except Exception:
            traceback.print_exc()
