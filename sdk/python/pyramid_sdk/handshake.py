"""A bot's first message, written in protobuf's wire format by hand, with nothing imported.

Every match starts fresh bot processes, so a Python bot pays its start-up four times a match. Importing
protobuf and the generated classes takes about as long as importing gRPC itself, and a bot needs none of
it to say hello: :mod:`pyramid_sdk.client` sends the bytes written here, and loads protobuf and the game's
wire format with the referee's first answer (:mod:`pyramid_sdk.dispatch`). The tags below are those of
``pyramid.proto``; ``tests/test_wire.py`` checks that these bytes are what the generated classes write.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = 1
"""The protocol version a bot speaks (``Hello.protocol_version``; the referee answers a mismatch)."""
CONNECT: Final = "/pyramid.v1.RefereeService/Connect"
"""The full name of the bot's stream method: ``pyramid.v1`` is the proto package."""

_HELLO: Final = 0x0A
"""``ConnectRequest.hello``: field 1, length-delimited."""
_VERSION, _TOKEN, _NAME, _BOT_VERSION, _MAX_MATCHES = 0x08, 0x12, 0x1A, 0x22, 0x28
"""``Hello``'s fields 1 (a varint) to 4 (strings), and 5 (a varint)."""


def varint(value: int) -> bytes:
    """``value`` as a base-128 varint; a negative one as its 64-bit two's complement, as protobuf does.

    >>> varint(1), varint(300), varint(-1)[-1]
    (b'\\x01', b'\\xac\\x02', 1)
    """
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _text(key: int, text: str) -> bytes:
    if not isinstance(text, str):  # as the generated classes would say
        raise TypeError(f"a Hello's name, version and token are text, not {type(text).__name__}")
    data = text.encode()
    return bytes((key,)) + varint(len(data)) + data if data else b""


def hello_request(
    token: str, bot_name: str, bot_version: str, version: int = PROTOCOL_VERSION, max_matches: int = 0
) -> bytes:
    """A whole ``ConnectRequest`` carrying the bot's ``Hello``; proto3 leaves out empty fields (so a bot
    that asks for no more than one match at a time sends the bytes a bot before ``max_matches`` sent).

    >>> hello_request("t", "me", "")
    b'\\n\\t\\x08\\x01\\x12\\x01t\\x1a\\x02me'
    >>> hello_request("t", "", "", max_matches=3)
    b'\\n\\x07\\x08\\x01\\x12\\x01t(\\x03'
    """
    body = b"".join(
        (
            bytes((_VERSION,)) + varint(version) if version else b"",
            _text(_TOKEN, token),
            _text(_NAME, bot_name),
            _text(_BOT_VERSION, bot_version),
            bytes((_MAX_MATCHES,)) + varint(max_matches) if max_matches else b"",
        )
    )
    return bytes((_HELLO,)) + varint(len(body)) + body
