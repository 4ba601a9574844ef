"""The messages of every decision, written straight in protobuf's wire format: the referee's action
request and the Python SDK's reply.

A referee sends one action request per decision. Building it as nested generated messages from Python and
serialising it cost more than everything else the referee does for a decision, so the request is joined
from bytes instead (the format: https://protobuf.dev/programming-guides/encoding/):

- what changes rarely is encoded once, with the generated classes: the pyramids once per deal, each
  finished trick once, each table-talk list once, each of the 52 possible actions once;
- the few fields that change with every decision (small integers and two-letter card codes) are written
  here by hand.

Protobuf reads concatenated encodings of a message as one message with all their fields, which is what
lets the parts be joined. Whatever is written here parses, with the generated classes of any language, as
the message the engine's values describe: ``tests/test_wire.py`` checks it over whole matches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from pyramid_sdk.actions import ACTIONS, DECLARATIONS, Action, Declare
from pyramid_sdk.cards import DECK, Card
from pyramid_sdk.handshake import varint as any_varint
from pyramid_sdk.observation import Observation, TalkMessage, Trick
from pyramid_sdk.pyramid import Pyramid
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.wire import _PHASE_TO_WIRE, _SUIT_TO_WIRE, action_to_wire

_ONE_BYTE: Final = tuple(bytes((value,)) for value in range(0x80))


def varint(value: int) -> bytes:
    """``value`` as a base-128 varint (:func:`pyramid_sdk.handshake.varint`), the small values of every
    decision without a loop."""
    if 0 <= value < 0x80:
        return _ONE_BYTE[value]
    if 0 < value < 0x4000:  # lengths of observations, request ids, milliseconds
        return bytes((value & 0x7F | 0x80, value >> 7))
    return any_varint(value)


def _int(key: int, value: int) -> bytes:
    """An integer field (``key`` is its one-byte tag); absent when zero, as proto3 writes it."""
    return b"" if value == 0 else bytes((key,)) + varint(value)


def _message(key: int, body: bytes) -> bytes:
    """A length-delimited field (sub-message, string, packed list) with a one-byte tag."""
    return bytes((key,)) + varint(len(body)) + body


_LENGTH_DELIMITED: Final = frozenset(
    {FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES}
)


def tag(message: type[Message], field: str) -> int:
    """The one-byte tag of ``message.field``, ``(number << 3) | wire type``, read from the generated
    descriptors once at import, so that a change to the ``.proto`` cannot leave a hand-kept tag behind.

    >>> hex(tag(pb.Observation, "declaration")), hex(tag(pb.Observation, "taken"))
    ('0x42', '0x5a')
    """
    descriptor = message.DESCRIPTOR.fields_by_name[field]
    packed = descriptor.is_repeated and descriptor.is_packed  # proto3 packs repeated numbers
    wire_type = 2 if descriptor.type in _LENGTH_DELIMITED or packed else 0
    number = descriptor.number << 3 | wire_type
    if number >= 0x80:
        raise ValueError(f"{message.__name__}.{field}: a tag of two bytes; this encoder writes one")
    return number


def _tags(message: type[Message], *fields: str) -> tuple[int, ...]:
    return tuple(tag(message, field) for field in fields)


_OBS_SEAT, _OBS_PHASE, _OBS_DEAL, _OBS_DEALER, _OBS_DECLARER, _OBS_TO_ACT = _tags(
    pb.Observation, "seat", "phase", "deal_number", "dealer", "declarer", "to_act"
)
_OBS_HAND, _OBS_DECLARATION, _OBS_CURRENT_TRICK, _OBS_TAKEN, _OBS_FORFEITED = _tags(
    pb.Observation, "hand", "declaration", "current_trick", "taken", "forfeited"
)
_DECLARATION_TRICKS, _DECLARATION_TRUMP = _tags(pb.Declaration, "tricks", "trump")
_TRICK_LEADER, _TRICK_CARDS, _TRICK_WINNER = _tags(pb.Trick, "leader", "cards", "winner")
_REQUEST_ID, _REQUEST_MATCH_ID, _REQUEST_OBSERVATION, _REQUEST_LEGAL_ACTION = _tags(
    pb.ActionRequest, "request_id", "match_id", "observation", "legal_actions"
)
_REQUEST_BANK, _REQUEST_PER_ACTION, _REQUEST_LAST_DEAL = _tags(
    pb.ActionRequest, "bank_ms", "per_action_ms", "last_deal"
)
_REPLY_ID, _REPLY_ACTION, _REPLY_TALK, _REPLY_ERROR, _REPLY_DEBUG = _tags(
    pb.ActionReply, "request_id", "action", "talk", "error", "debug"
)
_REQUEST_ID_TAG, _REQUEST_OBSERVATION_TAG = bytes((_REQUEST_ID,)), bytes((_REQUEST_OBSERVATION,))
_REQUEST_LAST_DEAL_TAG = bytes((_REQUEST_LAST_DEAL,))
_RESPONSE_ACTION_REQUEST_TAG = bytes((tag(pb.ConnectResponse, "action_request"),))
_REPLY_ID_TAG = bytes((_REPLY_ID,))
_CONNECT_REQUEST_ACTION_TAG = bytes((tag(pb.ConnectRequest, "action"),))

_HAND_CARD: Final[tuple[bytes, ...]] = tuple(_message(_OBS_HAND, card.code.encode()) for card in DECK)
"""``Observation.hand`` entries, by card index: every card code is two ASCII letters."""
_TRICK_CARD: Final[tuple[bytes, ...]] = tuple(_message(_TRICK_CARDS, card.code.encode()) for card in DECK)
"""``Trick.cards`` entries, by card index."""


def _declaration(declaration: Declare) -> bytes:
    """``Observation.declaration``."""
    return _message(
        _OBS_DECLARATION,
        _int(_DECLARATION_TRICKS, declaration.tricks)
        + _int(_DECLARATION_TRUMP, _SUIT_TO_WIRE[declaration.trump]),
    )


_DECLARATION: Final[dict[int, bytes]] = {
    id(declaration): _declaration(declaration) for row in DECLARATIONS for declaration in row
}
"""By identity, for the 28 interned declarations."""


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


class _Shared:
    """Encodings of values that the observations of every seat share, kept by identity.

    The engine hands every seat the same :class:`Pyramid` and :class:`Trick` objects, so one encoding
    serves four observations; hashing a pyramid by value would cost about as much as encoding it.
    """

    def __init__(self, encode: Callable[[Any], bytes]) -> None:
        self._encode = encode
        self._by_id: dict[int, tuple[object, bytes]] = {}

    def __call__(self, value: object) -> bytes:
        entry = self._by_id.get(id(value))
        if entry is not None and entry[0] is value:  # the value is held, so its id is not reused
            return entry[1]
        if len(self._by_id) >= 512:
            self._by_id.clear()
        data = self._encode(value)
        self._by_id[id(value)] = (value, data)
        return data


_pyramid_field: Final = _Shared(
    lambda pyramid: pb.Observation(pyramids=[_pyramid_to_wire(pyramid)]).SerializeToString()
)
"""One entry of ``Observation.pyramids``. A pyramid changes once in a deal, and only the declarer's."""
_finished_trick_field: Final = _Shared(
    lambda trick: pb.Observation(tricks=[_trick_to_wire(trick)]).SerializeToString()
)
"""One entry of ``Observation.tricks``."""


