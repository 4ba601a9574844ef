"""Conversion between the game library's values and the ``pyramid.v1`` protocol messages.

Both sides use it: the referee turns observations into messages, the Python SDK turns them back. Anything
that arrives from the other side is checked here and rejected with :class:`WireError`, so a garbage
message becomes a clear fault, never an exception deep in the engine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from google.protobuf.message import DecodeError

from pyramid_sdk.actions import ACTIONS, DECLARATIONS, PLAYS, Action, Declare, Play
from pyramid_sdk.cards import DECK, Card, CardError, Suit
from pyramid_sdk.observation import Clock, Observation, Phase, TalkMessage, Trick
from pyramid_sdk.pyramid import Pyramid, PyramidEntry
from pyramid_sdk.rules import Rules, RulesError, Talk, TrickWinner
from pyramid_sdk.v1 import pyramid_pb2 as pb


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


_PLAY_BY_CODE: Final[dict[str, Play]] = {play.card.code: play for play in PLAYS}
_DECLARATION_BY_WIRE: Final[dict[tuple[int, int], Declare]] = {
    (declaration.tricks, _SUIT_TO_WIRE[declaration.trump]): declaration
    for row in DECLARATIONS
    for declaration in row
}


def action_from_wire(message: pb.Action, talk: str = "") -> Action:
    """The action a bot sent, with its talk attached to a play; :class:`WireError` if it names none.

    A declaration carries no talk (the declarer never talks): talk sent with one is not kept here, and
    the referee records it as a talk fault (docs/PROTOCOL.md)."""
    play = _PLAY_BY_CODE.get(message.card)  # the common case, without the oneof lookup
    if play is not None:
        return Play(play.card, talk) if talk else play
    kind = message.WhichOneof("kind")
    if kind == "card":
        try:
            card = Card.parse(message.card)
        except CardError as exc:
            raise WireError(str(exc)) from None
        return Play(card, talk) if talk else PLAYS[card.index]
    if kind == "declare":
        wire = message.declare
        declaration = _DECLARATION_BY_WIRE.get((wire.tricks, wire.trump))
        if declaration is None:
            raise WireError(f"declaration of {wire.tricks} tricks with trump {wire.trump} is not one")
        return declaration
    raise WireError("the action carries neither a declaration nor a card")


# -- observations (the referee writes them with pyramid_sdk.encoding) ----------------------------------------


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

    A field is decoded when the bot first reads it (see :class:`_WireObservation`): a bot pays for what it
    looks at, and a random bot looks only at its legal actions. What the referee has said once stays true,
    so it is decoded once: a pyramid with as many entries as last time is the same pyramid (decoded once
    per deal), and a finished trick of this deal is the same trick (decoded once per trick).
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._pyramids: dict[int, tuple[int, Pyramid]] = {}
        self._tricks: tuple[int, tuple[Trick, ...]] = (0, ())
        """This deal's number and its finished tricks so far: one value, replaced whole, so that a bot
        reading observations from several threads never sees one deal's number with another's tricks."""

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
        known_deal, tricks = self._tricks
        if deal == known_deal and len(messages) <= len(tricks):  # a deal's finished tricks never change
            return tricks if len(messages) == len(tricks) else tricks[: len(messages)]
        if deal != known_deal:
            tricks = ()
        tricks += tuple(_trick_from_wire(trick) for trick in messages[len(tricks) :])
        self._tricks = (deal, tricks)
        return tricks

    def decode(
        self,
        message: pb.Observation | bytes,
        legal: Sequence[pb.Action] | Sequence[bytes] = (),
        clock: Clock | None = None,
    ) -> Observation:
        """The observation in ``message`` (a message, or its encoding), with ``legal`` (messages, or their
        encodings) as its legal actions and ``clock`` as its clock. Only these are decoded now; the other
        fields when the bot first reads them, so a field the message gets wrong raises :class:`WireError`
        then. The observation keeps ``message``: do not change a message after decoding it."""
        obs = _WireObservation.__new__(_WireObservation)
        obs._decoder, obs._message, obs.rules, obs.clock = self, message, self.rules, clock
        try:
            obs.legal_actions = tuple(
                map(_action_from_bytes, legal)  # type: ignore[arg-type]
                if legal and isinstance(legal[0], bytes)
                else map(action_from_wire, legal)  # type: ignore[arg-type]
            )
        except WireError as exc:
            raise WireError(f"observation field legal_actions: {exc}") from None
        return obs


def _declaration(message: pb.Observation) -> Declare | None:
    if not message.HasField("declaration"):
        return None
    return DECLARATIONS[message.declaration.tricks][_SUIT_FROM_WIRE[message.declaration.trump]]


_LAZY_FIELDS: Final[dict[str, Callable[[ObservationDecoder, pb.Observation], object]]] = {
    "seat": lambda _, m: m.seat,
    "phase": lambda _, m: _PHASE_FROM_WIRE[m.phase],
    "deal_number": lambda _, m: m.deal_number,
    "dealer": lambda _, m: m.dealer,
    "declarer": lambda _, m: m.declarer,
    "to_act": lambda _, m: m.to_act if m.HasField("to_act") else None,
    "hand": lambda _, m: _cards(m.hand),
    "declaration": lambda _, m: _declaration(m),
    "current_trick": lambda _, m: _trick_from_wire(m.current_trick),
    "tricks": lambda d, m: d._finished_tricks(m.deal_number, m.tricks),
    "taken": lambda _, m: tuple(m.taken),
    "pyramids": lambda d, m: tuple(d._pyramid(seat, pyramid) for seat, pyramid in enumerate(m.pyramids)),
    "talk": lambda _, m: tuple(TalkMessage(t.seat, t.trick, t.text) for t in m.talk),
    "forfeited": lambda _, m: tuple(m.forfeited),
}
"""How each field is decoded when first read; ``rules`` and ``legal_actions`` are set at once."""
_FIELD_NAMES: Final = tuple(field.name for field in dataclasses.fields(Observation))
_COMPARED: Final = tuple(field.name for field in dataclasses.fields(Observation) if field.compare)
"""Equality ignores the clock, as the engine's dataclass does: it is not part of the game state."""

