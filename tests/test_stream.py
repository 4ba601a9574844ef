"""The SDK's two streams keep one contract, checked against a real gRPC server on loopback: messages in
order, each reply delivered, ``None`` at a clean end, :class:`StreamEnded` with the status otherwise."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from pyramid_sdk.client import CONNECT
from pyramid_sdk.stream import ENV_STREAM, AsyncioStream, StreamEnded, ThreadStream
from pyramid_sdk.transport import grpcio_checked
from support import ROOT

Script = Callable[[Any, list[bytes]], Any]
"""What the server does on one call: ``(context, received)``, a coroutine function."""


class Server:
    """A gRPC server on its own thread and loop, running ``script`` for every call of the Connect method
    and keeping what each call received."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.received: list[bytes] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)

    async def _start(self) -> grpc.aio.Server:
        async def connect(request_iterator: object, context: Any) -> None:
            await self.script(context, self.received)

        service, method = CONNECT.strip("/").split("/")
        handler = grpc.stream_stream_rpc_method_handler(connect)  # bytes in, bytes out
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, {method: handler}),))
        self.port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        return server

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._server.stop(None), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def exchange_all(
    kind: str, port: int, replies: dict[bytes, bytes], seen: list[bytes | None] | None = None
) -> list[bytes | None]:
    """Opens a stream of ``kind`` with the hello ``b"hi"``, answers each message with ``replies[message]``
    (or nothing), and returns ``seen`` with what each exchange returned appended, up to and including its
    first ``None``."""
    address = f"127.0.0.1:{port}"
    seen = [] if seen is None else seen
    if kind == "thread":
        with ThreadStream(address, CONNECT, b"hi") as stream:
            reply = None
            while True:
                message = stream.exchange(reply)
                seen.append(message)
                if message is None:
                    seen.append(stream.exchange(None))  # asking again after the end is harmless
                    return seen
                reply = replies.get(message)

    async def main() -> None:
        async with AsyncioStream(address, CONNECT, b"hi") as stream:
            reply = None
            while True:
                message = await stream.exchange(reply)
                seen.append(message)
                if message is None:
                    seen.append(await stream.exchange(None))
                    return
                reply = replies.get(message)

    asyncio.run(main())
    return seen


def reply_late(kind: str, port: int) -> list[bytes | None]:
    """Reads one message, thinks half a second, answers, and returns both results."""
    address = f"127.0.0.1:{port}"
    if kind == "thread":
        with ThreadStream(address, CONNECT, b"hi") as stream:
            first = stream.exchange(None)
            time.sleep(0.5)
            return [first, stream.exchange(b"late")]

    async def main() -> list[bytes | None]:
        async with AsyncioStream(address, CONNECT, b"hi") as stream:
            first = await stream.exchange(None)
            time.sleep(0.5)  # blocking, as a bot's method blocks the SDK's loop
            return [first, await stream.exchange(b"late")]

    return asyncio.run(main())


KINDS = [
    pytest.param(
        "thread",
        marks=pytest.mark.skipif(not grpcio_checked(), reason="grpcio outside the versions checked"),
    ),
    "asyncio",
]


@pytest.fixture
def server_with() -> Iterator[Callable[[Script], Server]]:
    servers: list[Server] = []

    def start(script: Script) -> Server:
        servers.append(Server(script))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


