"""What a Python bot does with each message of the referee: decode what the bot reads, call its hooks,
write its reply.

:mod:`pyramid_sdk.client` imports this module with the referee's first message, not at start: it brings
protobuf, the generated classes and the game's wire format, about as much to load as gRPC, and a bot
sends its hello without them (:mod:`pyramid_sdk.handshake`).
"""

from __future__ import annotations

import sys
import time
import traceback

from pyramid_sdk.actions import PLAYS, Action, Declare, Play
from pyramid_sdk.bot import Bot, MatchInfo, MatchResult, TimeControl
from pyramid_sdk.cards import Card
from pyramid_sdk.debugging import MAX_DEBUG_BYTES, take_lines
from pyramid_sdk.encoding import action_reply
from pyramid_sdk.observation import Clock, Observation
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import views_pb2 as views
from pyramid_sdk.wire import ObservationDecoder, rules_from_wire

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


class Dispatcher:
    """One connection's bot and the matches it is playing. The messages are read as a
    ``ConnectResponseView`` (proto/pyramid/v1/views.proto), with the observations left undecoded until
    the bot reads them."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.granted = 1
        """How many matches at once the referee's welcome granted this bot's entrant (``max_matches``)."""
        self.decoders: dict[str, ObservationDecoder] = {}
        # A deal's final observation is decoded only for a bot that overrides the hook: it is a whole
        # observation, and most bots do not look at it.
        self.wants_deal_end = getattr(type(bot), "deal_end", None) is not Bot.deal_end or (
            "deal_end" in getattr(bot, "__dict__", {})
        )

    def handle(self, data: bytes) -> bytes | None:
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
            take_lines(self.bot)  # lines of an earlier match's end belong to no decision of this one
            self._hook(self.bot.match_start, info)
        elif kind == "match_end":
            end = pb.MatchEnd.FromString(message.match_end)
            if end.HasField("last_deal"):
                self._deal_end(end.match_id, end.last_deal)
            self.decoders.pop(end.match_id, None)
            faults = tuple(f"{pb.FaultKind.Name(f.kind)}: {f.detail}" for f in end.faults)
            result = MatchResult(end.match_id, tuple(end.totals), tuple(end.ranks), faults)
            self._hook(self.bot.match_end, result)
            take_lines(self.bot)  # no answer follows in this match to carry them
        elif kind == "welcome":
            self.granted = max(1, pb.Welcome.FromString(message.welcome).max_matches)
        elif kind == "ping":  # the referee's check that the bot is there: on its thread, between decisions
            nonce = pb.Ping.FromString(message.ping).nonce
            return pb.ConnectRequest(pong=pb.Pong(nonce=nonce)).SerializeToString()
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
            debug = self._debug()
            try:
                reply = action_reply(request.request_id, action, debug=debug)
            except (TypeError, ValueError):
                traceback.print_exc()  # talk that is not text, or not encodable: the card is still played
                card = PLAYS[action.card.index]  # type: ignore[union-attr]
                reply = action_reply(request.request_id, card, debug=debug)
        except Exception as exc:
            # A bug in the bot or a request it cannot read: an action-less reply reports it at once as a
            # fault, where silence would cost the whole time limit, and says what happened.
            traceback.print_exc()
            reply = action_reply(request.request_id, None, error_line(exc), self._debug())
        return reply

    def _debug(self) -> bytes:
        """The bot's debug text for this answer, in UTF-8; none, and a line on stderr, when it is over
        the referee's cap (it would not be kept, and could make the reply too big to be an answer)."""
        text = take_lines(self.bot).encode("utf-8")
        if len(text) > MAX_DEBUG_BYTES:
            print(
                f"{self.bot.name}: debug text of {len(text)} bytes not sent: the referee keeps at most "
                f"{MAX_DEBUG_BYTES} bytes per answer",
                file=sys.stderr,
            )
            return b""
        return text

    def _hook(self, hook: object, argument: object) -> None:
        try:
            hook(argument)  # type: ignore[operator]
        except Exception:
            traceback.print_exc()
