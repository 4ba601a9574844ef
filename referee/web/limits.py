"""What one address may hold of ``referee serve``'s web server, and what it is told beyond that.

Caps per address (docs/SECURITY.md, "The web server"), each a named default:

- **connections**: :data:`CONNECTIONS_PER_ADDRESS` at once, and :data:`CONNECTIONS` from every address;
  the next one is answered ``429`` (``503`` over the total) and closed at once. A connection that has
  not sent a whole request within :data:`REQUEST_DEADLINE` of connecting, or of starting one, is
  closed: an idle or trickling socket holds nothing for long (uvicorn's own keep-alive timeout, 5 s,
  closes a connection idle between requests).
- **requests**: :data:`REQUEST_RATE` a second, with bursts of :data:`REQUEST_BURST` (a token bucket);
  beyond, ``429 Too Many Requests`` with ``Retry-After`` (seconds until the next one is taken). Over
  HTTP/1.1 a connection carries one request at a time, so the connection cap also caps an address's
  requests in progress.
- **bodies**: :data:`BODY` bytes a request (only the human seat's moves have one); beyond, ``413``.

An address is an IPv4 address, or an IPv6 address's /64 network (what one machine is given). The
client's address is the socket's: forwarded headers are not trusted (``X-Forwarded-For`` would let any
client pick its own), so behind a reverse proxy every request counts against the proxy's address.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import math
import socket
import struct
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

CONNECTIONS_PER_ADDRESS: Final = 16
"""Connections one address may hold at once: a browser opens up to 6 to a server, and each tab's event
stream holds one."""
STREAM_BUFFER: Final = 32 * 1024
"""Bytes an event stream's connection buffers in the server and in its kernel's send buffer, each: a
quarter second of events of a fast league is a few kilobytes."""
CONNECTIONS: Final = 256
"""Connections the server holds at once, from every address."""
REQUEST_DEADLINE: Final = 10.0
"""Seconds a connection has to send a whole request (its line and headers) once it connects or starts one."""
REQUEST_RATE: Final = 50.0
"""Requests a second one address may send, on average (several people behind one address, each page
asking for what changed after each match)."""
REQUEST_BURST: Final = 200
"""Requests one address may send at once (a page and everything it loads is about 8)."""
BODY: Final = 16 * 1024
"""Bytes a request's body may hold."""
BUCKETS: Final = 4096
"""Addresses whose request rate is remembered; past it, the ones with a full bucket are forgotten."""


