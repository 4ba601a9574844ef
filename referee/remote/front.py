"""The door's public socket: a TCP front that counts every connection per address before gRPC sees it.

gRPC caps what it can see, streams and messages, but not who holds its connections: a bare TCP
connection, or a TLS handshake that never opens a stream, costs a file descriptor per connection for as
long as gRPC's handshake deadline (two minutes by default), however many come from one address. gRPC
has no hook per connection (its C-core leaves per-address limits to a proxy), so the door's public
socket is the front's own. It accepts a connection only while its address holds fewer than
:attr:`Limits.per_address` and the door fewer than :attr:`Limits.total` (any other is closed at once,
unread), and relays its bytes untouched, TLS and all, to the door's gRPC server on a Unix socket in a
private folder. There gRPC drops a connection that has not finished its handshake within
:attr:`Limits.handshake` seconds or holds no stream for :attr:`Limits.idle` seconds, and the front drops
its side with it. Each relayed connection binds its Unix socket to a name of its own, which gRPC reports
as the stream's peer, so the door sees the real address behind every stream (:meth:`Front.address`).

The relay costs each message of a remote bot one pass through the referee's event loop each way
(``benchmarks/README.md``, "The remote door under attack"); a remote bot's network round trip is
milliseconds, and local bots never pass through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import resource
import secrets
import socket
import struct
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

MAX_PER_ADDRESS: Final = 8
"""Connections one address may hold open at once (its own bot needs one)."""
MAX_CONNECTIONS: Final = 256
"""Connections the door holds open at once, from every address together."""
HANDSHAKE_TIMEOUT: Final = 5.0
"""Seconds a new connection has to finish its TLS handshake and start HTTP/2."""
IDLE_TIMEOUT: Final = 5.0
"""Seconds a connection may stay open without a stream (a bot keeps its one stream open)."""
DESCRIPTOR_RESERVE: Final = 256
"""File descriptors the door leaves to the rest of the referee (its database, logs, token file, bots'
pipes and sockets, the web server), whatever strangers do."""
DESCRIPTORS_PER_CONNECTION: Final = 3
"""A relayed connection holds three: the stranger's socket and both ends of the relay's Unix socket."""
MIN_CONNECTIONS: Final = 16
MAX_UNADMITTED: Final = 20
"""Connections one address may make within :data:`UNADMITTED_WINDOW` that end without a bot admitted
on them (no stream, garbage, a refused hello) before the front refuses its every new connection at
once, until the window has passed: an honest bot's connection carries an admitted hello, and a flood of
connections that do not would otherwise cost the referee a TLS handshake and gRPC's work for each."""
UNADMITTED_WINDOW: Final = 60.0


@dataclass(frozen=True, slots=True)
class Limits:
    """What a stranger's connections may hold. :meth:`for_this_process` fits :attr:`total` to the open
    files this process may have."""

    per_address: int = MAX_PER_ADDRESS
    total: int = MAX_CONNECTIONS
    handshake: float = HANDSHAKE_TIMEOUT
    idle: float = IDLE_TIMEOUT
    unadmitted: int = MAX_UNADMITTED
    unadmitted_window: float = UNADMITTED_WINDOW

    @classmethod
    def for_this_process(cls) -> Limits:
        """The default limits, :attr:`total` lowered when the open-file limit would not leave
        :data:`DESCRIPTOR_RESERVE` descriptors to the rest of the referee (but never below
        :data:`MIN_CONNECTIONS`)."""
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft == resource.RLIM_INFINITY:
            return cls()
        room = (soft - DESCRIPTOR_RESERVE) // DESCRIPTORS_PER_CONNECTION
        return cls(total=max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, room)))

    def options(self) -> list[tuple[str, int]]:
        """gRPC's share of the limits, on the server behind the front."""
        return [
            ("grpc.server_handshake_timeout_ms", round(self.handshake * 1000)),
            ("grpc.max_connection_idle_ms", round(self.idle * 1000)),
            ("grpc.max_allowed_incoming_connections", self.total),
        ]


