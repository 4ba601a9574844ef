"""The referee's gRPC server: handshake, authentication and the health service; nothing else.

The servicer is thin on purpose (gRPC route_guide style): it checks the hello, hands the stream to a
:class:`~referee.match.sessions.Session`, and returns when the session ends. Matches are driven elsewhere.
"""

from __future__ import annotations

import asyncio
import os
from typing import Final

from pyramid_sdk import transport

transport.configure()  # before gRPC loads: it reads its settings once (see pyramid_sdk.transport)
# isort: split
import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from pyramid_sdk.handshake import PROTOCOL_VERSION
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import pyramid_pb2_grpc as pb_grpc
from referee.match.sessions import Context, SessionRegistry, decode_request

MAX_TRANSPORT_BYTES: Final = 1024 * 1024
"""Past this the transport cuts a bot's stream; below it, sessions.MAX_MESSAGE_BYTES is a fault."""

SERVER_OPTIONS: Final = (
    ("grpc.so_reuseport", 0),
    ("grpc.max_receive_message_length", MAX_TRANSPORT_BYTES),
    ("grpc.max_send_message_length", 4 * 1024 * 1024),
    # No keepalive pings (gRPC's servers send one every two hours by default). A Python bot reads its
    # socket only while it waits for the referee (pyramid_sdk.stream.ThreadStream), so a ping sent while
    # it thinks would go unanswered, and gRPC cuts a connection whose ping waits a minute. A bot process
    # that dies is seen by its launcher anyway, and its stream ends.
    ("grpc.keepalive_time_ms", 2**31 - 1),
)

HELLO_TIMEOUT: Final = 10.0
"""Seconds a new connection has to say hello (a Python bot's imports take most of it on a busy machine)."""


class RefereeServicer(pb_grpc.RefereeServiceServicer):
    def __init__(self, registry: SessionRegistry, hello_timeout: float = HELLO_TIMEOUT) -> None:
        self._registry = registry
        self._hello_timeout = hello_timeout

    async def Connect(self, request_iterator: object, context: Context) -> None:
        try:
            first = await asyncio.wait_for(context.read(), self._hello_timeout)
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED, f"no hello within {self._hello_timeout:g}s"
            )
            return
        message = decode_request(first) if isinstance(first, bytes) else None  # None: grpc.aio.EOF
        if isinstance(message, str):  # bytes that are no message: say why, on one line
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the first message is no hello: {message}")
            return
        if message is None or message.WhichOneof("kind") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a hello")
            return
        hello = message.hello
        if hello.protocol_version != PROTOCOL_VERSION:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol version {hello.protocol_version} is not supported: "
                f"this referee speaks {PROTOCOL_VERSION}",
            )
            return
        session = self._registry.attach(hello.token, hello, context)
        if session is None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "missing, unknown or already used token, or its process has ended",
            )
            return
        welcome = pb.Welcome(protocol_version=PROTOCOL_VERSION, session_id=session.session_id)
        await session.send(pb.ConnectResponse(welcome=welcome).SerializeToString())
        await session.serve()
        if session.status is not grpc.StatusCode.OK:  # the referee was interrupted: CANCELLED
            await context.abort(session.status, session.close_reason)


SERVICE: Final = pb.DESCRIPTOR.services_by_name["RefereeService"].full_name


def _add_referee_service(servicer: RefereeServicer, server: grpc.aio.Server) -> None:
    """Registers the servicer as the generated ``add_RefereeServiceServicer_to_server`` does, except that
    messages pass as bytes both ways. Responses go out as the bytes the referee wrote (it serialises every
    message itself, the action requests with ``pyramid_sdk.encoding``). Requests come in undecoded: a
    deserializer that fails breaks the whole stream, which would turn a bot's garbage into a disconnect
    that forfeits its seat, so the session parses them and makes garbage a malformed fault instead."""
    handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
        "Connect": grpc.stream_stream_rpc_method_handler(
            servicer.Connect, request_deserializer=None, response_serializer=None
        )
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    server.add_registered_method_handlers(SERVICE, handlers)


async def create_server(
    registry: SessionRegistry, address: str = "127.0.0.1:0", hello_timeout: float = HELLO_TIMEOUT
) -> tuple[grpc.aio.Server, int]:
    """A started server on ``address`` and the port it took: loopback, any free port by default, or a
    ``unix:PATH`` socket (the launcher's choice: a sandboxed bot has no network, only that socket)."""
    server = grpc.aio.server(options=list(SERVER_OPTIONS))
    _add_referee_service(RefereeServicer(registry, hello_timeout), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    await server.start()
    if address.startswith("unix:"):
        os.chmod(address.removeprefix("unix:"), 0o666)  # bots may run under uids of their own
    await health_servicer.set("pyramid.v1.RefereeService", health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    return server, port
