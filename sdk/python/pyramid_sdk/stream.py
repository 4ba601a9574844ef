"""The bot's end of the Connect stream: send a reply, wait for the next message, as bytes.

A bot answers one request at a time, so that is all the SDK asks of its stream. gRPC's asyncio API
(:class:`AsyncioStream`) passes every message between two threads of the bot's process: gRPC's poller
thread reads the socket and wakes the event loop through a socket pair, and a write wakes both again to
report that it is done. Four bots and a referee on two cores pay those wake-ups on every decision.

:class:`ThreadStream` drives the call from the bot's own thread instead, through a completion queue of
its own, as grpcio's synchronous API does for its single-threaded calls: the thread that waits for a
message is the one that reads the socket, and each reply goes out in the same batch as the read of the
next message, so one decision wakes one thread once. On a two-core machine it takes about a fifth off a
decision (``benchmarks/README.md``). It uses grpcio's Cython layer (``grpc._cython.cygrpc``), which is
not a public API: the SDK uses it only with the grpcio versions whose synchronous API makes the same
calls (``transport.CHECKED_VERSIONS``; exercised with 1.85), and ``PYRAMID_STREAM=asyncio`` switches it
off; elsewhere the SDK uses :class:`AsyncioStream`.

With :class:`ThreadStream`, the bot's thread does not read its socket while the bot thinks. That is safe
because the referee sends nothing that needs an answer before the bot's reply: to a sandboxed bot it
sends no keepalive pings (``referee/match/server.py``), and gRPC's other pings and settings go out while
the bot is waiting, right after its reply arrives. Messages sent meanwhile wait in the socket. gRPC's
own threads still poll it every 5 s (its backup poller; measured with grpcio 1.85: a ThreadStream bot
busy 8 s answers a server's transport PINGs within a 7 s timeout, not within 2 s), so the transport's
PINGs of a remote connection (``referee/remote/door.py``, ``Keepalive``) and of the bot's own keepalive
(:mod:`pyramid_sdk.remote`) are answered while it thinks: they tell that the process is there, not that
the bot is free. The protocol's ``Ping`` tells that; the SDK answers it on the bot's thread, between two
decisions (:mod:`pyramid_sdk.dispatch`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Final

from pyramid_sdk import transport

# isort: split
import grpc

cygrpc: Any = importlib.import_module("grpc._cython.cygrpc")  # untyped, and absent from grpc's stubs

ENV_STREAM: Final = "PYRAMID_STREAM"
"""``thread`` (the default where it works) or ``asyncio``: which stream the SDK uses."""


def single_thread() -> bool:
    """Whether this process should use :class:`ThreadStream`; ``ValueError`` for an unknown
    ``PYRAMID_STREAM``."""
    choice = os.environ.get(ENV_STREAM, "").strip().lower()
    if choice not in ("", "thread", "asyncio"):
        raise ValueError(f"{ENV_STREAM}={choice!r} is not a stream: use 'thread' or 'asyncio'")
    return choice != "asyncio" and transport.grpcio_checked()


class StreamEnded(Exception):
    """The stream ended with an error status: refused, cut, or the referee is gone."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


_STATUS_CODES: Final = {code.value[0]: code for code in grpc.StatusCode}
_MESSAGE: Final = "message"
_METADATA: Final = "metadata"
_STATUS: Final = "status"
_NO_FLAGS: Final = 0