Refusal = Callable[[str, str], None]
"""Told of each connection the front refuses: its address and why (the door logs them, rate-limited)."""

BACKLOG: Final = 128
ACCEPTS_AT_ONCE: Final = 64
"""Connections accepted in one go before the event loop runs anything else."""
REFUSING_PAUSE: Final = 0.02
"""Seconds the front waits to accept again after it refused a connection (see :meth:`Front._accept`)."""
OUT_OF_FILES_PAUSE: Final = 1.0
"""Seconds the front stops accepting when the process has no descriptor left for a new connection."""


class Front:
    """The door's listening socket and the connections it relays to the gRPC server at ``inner``, a Unix
    socket in a private folder (mode 0700), where the relay's own sockets take their names too. It
    accepts connections itself, so that one it refuses costs an ``accept`` and a reset, nothing more."""

    def __init__(self, inner: str, limits: Limits, refused: Refusal) -> None:
        self.inner = inner
        self.limits = limits
        self.refused = refused
        self.open: dict[str, int] = {}
        """Connections per address, now."""
        self.allowed: dict[str, int] = {}
        """Connections an address may hold beyond :attr:`Limits.per_address`: its entrants' grants of
        several matches at once (the door's :meth:`~referee.remote.door.Door.allowance`)."""
        self._folder = Path(inner).parent
        self._names = itertools.count(1)
        self._abstract = sys.platform == "linux"
        """Linux names the relay's sockets in its abstract namespace: no file is made and removed for
        each (on this kind of machine that took a bind, connect and close from 0.15 to 0.6 ms)."""
        self._prefix = f"pyramid-front-{secrets.token_hex(8)}"
        """Unguessable, so that no other process can take a name first."""
        self._peers: dict[str, str] = {}
        """gRPC's peer string of each relayed connection -> the address it came from."""
        self._admitted: set[str] = set()
        """The peers of the relayed connections on which the door admitted a bot (:meth:`admitted`)."""
        self._unadmitted: dict[str, deque[float]] = {}
        """By address: when its recent connections that admitted no bot ended."""
        self._relays: set[_Outer] = set()
        self._listeners: list[socket.socket] = []
        self._listening = False

    @property
    def total(self) -> int:
        return len(self._relays)

    async def start(self, host: str, port: int) -> int:
        """Listens on ``host:port`` (``port`` 0: a free one); returns the port. ``OSError`` if it cannot."""
        self._listeners = _listen(host.strip("[]"), port)
        self._resume()
        return int(self._listeners[0].getsockname()[1])

    def address(self, peer: str) -> str | None:
        """The address a stream behind the front came from, by gRPC's peer string; ``None`` for a peer
        that did not come through it."""
        return self._peers.get(peer)

    def admitted(self, peer: str) -> None:
        """The door admitted a bot on the connection of gRPC's ``peer``: it does not count against its
        address when it ends (:data:`MAX_UNADMITTED`)."""
        if peer in self._peers:
            self._admitted.add(peer)

    def allow(self, host: str, more: int) -> None:
        """``host`` may hold ``more`` connections beyond :attr:`Limits.per_address` (a bot may open a
        connection for each of its streams)."""
        if more > 0:
            self.allowed[host] = more
        else:
            self.allowed.pop(host, None)

    def stop_listening(self) -> None:
        """Accepts no new connection; those relayed go on (the door's last statuses still reach them)."""
        self._pause()
        for listener in self._listeners:
            listener.close()
        self._listeners = []

    async def stop(self) -> None:
        """Stops listening and drops every relayed connection."""
        self.stop_listening()
        for relay in list(self._relays):
            relay.drop()
        await asyncio.sleep(0)

    def _resume(self) -> None:
        loop = asyncio.get_running_loop()
        for listener in self._listeners:
            loop.add_reader(listener.fileno(), self._accept, listener)
        self._listening = True

    def _pause(self) -> None:
        if self._listening:
            loop = asyncio.get_running_loop()
            for listener in self._listeners:
                loop.remove_reader(listener.fileno())
            self._listening = False

    def _accept(self, listener: socket.socket) -> None:
        """Accepts what is waiting (a bounded batch), refusing at once what is over the caps. A batch
        that refused any waits :data:`REFUSING_PAUSE` seconds before the next: under a flood the
        refusals go in batches (one wake of the event loop for many), and what is over the kernel's
        backlog meanwhile is dropped there, for free (the flooder's own stack tries again later)."""
        refused = 0
        for _ in range(ACCEPTS_AT_ONCE):
            try:
                connection, peer = listener.accept()
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:  # no descriptor left (EMFILE, ENFILE), or no buffer: wait a moment
                self.refused("every address", f"the referee could not accept a connection: {exc.strerror}")
                self._pause_for(OUT_OF_FILES_PAUSE)
                return
            host = _host(peer)
            why = self._over(host)
            if why is not None:
                _reset(connection)
                self.refused(host, why)
                refused += 1
                continue
            connection.setblocking(False)
            relay = _Outer(self, host)
            self.open[host] = self.open.get(host, 0) + 1
            self._relays.add(relay)
            relay.task = asyncio.get_running_loop().create_task(relay.start(connection))
        if refused:
            self._pause_for(REFUSING_PAUSE)

    def _pause_for(self, seconds: float) -> None:
        self._pause()
        asyncio.get_running_loop().call_later(seconds, self._resume_if_open)

    def _resume_if_open(self) -> None:
        if self._listeners and not self._listening:
            self._resume()

    def _over(self, host: str) -> str | None:
        """Why a new connection from ``host`` is refused, or ``None``."""
        cap = self.limits.per_address + self.allowed.get(host, 0)
        if self.open.get(host, 0) >= cap:
            return f"over {cap} connections at once from one address"
        ended = self._unadmitted.get(host)
        if ended:
            now = time.monotonic()
            while ended and ended[0] <= now - self.limits.unadmitted_window:
                ended.popleft()
            if not ended:
                del self._unadmitted[host]  # a door open for days forgets the addresses it no longer limits
            elif len(ended) >= self.limits.unadmitted:
                return (
                    f"shut out after {len(ended)} connections in {self.limits.unadmitted_window:.0f}s "
                    "that admitted no bot"
                )
        if len(self._relays) >= self.limits.total:
            return f"over {self.limits.total} connections at once to the door"
        return None

    def _gone(self, relay: _Outer) -> None:
        if relay in self._relays:
            self._relays.discard(relay)
            self.open[relay.host] -= 1
            if not self.open[relay.host]:
                del self.open[relay.host]
        if relay.peer is not None:
            self._peers.pop(relay.peer, None)
        if relay.peer is None or relay.peer not in self._admitted:
            limit = self.limits.unadmitted
            self._unadmitted.setdefault(relay.host, deque(maxlen=limit)).append(time.monotonic())
        self._admitted.discard(relay.peer or "")

    async def _connect(self, relay: _Outer) -> tuple[asyncio.Transport, str] | None:
        """The relay's connection to the gRPC server, bound to a name of its own; ``None`` if it fails."""
        loop = asyncio.get_running_loop()
        number = next(self._names)
        name = f"\0{self._prefix}-{number}" if self._abstract else str(self._folder / f"p{number}")
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            unix.setblocking(False)
            unix.bind(name)
            await loop.sock_connect(unix, self.inner)
        except OSError:
            unix.close()
            return None
        finally:
            if not self._abstract:
                with contextlib.suppress(OSError):
                    os.unlink(name)  # the name stays the socket's: gRPC still reports it as the peer
        peer = f"unix-abstract:{name[1:]}" if self._abstract else f"unix:{name}"
        self._peers[peer] = relay.host
        try:
            transport, _ = await loop.create_unix_connection(lambda: _Inner(relay), sock=unix)
        except OSError:
            unix.close()
            self._peers.pop(peer, None)
            return None
        return transport, peer


