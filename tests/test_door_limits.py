"""What a stranger's idle connections may hold at the remote door (issue #32, items 10 and 16): bare TCP
connections and finished TLS handshakes that never open a stream, from one address and from several, on
a real door with real sockets, with caps lowered so that a few dozen sockets reach them; an honest bot
connected meanwhile; refusals on the log, rate-limited; a token file the referee cannot read, which
must never become a verdict on a bot's token."""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from collections.abc import Awaitable

import grpc
import pytest

from referee.remote import door as door_module
from referee.remote.door import CANNOT_CHECK, REFUSED
from referee.remote.front import HANDSHAKE_TIMEOUT, Limits
from referee.remote.lobby import Lobby
from support.door import admitted, doorway, hello, refusal, until

LIMITS = Limits(per_address=6, total=18, handshake=3.0, idle=3.0)
"""Lowered caps and timeouts: six connections per address, eighteen in all, three seconds to shake hands
or open a stream."""
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""HTTP/2's client preface and an empty SETTINGS frame: a connection gRPC has accepted, with no stream."""


def tls_context(ca: bytes) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=ca.decode())
    context.set_alpn_protocols(["h2"])
    return context


async def idle_socket(
    port: int, source: str = "127.0.0.1", tls: ssl.SSLContext | None = None, preface: bool = False
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection that opens no stream: bare TCP, a finished TLS handshake, or TLS and HTTP/2's
    preface. A refused one may fail its handshake: it then comes back already closed."""
    reader, writer = await asyncio.open_connection(
        "127.0.0.1",
        port,
        local_addr=(source, 0),
        ssl=tls,
        server_hostname="localhost" if tls else None,
        ssl_handshake_timeout=5 if tls else None,
    )
    if preface:
        writer.write(PREFACE)
        await writer.drain()
    return reader, writer


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Whether the referee closed this connection within ``seconds`` (it never sends data unasked,
    except HTTP/2's SETTINGS once the preface came)."""
    try:
        async with asyncio.timeout(seconds):
            while await reader.read(65536):
                pass
    except TimeoutError:
        return False
    except (ConnectionError, ssl.SSLError):
        return True
    return True


async def attempt(port: int, source: str, tls: ssl.SSLContext | None, preface: bool = False) -> bool:
    """Whether a connection was still open half a second after it was made (held), not refused."""
    try:
        reader, writer = await idle_socket(port, source, tls, preface)
    except (ConnectionError, ssl.SSLError, TimeoutError):
        return False
    held = not await closed_within(reader, 0.5)
    HELD.append(writer)
    return held


HELD: list[asyncio.StreamWriter] = []


def close_all() -> None:
    for writer in HELD:
        writer.close()
    HELD.clear()


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


async def gather(attempts: list[Awaitable[bool]]) -> list[bool]:
    return list(await asyncio.gather(*attempts))


@pytest.mark.parametrize("kind", ["tcp", "tls", "h2"])
def test_idle_connections_are_capped_per_address_and_closed_without_a_stream(tmp_path, certs, kind):
    """30 idle connections from one address: six are held, the rest refused at once; the held ones are
    dropped within the handshake (or idle) timeout; four more addresses get six each, and past the
    door's eighteen no address gets any. An honest bot connected first stays connected and answers."""

    async def main() -> None:
        async with doorway(tmp_path, certs, limits=LIMITS) as way:
            client = await admitted(way, way.book.issue("far"))  # holds one of 127.0.0.1's six
            tls = tls_context(way.ca) if kind != "tcp" else None
            before = descriptors()
            held = await gather([attempt(way.port, "127.0.0.1", tls, kind == "h2") for _ in range(30)])
            assert sum(held) == LIMITS.per_address - 1, held
            assert way.door.front is not None
            assert way.door.front.open == {"127.0.0.1": LIMITS.per_address}
            # The door's own descriptors stay bounded: three per held connection, plus the clients'.
            assert descriptors() - before <= 30 + 3 * LIMITS.per_address + 8
            spread = await gather(
                [attempt(way.port, f"127.0.0.{n}", tls, kind == "h2") for n in (2, 3, 4) for _ in range(8)]
            )
            assert sum(spread) == LIMITS.total - LIMITS.per_address, spread  # 6 + 6, then the door is full
            assert not await attempt(way.port, "127.0.0.5", tls, kind == "h2")
            # gRPC drops what opened no stream within its timeout; the bot's connection stays.
            await until(lambda: sum(way.door.front.open.values()) == 1, 3 * LIMITS.handshake + 2, "dropped")
            assert way.door.front.open == {"127.0.0.1": 1}
            (session,) = await way.lobby.claim(["far"], wait=2)  # it answered the claim's ping
            assert not session.is_closed
            await way.lobby.release("far", session)
            close_all()
            client.call.cancel()

    asyncio.run(main())


def test_an_idle_connection_is_closed_within_the_default_handshake_timeout(tmp_path, certs):
    async def main() -> None:
        async with doorway(tmp_path, certs) as way:
            reader, writer = await idle_socket(way.port)
            started = asyncio.get_running_loop().time()
            assert await closed_within(reader, HANDSHAKE_TIMEOUT + 3)
            assert asyncio.get_running_loop().time() - started >= HANDSHAKE_TIMEOUT - 1
            writer.close()

    asyncio.run(main())


def test_refusals_are_logged_once_per_address_and_then_counted(tmp_path, certs, caplog):
    async def main() -> None:
        async with doorway(tmp_path, certs, limits=LIMITS) as way:
            way.door.refusal_log.window = 0.5
            with caplog.at_level(logging.WARNING, logger=door_module.__name__):
                held = await gather([attempt(way.port, "127.0.0.1", None) for _ in range(20)])
                assert sum(held) == LIMITS.per_address
                await asyncio.sleep(1.2)  # one window passes: its count is said
                close_all()
            lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
            over = f"over {LIMITS.per_address} connections at once from one address"
            assert lines == [
                f"remote door: refused a connection from 127.0.0.1: {over}",
                f"remote door: refused 13 more connections from 127.0.0.1 in 0.5s: {over}",
            ], lines

    asyncio.run(main())


def test_a_shut_out_address_is_said_on_the_log_once_however_often_it_knocks(tmp_path, certs, caplog):
    async def main() -> None:
        async with doorway(tmp_path, certs) as way:
            with caplog.at_level(logging.WARNING, logger=door_module.__name__):
                for n in range(door_module.MAX_BAD_HELLOS + 4):
                    await refusal(way, hello(f"pyr1_{n}"))
                lines = [r.getMessage() for r in caplog.records]
            assert sum(REFUSED in line for line in lines) == door_module.MAX_BAD_HELLOS, lines
            shut = [line for line in lines if "shut out" in line]
            assert shut == ["remote door: refused a connection from 127.0.0.1: shut out after too many "
                            "refused hellos"], lines  # fmt: skip

    asyncio.run(main())


def test_a_hello_over_one_mib_is_logged_as_what_it_was(tmp_path, certs, caplog):
    async def main() -> None:
        async with doorway(tmp_path, certs) as way:
            with caplog.at_level(logging.WARNING, logger=door_module.__name__):
                code, _ = await refusal(way, hello("pyr1_" + "x" * (2 << 20)))
                await asyncio.sleep(0.5)
            assert code is grpc.StatusCode.RESOURCE_EXHAUSTED
            lines = [r.getMessage() for r in caplog.records]
            assert any("its first message was over 1048576 bytes" in line for line in lines), lines
            assert not any("must be a hello" in line for line in lines), lines

    asyncio.run(main())


def test_a_token_file_the_referee_cannot_read_is_no_verdict_on_a_token(tmp_path, certs, caplog):
    """The token file turns into something that cannot be read (here a folder: EISDIR, an OSError like
    EMFILE's). A connected bot is still handed out on its token as last read; a new hello is told to try
    again (UNAVAILABLE, which the SDKs retry), never UNAUTHENTICATED (final); the trouble is said once."""

    async def main() -> None:
        async with doorway(tmp_path, certs) as way:
            token = way.book.issue("far")
            client = await admitted(way, token)
            saved = way.book.path.read_bytes()
            way.book.path.unlink()
            way.book.path.mkdir()
            with caplog.at_level(logging.WARNING, logger=door_module.__name__):
                for _ in range(3):
                    code, details = await refusal(way, hello(token))
                    assert (code, details) == (grpc.StatusCode.UNAVAILABLE, CANNOT_CHECK)
                (session,) = await way.lobby.claim(["far"], wait=2)
                await way.lobby.release("far", session)
                way.lobby.dismiss()
                assert way.lobby.connected("far")
                way.book.path.rmdir()
                way.book.path.write_bytes(saved)
                code, details = await refusal(way, hello("pyr1_guess"))  # the file is back: a verdict
                lines = [r.getMessage() for r in caplog.records]
            assert (code, details) == (grpc.StatusCode.UNAUTHENTICATED, REFUSED)
            assert sum("cannot read the token file" in line for line in lines) == 1, lines
            assert any("can be read again" in line for line in lines), lines
            client.call.cancel()

    asyncio.run(main())


@pytest.mark.quick
def test_a_lobby_pings_with_the_leagues_per_action_limit_when_shorter():
    assert Lobby.for_time(60, per_action=1.0).ping_timeout == 1.0
    assert Lobby.for_time(60, per_action=30.0).ping_timeout == 5.0


async def garbage(port: int, source: str = "127.0.0.1") -> None:
    """A connection that sends what is no HTTP/2 and waits for the door to close it."""
    reader, writer = await idle_socket(port, source)
    writer.write(os.urandom(512))
    await writer.drain()
    assert await closed_within(reader, 10)
    writer.close()


def test_an_address_whose_connections_admit_no_bot_is_refused_at_once_until_its_window_passes(
    tmp_path, certs, caplog
):
    """Ten connections from one address that end with no bot admitted (garbage, then gRPC's close): its
    next connection is refused at accept, before any TLS or gRPC work, and the log says why; another
    address is not; the connections of an admitted bot never count; once the window has passed, the
    address is admitted again (issue #32: floods of garbage and of bad hellos cost refusals only)."""
    limits = Limits(per_address=6, total=18, handshake=3.0, idle=3.0, unadmitted=10, unadmitted_window=4.0)

    async def main() -> None:
        async with doorway(tmp_path, certs, limits=limits) as way:
            token = way.book.issue("far")
            for _ in range(limits.unadmitted + 2):  # an admitted bot that reconnects: never counted
                client = await admitted(way, token)
                client.call.cancel()
                await until(lambda: not way.lobby.connected("far"), 5, "gone")
            with caplog.at_level(logging.WARNING, logger=door_module.__name__):
                for _ in range(limits.unadmitted):
                    await garbage(way.port)
                began = asyncio.get_running_loop().time()
                assert not await attempt(way.port, "127.0.0.1", tls_context(way.ca))  # reset at accept
                assert await attempt(way.port, "127.0.0.2", tls_context(way.ca), preface=True)
                close_all()
            shut = [r.getMessage() for r in caplog.records if "admitted no bot" in r.getMessage()]
            assert shut == [
                "remote door: refused a connection from 127.0.0.1: shut out after 10 connections in 4s "
                "that admitted no bot"
            ], shut
            await asyncio.sleep(
                max(0.0, began + limits.unadmitted_window - asyncio.get_running_loop().time())
            )
            client = await asyncio.wait_for(admitted(way, token), 10)  # the window passed
            client.call.cancel()

    asyncio.run(main())
