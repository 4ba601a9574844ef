"""The door: the TCP listener where remote entrants connect, with TLS, and every check of a stranger.

A connection says hello with its entrant's token within :data:`HELLO_TIMEOUT`; the token is checked
against the league's token file (:mod:`referee.remote.tokens`), and a refused hello counts against its
peer's address: past :data:`MAX_BAD_HELLOS` in :data:`BAD_HELLO_WINDOW` seconds, that address is refused
whatever it says, until the window has passed (its first message is read, for at most
:data:`TURN_AWAY_READ` seconds, and never looked at: gRPC could report a call that ends with its first
message unread as ``INTERNAL``, not as the refusal it was). One address holds at most
:data:`MAX_PER_PEER` connections, refused or not; past that it is refused unread. Every refusal says the
same thing whatever the token was, so a peer learns nothing about other entrants. Messages over 1 MiB are
cut by gRPC (``RESOURCE_EXHAUSTED``); an admitted bot's messages are bound as a sandboxed bot's are.

Once admitted, the connection's round trip is measured with a few pings, which fixes its lag allowance
(bounded by :data:`MAX_LAG`), and it waits in the :class:`~referee.remote.lobby.Lobby` for matches.
The transport pings it (:class:`Keepalive`), so that a bot that vanished without closing its connection
(a laptop asleep, a cable pulled) leaves the lobby within a minute, instead of counting as connected and
losing the matches it is then handed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import logging
import statistics
import time
from collections import deque
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Final

import grpc

from pyramid_sdk.bot import TimeControl
from pyramid_sdk.handshake import PROTOCOL_VERSION
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import pyramid_pb2_grpc as pb_grpc
from referee.match.server import SERVER_OPTIONS, _add_referee_service
from referee.match.sessions import Context, Session, decode_request
from referee.remote.lobby import LEAGUE_OVER, Lobby
from referee.remote.record import Latency
from referee.remote.settings import RemoteSettings
from referee.remote.tokens import TokenBook, TokenError

LOGGER = logging.getLogger(__name__)

HELLO_TIMEOUT: Final = 10.0
MAX_BAD_HELLOS: Final = 5
"""Refused hellos one address may make within :data:`BAD_HELLO_WINDOW` before it is shut out."""
BAD_HELLO_WINDOW: Final = 60.0
MAX_PER_PEER: Final = 8
"""Connections one address may hold open at once (its own bot needs one)."""
TURN_AWAY_READ: Final = 1.0
"""Seconds a shut-out connection's first message is waited for before it is refused."""
PINGS: Final = 3
PING_TIMEOUT: Final = 5.0
MAX_LAG: Final = 0.5
"""The largest lag allowance, in seconds: a bot farther away than this pays the rest from its clock."""
REFUSED: Final = "unknown, revoked or expired token"


KEEPALIVE_INTERVAL: Final = 20.0
"""Seconds between the transport's pings on a remote connection."""
KEEPALIVE_SLACK: Final = 10.0
CLIENT_PING_MIN_INTERVAL: Final = 1.0
"""Seconds a remote bot's own keepalive pings must be apart: both SDKs ping every 15 s (every 2 s at the
shortest ``PYRAMID_KEEPALIVE``). Closer pings, while the door sends no data, are strikes, and the third
strike ends the connection (``GOAWAY``, ``too_many_pings``: gRPC's default)."""


@dataclass(frozen=True, slots=True)
class Keepalive:
    """gRPC's keepalive on the door's connections: a transport ping every ``interval`` seconds, and the
    connection is cut when one goes ``timeout`` seconds unanswered. A bot's gRPC answers a ping only
    while its SDK waits for the referee (the Python SDK reads its socket only then), so a bot that is
    thinking leaves one unanswered until its reply: the timeout covers the longest decision the league's
    time control allows, with the lag allowance and some slack (:meth:`for_time`)."""

    interval: float
    timeout: float

    @classmethod
    def for_time(cls, time_control: TimeControl) -> Keepalive:
        """The keepalive of a league with ``time_control``.

        >>> Keepalive.for_time(TimeControl(per_action=1.0, bank=20.0))
        Keepalive(interval=20.0, timeout=31.5)
        """
        longest = time_control.per_action + time_control.bank + MAX_LAG
        return cls(KEEPALIVE_INTERVAL, longest + KEEPALIVE_SLACK)

    def options(self) -> list[tuple[str, int]]:
        timeout = round(self.timeout * 1000)
        return [
            ("grpc.keepalive_time_ms", round(self.interval * 1000)),
            ("grpc.keepalive_timeout_ms", timeout),
            ("grpc.http2.ping_timeout_ms", timeout),  # the one the keepalive ping waits on, in grpcio 1.7x+
            ("grpc.keepalive_permit_without_calls", 1),
            # The bots' own keepalive (pyramid_sdk.remote): gRPC's servers take a ping every 5 min at most.
            ("grpc.http2.min_ping_interval_without_data_ms", round(CLIENT_PING_MIN_INTERVAL * 1000)),
        ]