@pytest.mark.parametrize("kind", KINDS)
def test_messages_and_replies_in_order_then_a_clean_end(kind, server_with):
    async def script(context: Any, received: list[bytes]) -> None:
        received.append(await context.read())  # the hello
        for question in (b"one", b"two", b"three"):
            await context.write(question)
            if question != b"two":  # the bot answers every message but this one
                received.append(await context.read())

    server = server_with(script)
    seen = exchange_all(kind, server.port, {b"one": b"1", b"three": b"3"})
    assert seen == [b"one", b"two", b"three", None, None]
    assert server.received == [b"hi", b"1", b"3"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_refusal_ends_the_stream_with_its_status(kind, server_with):
    async def script(context: Any, received: list[bytes]) -> None:
        received.append(await context.read())
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing, unknown or already used token")

    server = server_with(script)
    with pytest.raises(StreamEnded) as ended:
        exchange_all(kind, server.port, {})
    assert ended.value.code is grpc.StatusCode.UNAUTHENTICATED
    assert ended.value.details == "missing, unknown or already used token"
    assert str(ended.value) == "UNAUTHENTICATED: missing, unknown or already used token"


@pytest.mark.parametrize("kind", KINDS)
def test_an_error_after_messages_still_delivers_the_messages_first(kind, server_with):
    async def script(context: Any, received: list[bytes]) -> None:
        await context.read()
        await context.write(b"last words")
        await context.abort(grpc.StatusCode.INTERNAL, "the referee failed")

    server = server_with(script)
    seen: list[bytes | None] = []
    with pytest.raises(StreamEnded) as ended:
        exchange_all(kind, server.port, {}, seen)
    assert ended.value.code is grpc.StatusCode.INTERNAL
    assert seen == [b"last words"]


@pytest.mark.parametrize("kind", KINDS)
def test_no_server_is_unavailable(kind):
    with pytest.raises(StreamEnded) as ended:
        exchange_all(kind, 1, {})  # port 1: nothing listens there
    assert ended.value.code is grpc.StatusCode.UNAVAILABLE


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("status", [grpc.StatusCode.OK, grpc.StatusCode.CANCELLED, grpc.StatusCode.INTERNAL])
def test_a_call_ended_while_the_bot_thinks_ends_with_its_own_status(kind, status, server_with):
    """The referee ends a bot's stream while the bot thinks when it releases the bot or gives up on it."""

    async def script(context: Any, received: list[bytes]) -> None:
        await context.read()
        await context.write(b"think")
        if status is not grpc.StatusCode.OK:
            await context.abort(status, "gone")

    server = server_with(script)
    if kind == "asyncio":
        # gRPC's asyncio API mostly turns the failed write into INTERNAL, whatever the status (see
        # AsyncioStream); when the status reaches it before the write, it is the referee's own.
        try:
            outcome: object = reply_late(kind, server.port)
        except StreamEnded as ended:
            outcome = ended.code
        allowed = [grpc.StatusCode.INTERNAL, status]
        assert outcome in allowed + ([[b"think", None]] if status is grpc.StatusCode.OK else [])
        return
    if status is grpc.StatusCode.OK:
        assert reply_late(kind, server.port) == [b"think", None]
        return
    with pytest.raises(StreamEnded) as ended:
        reply_late(kind, server.port)
    assert (ended.value.code, ended.value.details) == (status, "gone")


@pytest.mark.parametrize("kind", KINDS)
def test_a_reply_that_cannot_go_out_ends_with_the_status_though_messages_wait_unread(kind, server_with):
    """The referee sent more, then ended the stream, while the bot thought (a bot frozen mid-match, its
    connection cut meanwhile): the reply fails, and gRPC gives the status only once the messages before
    it are read. ThreadStream reads and drops them and reports the referee's status; it used to wait for
    that status for ever. (gRPC's asyncio API reports ``INTERNAL``, as above.)"""

    async def script(context: Any, received: list[bytes]) -> None:
        await context.read()
        for message in (b"think", b"more", b"and more"):
            await context.write(message)
        await context.abort(grpc.StatusCode.UNAVAILABLE, "ping timeout")

    server = server_with(script)
    ended: list[BaseException] = []

    def bot() -> None:
        try:
            reply_late(kind, server.port)
        except StreamEnded as exc:
            ended.append(exc)

    thread = threading.Thread(target=bot, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "the stream waited for ever"
    (exc,) = ended
    assert isinstance(exc, StreamEnded)
    if kind == "thread":
        assert (exc.code, exc.details) == (grpc.StatusCode.UNAVAILABLE, "ping timeout")
    else:
        assert exc.code is grpc.StatusCode.INTERNAL


@pytest.mark.slow
def test_an_unknown_stream_setting_stops_the_bot_with_one_line():
    environment = {**os.environ, ENV_STREAM: "threads", "PYRAMID_ADDRESS": "127.0.0.1:1"}
    result = subprocess.run(
        [sys.executable, "sample_bots/random_bot.py"],
        check=False,
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "random: PYRAMID_STREAM='threads' is not a stream: use 'thread' or 'asyncio'"
    ]