def _small_list(key: int, values: Sequence[int]) -> bytes:
    """A packed list of integers (or booleans)."""
    if not values:
        return b""
    return _message(key, b"".join([varint(value) for value in values]))


def _per_decision_fields(obs: Observation) -> bytes:
    """The fields that change with every decision.

    They are written with explicit zeros, which proto3 reads as it reads absent fields, so the usual case
    is one ``bytes`` call: every number here is a seat, a phase, a trick count or a deal number, below 128
    and so one byte as a varint. Anything else (a negative number makes ``bytes`` raise) takes the
    general path.
    """
    trick = obs.current_trick
    players = len(obs.taken)
    numbers = (obs.seat, obs.deal_number, obs.dealer, obs.declarer, trick.leader, *obs.taken)
    if max(numbers) >= 0x80 or trick.winner is not None or len(obs.forfeited) != players:
        return _general_fields(obs)  # never for the engine's own observations
    trick_cards = b"".join([_TRICK_CARD[card.index] for card in trick.cards])
    # fmt: off
    head = bytes((
        _OBS_SEAT, obs.seat,
        _OBS_PHASE, _PHASE_TO_WIRE[obs.phase],
        _OBS_DEAL, obs.deal_number,
        _OBS_DEALER, obs.dealer,
        _OBS_DECLARER, obs.declarer,
        _OBS_TAKEN, players, *obs.taken,
        _OBS_FORFEITED, players, *obs.forfeited,
        _OBS_CURRENT_TRICK, len(trick_cards) + 2, _TRICK_LEADER, trick.leader,
    ))
    # fmt: on
    return b"".join(
        [
            head,
            trick_cards,
            b"" if obs.to_act is None else bytes((_OBS_TO_ACT,)) + varint(obs.to_act),
            b""
            if obs.declaration is None
            else _DECLARATION.get(id(obs.declaration)) or _declaration(obs.declaration),
            *[_HAND_CARD[card.index] for card in obs.hand],
        ]
    )