@dataclass(slots=True)
class Doorman:
    """Counts refused hellos and open connections per peer address."""

    bad: dict[str, deque[float]] = field(default_factory=dict)
    open: dict[str, int] = field(default_factory=dict)

    def shut_out(self, host: str, now: float) -> float:
        """Seconds ``host`` must still wait before it may say hello again; 0 if it may now."""
        times = self.bad.get(host)
        if not times:
            return 0.0
        while times and times[0] <= now - BAD_HELLO_WINDOW:
            times.popleft()
        if not times:
            del self.bad[host]  # a door open for days forgets the addresses it no longer limits
            return 0.0
        if len(times) < MAX_BAD_HELLOS:
            return 0.0
        return times[0] + BAD_HELLO_WINDOW - now

    def refused(self, host: str, now: float) -> None:
        self.bad.setdefault(host, deque(maxlen=MAX_BAD_HELLOS * 2)).append(now)


def peer_host(peer: str) -> str:
    """The address part of a gRPC peer string.

    >>> peer_host("ipv4:10.0.0.2:51234"), peer_host("ipv6:[::1]:4000"), peer_host("unix:/tmp/s")
    ('10.0.0.2', '[::1]', 'unix:/tmp/s')
    """
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rpartition(":")[0]
    return peer


class Door(pb_grpc.RefereeServiceServicer):
    """The servicer of the remote door. ``names``: the league's remote entrants."""

    def __init__(self, book: TokenBook, names: Collection[str], lobby: Lobby) -> None:
        self.book = book
        self.names = frozenset(names)
        self.lobby = lobby
        self.doorman = Doorman()
        self.refusals: list[str] = []
        self._ids: Iterator[int] = itertools.count(1)
        self._digests: dict[Session, str] = {}

    def still_valid(self, name: str, session: Session) -> bool:
        """Whether ``name`` is still an entrant the door admits and the token ``session`` presented is
        still its own (not reissued, revoked, expired)."""
        if name not in self.names:
            return False
        try:
            grant = self.book.grants().get(name)
        except TokenError as exc:  # a damaged token file admits nobody, and stops nothing else
            LOGGER.warning("remote door: %s", exc)
            return False
        digest = self._digests.get(session, "")
        fresh = grant is not None and (grant.expires is None or time.time() < grant.expires)
        return fresh and grant is not None and hmac.compare_digest(grant.digest, digest)

    async def Connect(self, request_iterator: object, context: Context) -> None:
        host = peer_host(context.peer() or "")
        if self.doorman.open.get(host, 0) >= MAX_PER_PEER:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "too many connections from one address")
            return
        self.doorman.open[host] = self.doorman.open.get(host, 0) + 1
        try:
            wait = self.doorman.shut_out(host, time.monotonic())
            if wait > 0:
                with contextlib.suppress(Exception):  # whatever it sent, or nothing, or a broken stream
                    await asyncio.wait_for(context.read(), TURN_AWAY_READ)
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED, f"too many refused hellos: try again in {wait:.0f}s"
                )
            else:
                await self._admit(host, context)
        finally:
            self.doorman.open[host] -= 1
            if not self.doorman.open[host]:
                del self.doorman.open[host]

    async def _refuse(self, host: str, context: Context, code: grpc.StatusCode, text: str) -> None:
        self.doorman.refused(host, time.monotonic())
        LOGGER.warning("remote door: refused a hello from %s: %s", host, text)
        await context.abort(code, text)

    async def _admit(self, host: str, context: Context) -> None:
        try:
            first = await asyncio.wait_for(context.read(), HELLO_TIMEOUT)
        except TimeoutError:
            await self._refuse(
                host, context, grpc.StatusCode.DEADLINE_EXCEEDED, f"no hello within {HELLO_TIMEOUT:g}s"
            )
            return
        except Exception:  # a message over the limit, or a broken connection
            self.doorman.refused(host, time.monotonic())
            return
        message = decode_request(first) if isinstance(first, bytes) else None
        if not isinstance(message, pb.ConnectRequest) or message.WhichOneof("kind") != "hello":
            await self._refuse(
                host, context, grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a hello"
            )
            return
        hello = message.hello
        if hello.protocol_version != PROTOCOL_VERSION:
            await self._refuse(
                host,
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol version {hello.protocol_version} is not supported: this referee speaks "
                f"{PROTOCOL_VERSION}",
            )
            return
        try:
            found = self.book.find(hello.token)
        except TokenError as exc:  # a damaged token file: every hello is refused, the same way
            LOGGER.warning("remote door: %s", exc)
            found = None
        if found is None or found[0] not in self.names:
            await self._refuse(host, context, grpc.StatusCode.UNAUTHENTICATED, REFUSED)
            return
        name, grant = found
        if self.lobby.playing(name):
            await context.abort(
                grpc.StatusCode.ALREADY_EXISTS,
                "this entrant is connected and playing: one connection at a time",
            )
            return
        await self._play(name, grant.digest, hello, context)

    async def _play(self, name: str, digest: str, hello: pb.Hello, context: Context) -> None:
        """An admitted connection: welcome, pings, then the lobby until its stream ends."""
        session = Session(f"r{next(self._ids)}", hello, context, self.refusals)
        session.latencies = []
        self._digests[session] = digest
        welcome = pb.Welcome(
            protocol_version=PROTOCOL_VERSION, session_id=session.session_id, remote=True, max_matches=1
        )
        LOGGER.info(
            "remote door: %s connected from %s as %s",
            name,
            peer_host(context.peer() or ""),
            session.session_id,
        )
        serving = asyncio.create_task(session.serve())
        try:
            await session.send(pb.ConnectResponse(welcome=welcome).SerializeToString())
            trips = [
                trip for n in range(PINGS) if (trip := await session.ping(n + 1, PING_TIMEOUT)) is not None
            ]
            round_trip = statistics.median(trips) if trips else 0.0
            session.lag_allowance = min(round_trip, MAX_LAG)
            self.lobby.latency.setdefault(name, Latency()).round_trips.append(round_trip)
            await session.send(
                pb.ConnectResponse(
                    notice=pb.Notice(
                        text=f"remote connection: round trip {round_trip * 1000:.0f} ms; each decision gets "
                        f"{session.lag_allowance * 1000:.0f} ms more for it (at most {MAX_LAG * 1000:.0f})"
                    )
                ).SerializeToString()
            )
            await self.lobby.join(name, session)
            await serving
        finally:
            serving.cancel()
            session.close(session.close_reason or "stream ended")
            await self.lobby.leave(name, session)
            self.lobby.record(name, session)
            self._digests.pop(session, None)
        if session.status is not grpc.StatusCode.OK:
            await context.abort(session.status, session.close_reason)
        elif session.close_reason != LEAGUE_OVER:  # OK tells a remote bot the league is over: only then
            await context.abort(grpc.StatusCode.UNAVAILABLE, session.close_reason)


async def open_door(
    door: Door, settings: RemoteSettings, keepalive: Keepalive
) -> tuple[grpc.aio.Server, int]:
    """The door's started server and the port it took (``--listen HOST:0`` takes a free one)."""
    assert settings.listen is not None
    # SERVER_OPTIONS cut any message over MAX_TRANSPORT_BYTES (1 MiB); a stranger's connection may
    # carry only a few streams at once. The keepalive replaces theirs (none, for sandboxed bots).
    options = dict([*SERVER_OPTIONS, ("grpc.max_concurrent_streams", 4), *keepalive.options()])
    server = grpc.aio.server(options=list(options.items()))
    _add_referee_service(door, server)  # type: ignore[arg-type]
    if settings.tls_cert is not None and settings.tls_key is not None:
        credentials = grpc.ssl_server_credentials(
            [(settings.tls_key.read_bytes(), settings.tls_cert.read_bytes())]
        )
        port = server.add_secure_port(settings.listen, credentials)
    else:
        port = server.add_insecure_port(settings.listen)
    if port == 0:
        raise OSError(f"cannot listen on {settings.listen}")
    await server.start()
    return server, port