class ThreadStream:
    """One Connect call, driven from the calling thread. ``first`` (the hello) is sent as the call
    starts; then :meth:`exchange` sends each reply and returns the next message."""

    def __init__(
        self,
        address: str,
        method: str,
        first: bytes,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, int]] = (),
    ) -> None:
        self._channel = (
            grpc.secure_channel(address, credentials, options)
            if credentials
            else grpc.insecure_channel(address, options)
        )
        self._status: tuple[grpc.StatusCode, str] | None = None
        self._receiving = True
        self._unanswerable = False
        """A reply failed to go out: the referee ended the stream; what is left is read, unanswered."""
        batches = (
            (
                (
                    cygrpc.SendInitialMetadataOperation(None, _NO_FLAGS),
                    cygrpc.SendMessageOperation(first, _NO_FLAGS),
                    cygrpc.ReceiveMessageOperation(_NO_FLAGS),
                ),
                _MESSAGE,
            ),
            ((cygrpc.ReceiveInitialMetadataOperation(_NO_FLAGS),), _METADATA),
            ((cygrpc.ReceiveStatusOnClientOperation(_NO_FLAGS),), _STATUS),
        )
        self._call = self._channel._channel.segregated_call(  # type: ignore[attr-defined]
            cygrpc.PropagationConstants.GRPC_PROPAGATE_DEFAULTS,
            method.encode(),
            None,  # host
            None,  # no deadline: the stream lasts as long as the referee wants the bot
            None,  # metadata
            None,  # credentials
            batches,
            cygrpc.build_census_context(),
            None,  # not a registered method
        )

    def exchange(self, reply: bytes | None) -> bytes | None:
        """Sends ``reply`` (if any) and returns the next message; ``None`` once the referee has ended the
        stream, :class:`StreamEnded` if it ended with an error. The first call's ``reply`` is ignored: the
        hello went with the call.

        A reply that cannot be sent means the referee ended the stream while the bot thought (it gave up
        on the bot, or its connection was cut). Every message it sent before that is then past answering,
        and gRPC hands out the stream's status only once they have all been read: they are read and
        dropped, and the status is what the exchange reports. (Waiting for that status without reading
        them waits for ever: a bot frozen mid-match, woken after its connection was cut, did.)"""
        if not self._receiving and self._status is None:
            self._receive(None if self._unanswerable else reply)
        while self._receiving or self._status is None:
            try:
                event = self._call.next_event()
            except BaseException:
                # A signal handler raised (KeyboardInterrupt); gRPC has released the call.
                self._receiving, self._status = False, (grpc.StatusCode.CANCELLED, "interrupted")
                raise
            if event.tag == _MESSAGE:
                self._receiving = False
                message: bytes | None = event.batch_operations[-1].message()  # the batch's receive
                failed_now = not event.success and not self._unanswerable
                self._unanswerable = self._unanswerable or not event.success
                if not self._unanswerable:
                    if message is not None:
                        return message
                elif self._status is None and (message is not None or failed_now):
                    self._receive(None)  # the next message past answering, until there is none
            elif event.tag == _STATUS:
                (operation,) = event.batch_operations
                code = _STATUS_CODES.get(operation.code(), grpc.StatusCode.UNKNOWN)
                self._status = (code, operation.details() or "")
        code, details = self._status
        if code is not grpc.StatusCode.OK:
            raise StreamEnded(code, details)
        return None

    def _receive(self, reply: bytes | None) -> None:
        """Starts the batch that sends ``reply`` (if any) and receives the next message."""
        operations: tuple[Any, ...] = (cygrpc.ReceiveMessageOperation(_NO_FLAGS),)
        if reply is not None:
            operations = (cygrpc.SendMessageOperation(reply, _NO_FLAGS), *operations)
        # gRPC takes a batch as long as a batch of the call is due, and the status batch is.
        if not self._call.operate(operations, _MESSAGE):
            raise RuntimeError("gRPC released the stream before its status came")
        self._receiving = True

    def close(self) -> None:
        """Closes the channel, cancelling the call if the referee has not ended it."""
        self._channel.close()

    def __enter__(self) -> ThreadStream:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


class AsyncioStream:
    """:class:`ThreadStream`'s contract over gRPC's public asyncio API, but for one case: when the referee
    ends the call while the bot thinks, the reply's write fails, and gRPC's asyncio API reports the call
    as ended with ``INTERNAL`` in place of the referee's status (``StreamEnded`` carries that)."""

    def __init__(
        self,
        address: str,
        method: str,
        first: bytes,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, int]] = (),
    ) -> None:
        self._channel = (
            grpc.aio.secure_channel(address, credentials, options)
            if credentials
            else grpc.aio.insecure_channel(address, options)
        )
        self._call: grpc.aio.StreamStreamCall[bytes, bytes] = self._channel.stream_stream(
            method, request_serializer=None, response_deserializer=None
        )()
        self._first: bytes | None = first
        self._ended = False

    async def exchange(self, reply: bytes | None) -> bytes | None:
        """As :meth:`ThreadStream.exchange`."""
        if self._first is not None:
            reply, self._first = self._first, None
        # A write to a call the referee has ended fails in more than one way: its status says why it ended.
        with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):
            if not self._ended:
                if reply is not None:
                    await self._call.write(reply)
                message = await self._call.read()
                if isinstance(message, bytes):
                    return message
        self._ended = True
        code = await self._call.code()
        if code is not grpc.StatusCode.OK:
            raise StreamEnded(code, await self._call.details() or "")
        return None

    async def close(self) -> None:
        """Closes the channel, cancelling the call if the referee has not ended it."""
        await self._channel.close()

    async def __aenter__(self) -> AsyncioStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()