def _general_fields(obs: Observation) -> bytes:
    """:func:`_per_decision_fields` for any values."""
    trick = obs.current_trick
    trick_body = _int(_TRICK_LEADER, trick.leader) + b"".join([_TRICK_CARD[c.index] for c in trick.cards])
    if trick.winner is not None:
        trick_body += bytes((_TRICK_WINNER,)) + varint(trick.winner)
    return b"".join(
        [
            _int(_OBS_SEAT, obs.seat),
            _int(_OBS_PHASE, _PHASE_TO_WIRE[obs.phase]),
            _int(_OBS_DEAL, obs.deal_number),
            _int(_OBS_DEALER, obs.dealer),
            _int(_OBS_DECLARER, obs.declarer),
            b"" if obs.to_act is None else bytes((_OBS_TO_ACT,)) + varint(obs.to_act),
            *[_HAND_CARD[card.index] for card in obs.hand],
            b"" if obs.declaration is None else _declaration(obs.declaration),
            _message(_OBS_CURRENT_TRICK, trick_body),
            _small_list(_OBS_TAKEN, obs.taken),
            _small_list(_OBS_FORFEITED, obs.forfeited),
        ]
    )


class ObservationEncoder:
    """Serialises the observations of one seat of one match; what it has encoded once, it keeps."""

    def __init__(self) -> None:
        self._pyramids_source: tuple[Pyramid, ...] | None = None
        self._pyramids = b""
        self._tricks_source: tuple[Trick, ...] | None = None
        self._tricks = b""
        self._talk_source: tuple[TalkMessage, ...] = ()
        self._talk = b""

    def serialize(self, obs: Observation) -> bytes:
        """The encoded ``pyramid.v1.Observation`` message."""
        if obs.pyramids is not self._pyramids_source:
            self._pyramids_source = obs.pyramids
            self._pyramids = b"".join([_pyramid_field(pyramid) for pyramid in obs.pyramids])
        if obs.tricks is not self._tricks_source:
            known = self._tricks_source or ()
            if obs.tricks[: len(known)] != known:  # a new deal: the engine only ever appends a trick
                known, self._tricks = (), b""
            self._tricks += b"".join([_finished_trick_field(trick) for trick in obs.tricks[len(known) :]])
            self._tricks_source = obs.tricks
        if obs.talk is not self._talk_source:
            self._talk_source = obs.talk
            self._talk = pb.Observation(
                talk=[pb.TalkMessage(seat=m.seat, trick=m.trick, text=m.text) for m in obs.talk]
            ).SerializeToString()
        return b"".join((_per_decision_fields(obs), self._talk, self._tricks, self._pyramids))