class _Inner(asyncio.Protocol):
    """The relay's side toward gRPC: what gRPC writes goes to the stranger."""

    def __init__(self, outer: _Outer) -> None:
        self.outer = outer

    def data_received(self, data: bytes) -> None:
        self.outer.send(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.outer.drop()

    def pause_writing(self) -> None:
        self.outer.pause()

    def resume_writing(self) -> None:
        self.outer.resume()


class _Outer(asyncio.Protocol):
    """One stranger's accepted connection, counted against its address, relayed to gRPC."""

    def __init__(self, front: Front, host: str) -> None:
        self.front = front
        self.host = host
        self.transport: asyncio.Transport | None = None
        self.inner: asyncio.Transport | None = None
        self.peer: str | None = None
        self.closed = False
        self.task: asyncio.Task[None] | None = None
        self.early: list[bytes] = []
        """What gRPC wrote before the stranger's socket was taken on (its SETTINGS, at once): sent first."""

    async def start(self, connection: socket.socket) -> None:
        """Connects to gRPC, then starts reading the stranger: nothing it sends waits in between."""
        connected = await self.front._connect(self)
        if connected is None or self.closed:
            _reset(connection)
            if connected is not None:
                connected[0].close()
            self.drop()
            return
        self.inner, self.peer = connected
        try:
            await asyncio.get_running_loop().connect_accepted_socket(lambda: self, sock=connection)
        except OSError:
            _reset(connection)
            self.drop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self.closed:
            transport.abort()
            return
        early, self.early = self.early, []
        for data in early:
            transport.write(data)

    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.write(data)

    def eof_received(self) -> bool:
        return False  # a stranger that stops writing is gone: close both sides

    def connection_lost(self, exc: Exception | None) -> None:
        self.drop()

    def send(self, data: bytes) -> None:
        if self.closed:
            return
        if self.transport is None:
            self.early.append(data)
        else:
            self.transport.write(data)

    def pause(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.pause_reading()

    def resume(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_reading()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_reading()

    def drop(self) -> None:
        """Closes both sides (what was written is still sent); idempotent."""
        if self.closed:
            return
        self.closed = True
        self.front._gone(self)
        if self.transport is not None:
            self.transport.close()
        if self.inner is not None:
            self.inner.close()


def _listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets on every address of ``host`` (one port for all when ``port`` is 0)."""
    found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    listeners: list[socket.socket] = []
    try:
        for family, kind, protocol, _, given in dict.fromkeys(found):
            listener = socket.socket(family, kind, protocol)
            listeners.append(listener)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and any(item[0] == socket.AF_INET for item in found):
                listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # its IPv4 twin has those
            address = given
            if port == 0 and len(listeners) > 1:
                address = (given[0], listeners[0].getsockname()[1], *given[2:])
            listener.bind(address)
            listener.listen(BACKLOG)
            listener.setblocking(False)
    except BaseException:
        for listener in listeners:
            listener.close()
        raise
    return listeners


def _reset(connection: socket.socket) -> None:
    """Closes a connection at once with a reset: nothing is flushed, and no closing state is kept."""
    with contextlib.suppress(OSError):
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


def _host(peername: object) -> str:
    """The address part of a socket's peer name, an IPv4 address mapped into IPv6 as IPv4.

    >>> _host(("10.0.0.2", 4000)), _host(("::ffff:10.0.0.2", 4000, 0, 0)), _host(("::1", 1, 0, 0))
    ('10.0.0.2', '10.0.0.2', '[::1]')
    """
    host = str(peername[0]) if isinstance(peername, tuple) and peername else "unknown"
    if host.startswith("::ffff:") and "." in host:
        return host.removeprefix("::ffff:")
    return f"[{host}]" if ":" in host else host