def address_of(host: str) -> str:
    """The address a cap counts: an IPv6 address by its /64 network, anything else as it is.

    >>> address_of("127.0.0.2"), address_of("2001:db8::1"), address_of("2001:db8::2:1")
    ('127.0.0.2', '2001:db8::/64', '2001:db8::/64')
    >>> address_of("::1"), address_of("testclient")
    ('::1', 'testclient')
    """
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and not ip.is_loopback:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return address_of(client[0]) if client else ""


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class RequestRate:
    """A token bucket per address: ``rate`` a second, ``burst`` at once.

    >>> limit = RequestRate(rate=1.0, burst=2, clock=lambda: 0.0)
    >>> [limit.wait("a") for _ in range(3)], limit.wait("b")
    ([0.0, 0.0, 1.0], 0.0)
    """

    def __init__(
        self, rate: float = REQUEST_RATE, burst: int = REQUEST_BURST, clock: Any = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def wait(self, address: str) -> float:
        """Takes one request of ``address``'s: 0 when it may go now, else the seconds until it may."""
        now = self._clock()
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= BUCKETS:
                self._forget(now)
            bucket = self._buckets[address] = _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate

    def _forget(self, now: float) -> None:
        """Forgets the addresses whose bucket has filled again: they would start full anyway."""
        full = [
            address
            for address, bucket in self._buckets.items()
            if bucket.tokens + (now - bucket.at) * self.rate >= self.burst
        ]
        for address in full or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[address]


def refusal(status: int, text: str, retry_after: float | None = None, api: bool = True) -> list[Message]:
    """A whole answer that refuses a request, as ASGI messages: JSON under ``/api/``, text elsewhere."""
    body = (json.dumps({"error": text}) if api else text).encode()
    headers = [
        (b"content-type", b"application/json" if api else b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
    ]
    if retry_after is not None:
        headers.append((b"retry-after", str(max(1, math.ceil(retry_after))).encode()))
    return [
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": body},
    ]


class Limits:
    """The ASGI middleware of the per-address request rate and the body bound."""

    def __init__(self, app: ASGIApp, rate: RequestRate | None = None, body: int = BODY) -> None:
        self.app = app
        self.rate = rate or RequestRate()
        self.body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        address = client_address(scope)
        api = scope["path"].startswith("/api/")
        wait = self.rate.wait(address)
        if wait:
            text = f"{address} sent more than {self.rate.rate:g} requests a second: try again in a moment"
            for message in refusal(429, text, wait, api):
                await send(message)
            return
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self.body:
            for message in refusal(413, f"a request's body may hold {self.body} bytes", api=api):
                await send(message)
            return
        taken = 0

        async def bounded() -> Message:
            nonlocal taken
            message = await receive()
            taken += len(message.get("body", b""))
            if taken > self.body:  # a chunked body, which names no length
                return {"type": "http.disconnect"}
            return message

        await self.app(scope, bounded, send)


class Connections:
    """The server's open connections by address, capped, each one's transport at hand (so that an event
    stream can be cut at once, even while a write to it is stuck)."""

    def __init__(self, per_address: int = CONNECTIONS_PER_ADDRESS, most: int = CONNECTIONS) -> None:
        self.per_address = per_address
        self.most = most
        self.count: Counter[str] = Counter()
        self._transports: dict[tuple[str, int], asyncio.Transport] = {}
        self.refused = 0
        """Connections refused over a cap since the server started."""

    def admit(self, client: tuple[str, int] | None, transport: asyncio.Transport) -> bytes | None:
        """Counts a new connection; the answer that refuses it, or ``None``."""
        address = address_of(client[0]) if client else ""
        if self.count[address] >= self.per_address:
            self.refused += 1
            return _raw(429, f"{address} holds {self.per_address} connections already")
        if sum(self.count.values()) >= self.most:
            self.refused += 1
            return _raw(503, f"the server holds {self.most} connections: try again later")
        self.count[address] += 1
        if client is not None:
            self._transports[client] = transport
        return None

    def release(self, client: tuple[str, int] | None) -> None:
        address = address_of(client[0]) if client else ""
        self.count[address] -= 1
        if self.count[address] <= 0:
            del self.count[address]
        if client is not None:
            self._transports.pop(client, None)

    def cutter(self, scope: Scope) -> Callable[[], None]:
        """What closes the connection of ``scope`` at once, what is still to be sent thrown away (a
        connection the server does not hold, as under a test client, has nothing to cut)."""
        client = scope.get("client")
        transport = self._transports.get((client[0], client[1])) if client else None
        return (lambda: reset(transport)) if transport is not None else (lambda: None)

    def narrow(self, scope: Scope) -> None:
        """Small buffers for the connection of ``scope``, an event stream: a listener that does not read
        then blocks the server's writes to it within a few sends, and is dropped (``events``), instead
        of the kernel holding megabytes for it first."""
        client = scope.get("client")
        transport = self._transports.get((client[0], client[1])) if client else None
        if transport is None:
            return
        transport.set_write_buffer_limits(high=STREAM_BUFFER)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, STREAM_BUFFER)


def reset(transport: asyncio.Transport) -> None:
    """Closes a connection at once and for good, what it had still to send thrown away: a reset, so that
    neither the server nor the kernel keeps a socket (or its buffers) for a peer that does not read."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _raw(status: int, text: str) -> bytes:
    """A whole HTTP/1.1 answer, written before the request is read, that closes the connection."""
    reason = {429: "Too Many Requests", 503: "Service Unavailable"}[status]
    body = text.encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n"
    ).encode() + body


def capped_protocol(connections: Connections, deadline: float = REQUEST_DEADLINE) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol, each connection counted by ``connections`` and refused beyond its
    caps, and closed when a request does not arrive whole within ``deadline`` seconds."""

    class CappedProtocol(H11Protocol):
        _admitted = False
        _timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            refused = connections.admit(self.client, transport)
            if refused is not None:
                transport.write(refused)
                transport.close()
                return
            self._admitted = True
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._admitted:
                self._admitted = False
                connections.release(self.client)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if not self._admitted:
                return
            super().data_received(data)
            if self.cycle is None or self.cycle.response_complete:
                self._arm()  # between requests: a next one has begun, or uvicorn's keep-alive runs
            else:
                self._disarm()

        def on_response_complete(self) -> None:
            self._disarm()  # idle now: uvicorn's keep-alive timeout closes it
            super().on_response_complete()

        def _arm(self) -> None:
            if self._timer is None:
                self._timer = self.loop.call_later(deadline, self._late)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _late(self) -> None:
            self._timer = None
            if self.cycle is None or self.cycle.response_complete:
                reset(self.transport)

    return CappedProtocol