class _ActionField:
    """An action as one field of a message (tag ``key``). The 52 interned actions are encoded once and found
    by identity: the engine's legal actions are these, and hashing an action by value calls Python code
    for its card. Any other action is encoded on the spot."""

    def __init__(self, key: int) -> None:
        self.key = key
        self.by_id = {id(action): self.encode(action) for action in ACTIONS}

    def encode(self, action: Action) -> bytes:
        return _message(self.key, action_to_wire(action).SerializeToString())

    def __call__(self, action: Action) -> bytes:
        return self.by_id.get(id(action)) or self.encode(action)


_legal_action_field: Final = _ActionField(_REQUEST_LEGAL_ACTION)
_reply_action_field: Final = _ActionField(_REPLY_ACTION)


def legal_actions_field(actions: Sequence[Action]) -> bytes:
    """The encoded ``legal_actions`` field of an ``ActionRequest``."""
    field, by_id = _legal_action_field, _legal_action_field.by_id  # inlined: the hot path of a decision
    return b"".join([by_id.get(id(action)) or field.encode(action) for action in actions])


def match_id_field(match_id: str) -> bytes:
    """``ActionRequest.match_id``, encoded once per match."""
    return _message(_REQUEST_MATCH_ID, match_id.encode())


def time_left_fields(bank_ms: int, per_action_ms: int) -> bytes:
    """``ActionRequest.bank_ms`` and ``per_action_ms``; they change only when a bot thinks past its
    per-action limit, so a seat keeps the last encoding."""
    return _int(_REQUEST_BANK, bank_ms) + _int(_REQUEST_PER_ACTION, per_action_ms)


def action_request(
    request_id: int,
    match_id: bytes,
    observation: bytes,
    legal_actions: bytes,
    time_left: bytes,
    last_deal: bytes | None = None,
) -> bytes:
    """A whole ``ConnectResponse`` carrying an ``ActionRequest``. ``match_id`` comes from
    :func:`match_id_field`, ``observation`` and ``last_deal`` from :meth:`ObservationEncoder.serialize`,
    ``legal_actions`` from :func:`legal_actions_field`, ``time_left`` from :func:`time_left_fields`."""
    parts = [
        _REQUEST_ID_TAG,
        varint(request_id),
        match_id,
        _REQUEST_OBSERVATION_TAG,
        varint(len(observation)),
        observation,
        legal_actions,
        time_left,
    ]
    if last_deal is not None:
        parts += (_REQUEST_LAST_DEAL_TAG, varint(len(last_deal)), last_deal)
    return b"".join([_RESPONSE_ACTION_REQUEST_TAG, varint(sum(map(len, parts))), *parts])


def action_reply(request_id: int, action: Action | None, error: str = "", debug: bytes = b"") -> bytes:
    """A whole ``ConnectRequest`` carrying the reply to request ``request_id``: ``action`` with its talk,
    or no action at all (``None``), which the referee records at once as a fault, with ``error`` saying
    why (``"ValueError: oops"``: the fault reads "the bot raised ValueError: oops"); ``debug``, the bot's
    debug text in UTF-8, goes with either. ``TypeError`` if the talk is not text, ``ValueError``
    (``UnicodeEncodeError``) if it is not valid Unicode."""
    parts = [_REPLY_ID_TAG, varint(request_id)]
    if debug:
        parts.append(_message(_REPLY_DEBUG, debug))
    if error and action is None:
        parts.append(_message(_REPLY_ERROR, error.encode("utf-8", "replace")))
    if action is not None:
        parts.append(_reply_action_field(action))
        talk = getattr(action, "talk", None)
        if talk:
            if not isinstance(talk, str):
                raise TypeError(f"talk must be text, not {type(talk).__name__}")
            parts.append(_message(_REPLY_TALK, talk.encode()))
    return b"".join([_CONNECT_REQUEST_ACTION_TAG, varint(sum(map(len, parts))), *parts])
