from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ConnectResponseView(_message.Message):
    __slots__ = ("welcome", "match_start", "action_request", "match_end", "notice", "ping")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    ACTION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    welcome: bytes
    match_start: bytes
    action_request: ActionRequestView
    match_end: bytes
    notice: bytes
    ping: bytes
    def __init__(self, welcome: _Optional[bytes] = ..., match_start: _Optional[bytes] = ..., action_request: _Optional[_Union[ActionRequestView, _Mapping]] = ..., match_end: _Optional[bytes] = ..., notice: _Optional[bytes] = ..., ping: _Optional[bytes] = ...) -> None: ...

class ActionRequestView(_message.Message):
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
    observation: bytes
    legal_actions: _containers.RepeatedScalarFieldContainer[bytes]
    bank_ms: int
    per_action_ms: int
    last_deal: bytes
    def __init__(self, request_id: _Optional[int] = ..., match_id: _Optional[str] = ..., observation: _Optional[bytes] = ..., legal_actions: _Optional[_Iterable[bytes]] = ..., bank_ms: _Optional[int] = ..., per_action_ms: _Optional[int] = ..., last_deal: _Optional[bytes] = ...) -> None: ...

class ConnectRequestView(_message.Message):
    __slots__ = ("hello", "action")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    hello: bytes
    action: ActionReplyView
    def __init__(self, hello: _Optional[bytes] = ..., action: _Optional[_Union[ActionReplyView, _Mapping]] = ...) -> None: ...

class ActionReplyView(_message.Message):
    __slots__ = ("request_id",)
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    def __init__(self, request_id: _Optional[int] = ...) -> None: ...