_ACTION_BY_ENCODING: Final[dict[bytes, Action]] = {
    action_to_wire(action).SerializeToString(): action for action in ACTIONS
}
"""The 52 actions by their encoded ``Action`` message, as the referee writes them."""


def _action_from_bytes(data: bytes) -> Action:
    action = _ACTION_BY_ENCODING.get(data)
    if action is not None:
        return action
    try:
        return action_from_wire(pb.Action.FromString(data))
    except DecodeError:
        raise WireError("a legal action that is not an Action message") from None


class _WireObservation(Observation):
    """An :class:`Observation` that decodes each field from its message when the field is first read.

    An unset slot makes Python fall back to ``__getattr__``, which decodes the field and fills the slot,
    so every later read is a plain attribute. Assigning a field, ``dataclasses.replace``, ``copy`` and
    equality with engine observations all behave as for the engine's own class.
    """

    __slots__ = ("_decoder", "_message")
    _decoder: ObservationDecoder
    _message: pb.Observation | bytes

    def __getattr__(self, name: str) -> object:
        decode = _LAZY_FIELDS.get(name)
        if decode is None:
            raise AttributeError(f"'Observation' object has no attribute {name!r}")
        message = self._message
        if isinstance(message, bytes):  # not even parsed yet
            try:
                message = self._message = pb.Observation.FromString(message)
            except DecodeError:
                raise WireError("observation: not an Observation message") from None
        try:
            value = decode(self._decoder, message)
        except (KeyError, IndexError, CardError) as exc:
            raise WireError(f"observation field {name}: {type(exc).__name__}: {exc}") from None
        setattr(self, name, value)
        return value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Observation):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _COMPARED)

    def __repr__(self) -> str:
        return f"Observation({', '.join(f'{name}={getattr(self, name)!r}' for name in _FIELD_NAMES)})"

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it extends
