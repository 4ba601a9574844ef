"""The remote door in the test's own process, on real gRPC with real TLS, and what comes to it: raw
gRPC streams, as a hostile peer would write them, and real SDK bot processes. The certificates are
:mod:`support.tls`'s."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc

from pyramid_sdk.bot import TimeControl
from pyramid_sdk.handshake import PROTOCOL_VERSION
from pyramid_sdk.v1 import pyramid_pb2 as pb
from referee.remote.door import Door, Keepalive, open_door
from referee.remote.front import Limits
from referee.remote.lobby import Lobby
from referee.remote.settings import RemoteSettings
from referee.remote.tokens import TokenBook
from support.remote import remote_env, start_bot
from support.tls import Certificates

CONNECT = "/pyramid.v1.RefereeService/Connect"
"""The one RPC a bot calls, as a raw client names it."""


@dataclass
class Doorway:
    """An open door: its token book and lobby, the port it listens on, and the CA a client trusts."""

    door: Door
    lobby: Lobby
    book: TokenBook
    port: int
    ca: bytes


LEAGUE_KEEPALIVE = Keepalive.for_time(TimeControl())
"""The transport keepalive a league with the default clock gets."""


@asynccontextmanager
async def doorway(
    tmp_path: Path,
    certs: Certificates,
    keepalive: Keepalive = LEAGUE_KEEPALIVE,
    names: tuple[str, ...] = ("far", "near"),
    limits: Limits | None = None,
    lobby: Lobby | None = None,
    max_matches: int = 1,
) -> AsyncIterator[Doorway]:
    book = TokenBook(tmp_path / "tokens.json")
    lobby = lobby if lobby is not None else Lobby(wait=2.0)
    door = Door(book, names, lobby, max_matches=max_matches)
    lobby.valid = door.still_valid
    settings = RemoteSettings("127.0.0.1:0", certs.cert, certs.key)
    server, port = await open_door(door, settings, keepalive, limits)
    try:
        yield Doorway(door, lobby, book, port, certs.ca.read_bytes())
    finally:
        lobby.close()
        await server.stop(grace=1.0)


def hello(token: str, name: str = "bot", max_matches: int = 0) -> bytes:
    said = pb.Hello(protocol_version=PROTOCOL_VERSION, token=token, bot_name=name, max_matches=max_matches)
    return pb.ConnectRequest(hello=said).SerializeToString()


@asynccontextmanager
async def stream(way: Doorway, tls: bool = True) -> AsyncIterator[grpc.aio.StreamStreamCall]:
    if tls:
        credentials = grpc.ssl_channel_credentials(way.ca)
        channel = grpc.aio.secure_channel(f"localhost:{way.port}", credentials)
    else:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{way.port}")
    async with channel:
        yield channel.stream_stream(CONNECT, request_serializer=None, response_deserializer=None)()


async def refusal(way: Doorway, first: bytes, tls: bool = True) -> tuple[grpc.StatusCode, str]:
    """What the door answers a connection that sends ``first`` and waits."""
    async with stream(way, tls) as call:
        try:
            await call.write(first)
            message = await asyncio.wait_for(call.read(), 15)
        except grpc.aio.AioRpcError:
            # The door may end the call before it reads the hello (a shut-out address): the write then
            # fails on the transport, and the door's answer is the status the call ended with.
            return await asyncio.wait_for(call.code(), 15), await call.details() or ""
        assert message is grpc.aio.EOF, pb.ConnectResponse.FromString(message)
        return await call.code(), await call.details()


@dataclass
class Client:
    """An admitted raw connection whose pings are answered as a bot's SDK answers them, by a task that
    ends with the status its stream ended with."""

    call: grpc.aio.StreamStreamCall
    welcome: pb.Welcome
    answering: asyncio.Task[grpc.StatusCode]

    async def ended(self, seconds: float = 5) -> grpc.StatusCode:
        return await asyncio.wait_for(asyncio.shield(self.answering), seconds)


async def answer_pings(call: grpc.aio.StreamStreamCall) -> grpc.StatusCode:
    while True:
        try:
            data = await call.read()
        except grpc.aio.AioRpcError as exc:
            return exc.code()
        if data is grpc.aio.EOF:
            return await call.code()
        message = pb.ConnectResponse.FromString(data)
        if message.HasField("ping"):
            await call.write(pb.ConnectRequest(pong=pb.Pong(nonce=message.ping.nonce)).SerializeToString())


async def admitted(way: Doorway, token: str, max_matches: int = 0) -> Client:
    """A connection that said hello with ``token`` (asking for ``max_matches`` at once), answered the
    door's pings, got its notice, and goes on answering pings."""
    call = grpc.aio.secure_channel(
        f"localhost:{way.port}", grpc.ssl_channel_credentials(way.ca)
    ).stream_stream(CONNECT, request_serializer=None, response_deserializer=None)()
    await call.write(hello(token, max_matches=max_matches))
    welcome = pb.ConnectResponse.FromString(await call.read()).welcome
    while True:
        message = pb.ConnectResponse.FromString(await call.read())
        if message.HasField("ping"):
            await call.write(pb.ConnectRequest(pong=pb.Pong(nonce=message.ping.nonce)).SerializeToString())
        else:
            assert "round trip" in message.notice.text
            return Client(call, welcome, asyncio.create_task(answer_pings(call)))


def sdk_bot(way: Doorway, tmp_path: Path, name: str, *command: str) -> subprocess.Popen[bytes]:
    """A real remote bot process of the Python SDK, holding ``name``'s token."""
    token = tmp_path / f"{name}.token"
    token.write_text(way.book.issue(name) + "\n")
    env = remote_env(f"localhost:{way.port}", token, tmp_path / "ca.pem")
    (tmp_path / "ca.pem").write_bytes(way.ca)
    return start_bot([sys.executable, *command], env, tmp_path / f"{name}.log")


async def until(condition: Callable[[], bool], seconds: float, what: str) -> float:
    """Seconds until ``condition`` held; fails the test after ``seconds``."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while not condition():
        assert loop.time() - started < seconds, f"not {what} within {seconds}s"
        await asyncio.sleep(0.05)
    return loop.time() - started
