"""Conversion between the game library's values and the ``pyramid.v1`` protocol messages.

Both sides use it: the referee turns observations into messages, the Python SDK turns them back. Anything
that arrives from the other side is checked here and rejected with :class:`WireError`, so a garbage
message becomes a clear fault, never an exception deep in the engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from pyramid_sdk.actions import DECLARATIONS, PLAYS, Action, Declare, Play
from pyramid_sdk.cards import DECK, Card, CardError, Suit
from pyramid_sdk.observation import Observation, Phase, TalkMessage, Trick
from pyramid_sdk.pyramid import Pyramid, PyramidEntry
from pyramid_sdk.rules import Rules, RulesError, Talk, TrickWinner
from pyramid_sdk.v1 import pyramid_pb2 as pb

PROTOCOL_VERSION: Final = 1


class WireError(ValueError):
    """A protocol message that does not carry what it must."""


_SUIT_TO_WIRE: Final = {
    Suit.SPADES: pb.SUIT_SPADES,
    Suit.HEARTS: pb.SUIT_HEARTS,
    Suit.DIAMONDS: pb.SUIT_DIAMONDS,
    Suit.CLUBS: pb.SUIT_CLUBS,
}
_SUIT_FROM_WIRE: Final = {wire: suit for suit, wire in _SUIT_TO_WIRE.items()}
_PHASE_TO_WIRE: Final = {
    Phase.DECLARE: pb.PHASE_DECLARE,
    Phase.PLAY: pb.PHASE_PLAY,
    Phase.DEAL_OVER: pb.PHASE_DEAL_OVER,
    Phase.MATCH_OVER: pb.PHASE_MATCH_OVER,
}
_PHASE_FROM_WIRE: Final = {wire: phase for phase, wire in _PHASE_TO_WIRE.items()}
_TRICK_WINNER_TO_WIRE: Final = {
    TrickWinner.LED_SUIT: pb.TRICK_WINNER_LED_SUIT,
    TrickWinner.HIGHEST_RANK: pb.TRICK_WINNER_HIGHEST_RANK,
}
_TRICK_WINNER_FROM_WIRE: Final = {wire: mode for mode, wire in _TRICK_WINNER_TO_WIRE.items()}
_TALK_TO_WIRE: Final = {
    Talk.OPEN: pb.TALK_MODE_OPEN,
    Talk.DEFENDERS: pb.TALK_MODE_DEFENDERS,
    Talk.OFF: pb.TALK_MODE_OFF,
}
_TALK_FROM_WIRE: Final = {wire: mode for mode, wire in _TALK_TO_WIRE.items()}


# -- rules -------------------------------------------------------------------------------------------------


def rules_to_wire(rules: Rules) -> pb.Rules:
    return pb.Rules(
        players=rules.players,
        trick_winner=_TRICK_WINNER_TO_WIRE[rules.trick_winner],
        talk=_TALK_TO_WIRE[rules.talk],
        talk_max_length=rules.talk_max_length,
        talk_max_per_trick=rules.talk_max_per_trick,
    )


def rules_from_wire(message: pb.Rules) -> Rules:
    try:
        return Rules(
            players=message.players,
            trick_winner=_TRICK_WINNER_FROM_WIRE[message.trick_winner],
            talk=_TALK_FROM_WIRE[message.talk],
            talk_max_length=message.talk_max_length,
            talk_max_per_trick=message.talk_max_per_trick,
        )
    except (KeyError, RulesError) as exc:
        raise WireError(f"rules: {exc}") from None


# -- actions -----------------------------------------------------------------------------------------------


def set_action(message: pb.Action, action: Action) -> None:
    """Writes ``action`` into ``message`` in place (cheaper than building one and copying it)."""
    if isinstance(action, Declare):
        message.declare.tricks = action.tricks
        message.declare.trump = _SUIT_TO_WIRE[action.trump]
    else:
        message.card = action.card.code


def action_to_wire(action: Action) -> pb.Action:
    message = pb.Action()
    set_action(message, action)
    return message


def action_from_wire(message: pb.Action, talk: str = "") -> Action:
    """The action a bot sent, with its talk attached to a play; :class:`WireError` if it names none."""
    kind = message.WhichOneof("kind")
    if kind == "card":
        try:
            card = Card.parse(message.card)
        except CardError as exc:
            raise WireError(str(exc)) from None
        return Play(card, talk) if talk else PLAYS[card.index]
    if kind == "declare":
        tricks, trump = message.declare.tricks, _SUIT_FROM_WIRE.get(message.declare.trump)
        if trump is None or not 0 <= tricks <= 6:
            raise WireError(f"declaration of {tricks} tricks with trump {message.declare.trump} is not one")
        return DECLARATIONS[tricks][trump]
    raise WireError("the action carries neither a declaration nor a card")


# -- observations ------------------------------------------------------------------------------------------


def _codes(cards: tuple[Card, ...]) -> list[str]:
    return [card.code for card in cards]


def _trick_to_wire(trick: Trick) -> pb.Trick:
    message = pb.Trick(leader=trick.leader, cards=_codes(trick.cards))
    if trick.winner is not None:
        message.winner = trick.winner
    return message


def _pyramid_to_wire(pyramid: Pyramid) -> pb.Pyramid:
    return pb.Pyramid(
        entries=[
            pb.PyramidEntry(declared=e.declared, taken=e.taken, points=e.points) for e in pyramid.entries
        ],
        remaining=pyramid.remaining,
        total=pyramid.total,
    )


class ObservationEncoder:
    """Serialises observations for one seat of one match.

    Most of an observation changes rarely: the pyramids once per deal, the finished tricks by one trick at
    a time. Their encodings are kept (a trick's is made once, when it is finished) and joined to the part
    that changes with every decision: protobuf parses concatenated encodings of a message as one message with
    all their fields. Building nested messages from Python costs several times as much as parsing bytes,
    so this keeps the referee's side of a decision short.
    """

    def __init__(self) -> None:
        self._pyramids_source: tuple[Pyramid, ...] | None = None
        self._pyramids = b""
        self._tricks_source: tuple[Trick, ...] | None = None
        self._tricks = b""

    def serialize(self, obs: Observation) -> bytes:
        """The encoded ``pyramid.v1.Observation`` message."""
        if obs.pyramids is not self._pyramids_source:
            self._pyramids_source = obs.pyramids
            self._pyramids = pb.Observation(
                pyramids=[_pyramid_to_wire(pyramid) for pyramid in obs.pyramids]
            ).SerializeToString()
        if obs.tricks is not self._tricks_source:
            known = self._tricks_source or ()
            if obs.tricks[: len(known)] != known:  # a new deal: the engine only ever appends a trick
                known, self._tricks = (), b""
            self._tricks += b"".join(
                [
                    pb.Observation(tricks=[_trick_to_wire(trick)]).SerializeToString()
                    for trick in obs.tricks[len(known) :]
                ]
            )
            self._tricks_source = obs.tricks
        message = pb.Observation(
            seat=obs.seat,
            phase=_PHASE_TO_WIRE[obs.phase],
            deal_number=obs.deal_number,
            dealer=obs.dealer,
            declarer=obs.declarer,
            hand=_codes(obs.hand),
            current_trick=_trick_to_wire(obs.current_trick),
            taken=obs.taken,
            talk=[pb.TalkMessage(seat=m.seat, trick=m.trick, text=m.text) for m in obs.talk],
            forfeited=obs.forfeited,
        )
        if obs.to_act is not None:
            message.to_act = obs.to_act
        if obs.declaration is not None:
            message.declaration.tricks = obs.declaration.tricks
            message.declaration.trump = _SUIT_TO_WIRE[obs.declaration.trump]
        return message.SerializeToString() + self._tricks + self._pyramids


_ALL_ACTIONS: Final[tuple[Action, ...]] = (*PLAYS, *(d for row in DECLARATIONS for d in row))
_LEGAL_ACTION_FIELDS: Final[dict[Action, bytes]] = {
    action: pb.ActionRequest(legal_actions=[action_to_wire(action)]).SerializeToString()
    for action in _ALL_ACTIONS
}


def legal_actions_field(actions: Sequence[Action]) -> bytes:
    """The encoded ``legal_actions`` field of an ``ActionRequest``: merge it into a request with
    ``MergeFromString``. Every legal action is one of 52 interned values, each encoded once."""
    return b"".join([_LEGAL_ACTION_FIELDS[action] for action in actions])


_CARD_BY_CODE: Final[dict[str, Card]] = {card.code: card for card in DECK}


def _cards(codes: Iterable[str]) -> tuple[Card, ...]:
    """Cards from their codes; a code the engine never writes raises ``KeyError``."""
    return tuple(map(_CARD_BY_CODE.__getitem__, codes))


def _trick_from_wire(message: pb.Trick) -> Trick:
    return Trick(
        message.leader, _cards(message.cards), message.winner if message.HasField("winner") else None
    )


class ObservationDecoder:
    """Rebuilds the engine's :class:`Observation` from messages for one match, so Python bots see one
    type in-process and over the wire.

    What the referee has said once stays true, so it is decoded once: a pyramid with as many entries as
    last time is the same pyramid (decoded once per deal), and a finished trick of this deal is the same
    trick (decoded once per trick, not once per decision).
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._pyramids: dict[int, tuple[int, Pyramid]] = {}
        self._deal = 0
        self._tricks: tuple[Trick, ...] = ()

    def _pyramid(self, seat: int, message: pb.Pyramid) -> Pyramid:
        cached = self._pyramids.get(seat)
        if cached is not None and cached[0] == len(message.entries):
            return cached[1]
        pyramid = Pyramid(
            tuple(PyramidEntry(e.declared, e.taken, e.points) for e in message.entries),
            tuple(message.remaining),
            message.total,
        )
        self._pyramids[seat] = (len(message.entries), pyramid)
        return pyramid

    def _finished_tricks(self, deal: int, messages: Sequence[pb.Trick]) -> tuple[Trick, ...]:
        if deal != self._deal or len(messages) < len(self._tricks):
            self._deal, self._tricks = deal, ()
        if len(messages) > len(self._tricks):
            self._tricks += tuple(_trick_from_wire(trick) for trick in messages[len(self._tricks) :])
        return self._tricks

    def decode(self, message: pb.Observation, legal: Sequence[pb.Action] = ()) -> Observation:
        try:
            declaration = None
            if message.HasField("declaration"):
                declaration = DECLARATIONS[message.declaration.tricks][
                    _SUIT_FROM_WIRE[message.declaration.trump]
                ]
            deal_number = message.deal_number
            return Observation(
                seat=message.seat,
                rules=self.rules,
                phase=_PHASE_FROM_WIRE[message.phase],
                deal_number=deal_number,
                dealer=message.dealer,
                declarer=message.declarer,
                to_act=message.to_act if message.HasField("to_act") else None,
                hand=_cards(message.hand),
                declaration=declaration,
                current_trick=_trick_from_wire(message.current_trick),
                tricks=self._finished_tricks(deal_number, message.tricks),
                taken=tuple(message.taken),
                pyramids=tuple(self._pyramid(seat, p) for seat, p in enumerate(message.pyramids)),
                talk=tuple(TalkMessage(m.seat, m.trick, m.text) for m in message.talk)
                if message.talk
                else (),
                legal_actions=tuple(map(action_from_wire, legal)),
                forfeited=tuple(message.forfeited),
            )
        except (KeyError, IndexError, CardError) as exc:
            raise WireError(f"observation: {type(exc).__name__}: {exc}") from None
