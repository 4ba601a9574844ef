from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FaultKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_KIND_UNSPECIFIED: _ClassVar[FaultKind]
    FAULT_KIND_TIMEOUT: _ClassVar[FaultKind]
    FAULT_KIND_ILLEGAL_ACTION: _ClassVar[FaultKind]
    FAULT_KIND_MALFORMED: _ClassVar[FaultKind]
    FAULT_KIND_DISCONNECT: _ClassVar[FaultKind]
    FAULT_KIND_TALK: _ClassVar[FaultKind]

class Suit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUIT_UNSPECIFIED: _ClassVar[Suit]
    SUIT_SPADES: _ClassVar[Suit]
    SUIT_HEARTS: _ClassVar[Suit]
    SUIT_DIAMONDS: _ClassVar[Suit]
    SUIT_CLUBS: _ClassVar[Suit]

class TrickWinner(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRICK_WINNER_UNSPECIFIED: _ClassVar[TrickWinner]
    TRICK_WINNER_LED_SUIT: _ClassVar[TrickWinner]
    TRICK_WINNER_HIGHEST_RANK: _ClassVar[TrickWinner]

class TalkMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TALK_MODE_UNSPECIFIED: _ClassVar[TalkMode]
    TALK_MODE_OPEN: _ClassVar[TalkMode]
    TALK_MODE_DEFENDERS: _ClassVar[TalkMode]
    TALK_MODE_OFF: _ClassVar[TalkMode]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_DECLARE: _ClassVar[Phase]
    PHASE_PLAY: _ClassVar[Phase]
    PHASE_DEAL_OVER: _ClassVar[Phase]
    PHASE_MATCH_OVER: _ClassVar[Phase]
FAULT_KIND_UNSPECIFIED: FaultKind
FAULT_KIND_TIMEOUT: FaultKind
FAULT_KIND_ILLEGAL_ACTION: FaultKind
FAULT_KIND_MALFORMED: FaultKind
FAULT_KIND_DISCONNECT: FaultKind
FAULT_KIND_TALK: FaultKind
SUIT_UNSPECIFIED: Suit
SUIT_SPADES: Suit
SUIT_HEARTS: Suit
SUIT_DIAMONDS: Suit
SUIT_CLUBS: Suit
TRICK_WINNER_UNSPECIFIED: TrickWinner
TRICK_WINNER_LED_SUIT: TrickWinner
TRICK_WINNER_HIGHEST_RANK: TrickWinner
TALK_MODE_UNSPECIFIED: TalkMode
TALK_MODE_OPEN: TalkMode
TALK_MODE_DEFENDERS: TalkMode
TALK_MODE_OFF: TalkMode
PHASE_UNSPECIFIED: Phase
PHASE_DECLARE: Phase
PHASE_PLAY: Phase
PHASE_DEAL_OVER: Phase
PHASE_MATCH_OVER: Phase

class ConnectRequest(_message.Message):
    __slots__ = ("hello", "action", "pong")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: ActionReply
    pong: Pong
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[ActionReply, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ("welcome", "match_start", "action_request", "match_end", "notice", "ping")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    ACTION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    match_start: MatchStart
    action_request: ActionRequest
    match_end: MatchEnd
    notice: Notice
    ping: Ping
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., action_request: _Optional[_Union[ActionRequest, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ..., notice: _Optional[_Union[Notice, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("protocol_version", "token", "bot_name", "bot_version", "max_matches")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    token: str
    bot_name: str
    bot_version: str
    max_matches: int
    def __init__(self, protocol_version: _Optional[int] = ..., token: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., max_matches: _Optional[int] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("protocol_version", "session_id", "remote", "max_matches")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REMOTE_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    session_id: str
    remote: bool
    max_matches: int
    def __init__(self, protocol_version: _Optional[int] = ..., session_id: _Optional[str] = ..., remote: _Optional[bool] = ..., max_matches: _Optional[int] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class Pong(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("per_action_ms", "bank_ms")
    PER_ACTION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    per_action_ms: int
    bank_ms: int
    def __init__(self, per_action_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "seat", "seat_names", "rules", "time_control", "seed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    rules: Rules
    time_control: TimeControl
    seed: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., seed: _Optional[int] = ...) -> None: ...

class ActionRequest(_message.Message):
    __slots__ = ("request_id", "match_id", "observation", "legal_actions", "bank_ms", "per_action_ms", "last_deal")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    PER_ACTION_MS_FIELD_NUMBER: _ClassVar[int]
    LAST_DEAL_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    match_id: str
    observation: Observation
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    bank_ms: int
    per_action_ms: int
    last_deal: Observation
    def __init__(self, request_id: _Optional[int] = ..., match_id: _Optional[str] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., bank_ms: _Optional[int] = ..., per_action_ms: _Optional[int] = ..., last_deal: _Optional[_Union[Observation, _Mapping]] = ...) -> None: ...

class ActionReply(_message.Message):
    __slots__ = ("request_id", "action", "talk", "error", "debug")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    TALK_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DEBUG_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: Action
    talk: str
    error: str
    debug: str
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., talk: _Optional[str] = ..., error: _Optional[str] = ..., debug: _Optional[str] = ...) -> None: ...

class Fault(_message.Message):
    __slots__ = ("seat", "deal", "kind", "detail")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    deal: int
    kind: FaultKind
    detail: str
    def __init__(self, seat: _Optional[int] = ..., deal: _Optional[int] = ..., kind: _Optional[_Union[FaultKind, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("match_id", "totals", "ranks", "faults", "forfeited", "last_deal")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    LAST_DEAL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    totals: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    faults: _containers.RepeatedCompositeFieldContainer[Fault]
    forfeited: bool
    last_deal: Observation
    def __init__(self, match_id: _Optional[str] = ..., totals: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., faults: _Optional[_Iterable[_Union[Fault, _Mapping]]] = ..., forfeited: _Optional[bool] = ..., last_deal: _Optional[_Union[Observation, _Mapping]] = ...) -> None: ...

class Notice(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class Rules(_message.Message):
    __slots__ = ("players", "trick_winner", "talk", "talk_max_length", "talk_max_per_trick")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TRICK_WINNER_FIELD_NUMBER: _ClassVar[int]
    TALK_FIELD_NUMBER: _ClassVar[int]
    TALK_MAX_LENGTH_FIELD_NUMBER: _ClassVar[int]
    TALK_MAX_PER_TRICK_FIELD_NUMBER: _ClassVar[int]
    players: int
    trick_winner: TrickWinner
    talk: TalkMode
    talk_max_length: int
    talk_max_per_trick: int
    def __init__(self, players: _Optional[int] = ..., trick_winner: _Optional[_Union[TrickWinner, str]] = ..., talk: _Optional[_Union[TalkMode, str]] = ..., talk_max_length: _Optional[int] = ..., talk_max_per_trick: _Optional[int] = ...) -> None: ...

class Declaration(_message.Message):
    __slots__ = ("tricks", "trump")
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    tricks: int
    trump: Suit
    def __init__(self, tricks: _Optional[int] = ..., trump: _Optional[_Union[Suit, str]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("declare", "card")
    DECLARE_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    declare: Declaration
    card: str
    def __init__(self, declare: _Optional[_Union[Declaration, _Mapping]] = ..., card: _Optional[str] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("leader", "cards", "winner")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    leader: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    winner: int
    def __init__(self, leader: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., winner: _Optional[int] = ...) -> None: ...

class TalkMessage(_message.Message):
    __slots__ = ("seat", "trick", "text")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    trick: int
    text: str
    def __init__(self, seat: _Optional[int] = ..., trick: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class PyramidEntry(_message.Message):
    __slots__ = ("declared", "taken", "points")
    DECLARED_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    declared: int
    taken: int
    points: int
    def __init__(self, declared: _Optional[int] = ..., taken: _Optional[int] = ..., points: _Optional[int] = ...) -> None: ...

class Pyramid(_message.Message):
    __slots__ = ("entries", "remaining", "total")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[PyramidEntry]
    remaining: _containers.RepeatedScalarFieldContainer[int]
    total: int
    def __init__(self, entries: _Optional[_Iterable[_Union[PyramidEntry, _Mapping]]] = ..., remaining: _Optional[_Iterable[int]] = ..., total: _Optional[int] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "phase", "deal_number", "dealer", "declarer", "to_act", "hand", "declaration", "current_trick", "tricks", "taken", "pyramids", "talk", "forfeited")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    DECLARER_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    DECLARATION_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    PYRAMIDS_FIELD_NUMBER: _ClassVar[int]
    TALK_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    phase: Phase
    deal_number: int
    dealer: int
    declarer: int
    to_act: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    declaration: Declaration
    current_trick: Trick
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    taken: _containers.RepeatedScalarFieldContainer[int]
    pyramids: _containers.RepeatedCompositeFieldContainer[Pyramid]
    talk: _containers.RepeatedCompositeFieldContainer[TalkMessage]
    forfeited: _containers.RepeatedScalarFieldContainer[bool]
    def __init__(self, seat: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., deal_number: _Optional[int] = ..., dealer: _Optional[int] = ..., declarer: _Optional[int] = ..., to_act: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., declaration: _Optional[_Union[Declaration, _Mapping]] = ..., current_trick: _Optional[_Union[Trick, _Mapping]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., taken: _Optional[_Iterable[int]] = ..., pyramids: _Optional[_Iterable[_Union[Pyramid, _Mapping]]] = ..., talk: _Optional[_Iterable[_Union[TalkMessage, _Mapping]]] = ..., forfeited: _Optional[_Iterable[bool]] = ...) -> None: ...
