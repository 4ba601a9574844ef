"""The door: where remote entrants connect, with TLS, and every check of a stranger.

Its public socket is a front (:mod:`referee.remote.front`) that caps the connections of each address and
of all together before gRPC sees them, and has gRPC drop a connection that opens no stream within a few
seconds. Behind it, a connection says hello with its entrant's token within :data:`HELLO_TIMEOUT`; the
token is checked against the league's token file (:mod:`referee.remote.tokens`), and a refused hello
counts against its peer's address: past :data:`MAX_BAD_HELLOS` in :data:`BAD_HELLO_WINDOW` seconds, that
address is refused whatever it says, until the window has passed (its first message is read, for at most
:data:`TURN_AWAY_READ` seconds, and never looked at: gRPC could report a call that ends with its first
message unread as ``INTERNAL``, not as the refusal it was). One address holds at most
:data:`MAX_PER_PEER` streams, refused or not, and one more for each match at once beyond the first that an
entrant connected from it was granted (:meth:`Door.allowance`); past that it is refused unread. A hello
asks for up to K matches at once, and is granted the smaller of K and the league's ``remote:
max_matches``: a stranger without a token holds what it held before, and an entrant at most the league's
cap more. Every refusal says the same
thing whatever the token was, so a peer learns nothing about other entrants; the referee's log says each
one, and a flood in one line a minute (:mod:`referee.remote.refusal_log`). Messages over 1 MiB are cut by
gRPC (``RESOURCE_EXHAUSTED``); an admitted bot's messages are bound as a sandboxed bot's are. A token file
the referee cannot read is its own trouble, never a verdict on a bot's token: a hello is then told to try
again (``UNAVAILABLE``), and a connected bot plays on as its token stood when it was last read.

Once admitted, the connection's round trip is measured with a few pings, which fixes its lag allowance
(bounded by :data:`MAX_LAG`), and it waits in the :class:`~referee.remote.lobby.Lobby` for matches, which
pings it again before each one. The transport pings it too (:class:`Keepalive`), so that a bot that
vanished without closing its connection (a laptop asleep, a cable pulled) in a match is cut within a
minute, and its fault says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import logging
import shutil
import statistics
import tempfile
import time
from collections import deque
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import grpc

from pyramid_sdk.bot import TimeControl
from pyramid_sdk.handshake import PROTOCOL_VERSION
from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import pyramid_pb2_grpc as pb_grpc
from referee.match.server import MAX_TRANSPORT_BYTES, SERVER_OPTIONS, _add_referee_service
from referee.match.sessions import Context, Session, decode_request
from referee.remote.front import Front, Limits
from referee.remote.lobby import LEAGUE_OVER, Lobby
from referee.remote.refusal_log import RefusalLog
from referee.remote.settings import RemoteSettings
from referee.remote.tokens import Grant, TokenBook, TokenError

LOGGER = logging.getLogger(__name__)

HELLO_TIMEOUT: Final = 10.0
MAX_BAD_HELLOS: Final = 5
"""Refused hellos one address may make within :data:`BAD_HELLO_WINDOW` before it is shut out."""
BAD_HELLO_WINDOW: Final = 60.0
MAX_PER_PEER: Final = 8
"""Streams one address may hold open at once (its own bot needs one), before its entrants' grants of
several matches at once (:meth:`Door.allowance`)."""
SPARE_STREAMS: Final = 3
"""Streams one connection may carry beyond the league's cap on matches at once (gRPC's
``max_concurrent_streams``): a reconnecting bot's new streams while the old ones end."""
TURN_AWAY_READ: Final = 1.0
"""Seconds a shut-out connection's first message is waited for before it is refused."""
PINGS: Final = 3
PING_TIMEOUT: Final = 5.0
MAX_LAG: Final = 0.5
"""The largest lag allowance, in seconds: a bot farther away than this pays the rest from its clock."""
REFUSED: Final = "unknown, revoked or expired token"
CANNOT_CHECK: Final = "the referee cannot check tokens now; try again"
"""A hello's answer while the token file cannot be read (``UNAVAILABLE``: the SDKs try again)."""
HELLO_CUT_SETTLE: Final = 0.2
"""Seconds the door waits, on a stream that ended before its hello, to learn whether gRPC cut it (a
message over 1 MiB, a broken connection) or the peer ended it."""
KEEPALIVE_CUT_SHARE: Final = 0.9
"""A remote stream that ends after its bot was silent this share of the keepalive timeout or longer was
cut by the keepalive, and its fault says so."""


KEEPALIVE_INTERVAL: Final = 20.0
"""Seconds between the transport's pings on a remote connection, at most: a league whose longest
decision is shorter pings that often (:meth:`Keepalive.for_time`), so a short time control also finds a
vanished bot sooner, and a test shortens the keepalive through the time control alone."""
KEEPALIVE_MIN_INTERVAL: Final = 1.0
"""Seconds between the transport's pings, at least, however short the league's decisions."""
KEEPALIVE_SLACK: Final = 10.0
"""Seconds a transport ping may go unanswered beyond the longest decision the league allows."""
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
        >>> Keepalive.for_time(TimeControl(per_action=0.3, bank=0.5))
        Keepalive(interval=1.3, timeout=11.3)
        """
        longest = round(time_control.per_action + time_control.bank + MAX_LAG, 3)
        interval = min(KEEPALIVE_INTERVAL, max(KEEPALIVE_MIN_INTERVAL, longest))
        return cls(interval, round(longest + KEEPALIVE_SLACK, 3))

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
    """Counts refused hellos and open streams per peer address (the front counts connections)."""

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


class RemoteSession(Session):
    """A remote entrant's session: its stream can also end because the transport's keepalive cut its
    connection, which gRPC reports as the end of the stream, and the fault should say that."""

    def __init__(
        self, session_id: str, hello: pb.Hello, context: Context, refusals: list[str], keepalive: Keepalive
    ) -> None:
        super().__init__(session_id, hello, context, refusals)
        self.keepalive = keepalive

    def explain(self, reason: str) -> str:
        """``reason``, or the keepalive's cut when the bot had been silent for about its timeout.

        >>> import time
        >>> session = RemoteSession.__new__(RemoteSession)
        >>> session.keepalive, session.heard = Keepalive(20, 31.5), time.monotonic() - 40
        >>> session.explain("the bot closed its stream")
        'no keepalive answer for 32s: connection cut (the bot last spoke 40s before)'
        """
        silence = time.monotonic() - self.heard
        if silence < KEEPALIVE_CUT_SHARE * self.keepalive.timeout:
            return reason
        return (
            f"no keepalive answer for {self.keepalive.timeout:.0f}s: connection cut "
            f"(the bot last spoke {silence:.0f}s before)"
        )


class Door(pb_grpc.RefereeServiceServicer):
    """The servicer of the remote door. ``names``: the league's remote entrants."""

    def __init__(
        self,
        book: TokenBook,
        names: Collection[str],
        lobby: Lobby,
        keepalive: Keepalive | None = None,
        max_matches: int = 1,
    ) -> None:
        self.book = book
        self.names = frozenset(names)
        self.lobby = lobby
        self.max_matches = max_matches
        """The league's cap on the matches one entrant plays at once (``remote: max_matches``)."""
        self.keepalive = keepalive if keepalive is not None else Keepalive.for_time(TimeControl())
        """The transport's keepalive (:func:`open_door` sets the one it opens the server with)."""
        self.doorman = Doorman()
        self.refusals: list[str] = []
        self.refusal_log = RefusalLog(LOGGER)
        self.front: Front | None = None
        """The public socket in front of the door's gRPC server, once :func:`open_door` opened it."""
        self._ids: Iterator[int] = itertools.count(1)
        self._digests: dict[Session, str] = {}
        self._joined: dict[Session, tuple[str, str, int]] = {}
        """Each session in the lobby: the address it came from, its entrant, and the matches at once its
        hello was granted."""
        self._grants: dict[str, Grant] | None = None
        """The grants as last read: what a connected bot's token is checked against while the token file
        cannot be read."""
        self._trouble: str | None = None

    def host(self, context: Context) -> str:
        """The address a stream came from: through the front, the stranger's own."""
        peer = context.peer() or ""
        found = self.front.address(peer) if self.front is not None else None
        return found if found is not None else peer_host(peer)

    def _read_grants(self) -> dict[str, Grant]:
        """The token file's grants; ``TokenError`` (said once on the log) if it cannot be read now."""
        try:
            grants = self.book.grants()
        except TokenError as exc:
            if self._trouble != str(exc):
                self._trouble = str(exc)
                LOGGER.warning("remote door: %s (hellos are told to try again until it can be read)", exc)
            raise
        if self._trouble is not None:
            LOGGER.warning("remote door: the token file can be read again")
            self._trouble = None
        self._grants = grants
        return grants

    def still_valid(self, name: str, session: Session) -> bool:
        """Whether ``name`` is still an entrant the door admits and the token ``session`` presented is
        still its own (not reissued, revoked, expired). While the token file cannot be read, as it was
        when last read: the referee's trouble is no verdict on a bot's token."""
        if name not in self.names:
            return False
        try:
            grant = self._read_grants().get(name)
        except TokenError:
            grant = self._grants.get(name) if self._grants is not None else None
        digest = self._digests.get(session, "")
        fresh = grant is not None and (grant.expires is None or time.time() < grant.expires)
        return fresh and grant is not None and hmac.compare_digest(grant.digest, digest)

    def grant(self, hello: pb.Hello) -> int:
        """The matches at once a hello is granted: what it asked for (0, absent, is 1), at most the
        league's cap, whatever a bot asks (a hostile one may ask for 4294967295).

        >>> door = Door.__new__(Door)
        >>> door.max_matches = 3
        >>> [door.grant(pb.Hello(max_matches=asked)) for asked in (0, 1, 2, 3, 4, 2**32 - 1)]
        [1, 1, 2, 3, 3, 3]
        """
        return max(1, min(hello.max_matches, self.max_matches))

    def allowance(self, host: str) -> int:
        """Streams ``host`` may hold beyond :data:`MAX_PER_PEER`: for each entrant with a session in the
        lobby from it, the matches at once it was granted less one (its first stream is one of the
        :data:`MAX_PER_PEER`). The front gets as many more connections (:meth:`Front.allow`)."""
        grants: dict[str, int] = {}
        for where, name, grant in self._joined.values():
            if where == host:
                grants[name] = max(grants.get(name, 1), grant)
        return sum(grant - 1 for grant in grants.values())

    def _allow(self, host: str) -> None:
        if self.front is not None:
            self.front.allow(host, self.allowance(host))

    async def Connect(self, request_iterator: object, context: Context) -> None:
        host = self.host(context)
        cap = MAX_PER_PEER + self.allowance(host)
        if self.doorman.open.get(host, 0) >= cap:
            self.refusal_log.refused(host, f"over {cap} streams at once from one address")
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "too many streams from one address")
            return
        self.doorman.open[host] = self.doorman.open.get(host, 0) + 1
        try:
            wait = self.doorman.shut_out(host, time.monotonic())
            if wait > 0:
                self.refusal_log.refused(host, "shut out after too many refused hellos")
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
            async with asyncio.timeout(HELLO_TIMEOUT):  # not wait_for: it could swallow gRPC's cancel
                first = await context.read()
        except TimeoutError:
            await self._refuse(
                host, context, grpc.StatusCode.DEADLINE_EXCEEDED, f"no hello within {HELLO_TIMEOUT:g}s"
            )
            return
        except Exception:  # a broken connection
            self.doorman.refused(host, time.monotonic())
            return
        if not isinstance(first, bytes):  # grpc.aio.EOF: the peer ended its side, or gRPC cut the stream
            try:
                await asyncio.sleep(HELLO_CUT_SETTLE)
            except asyncio.CancelledError:  # gRPC ended the call: it cut the stream, not the peer
                self.doorman.refused(host, time.monotonic())
                LOGGER.warning(
                    "remote door: refused a hello from %s: its first message was over %d bytes, or its "
                    "connection broke",
                    host,
                    MAX_TRANSPORT_BYTES,
                )
                raise
            await self._refuse(
                host, context, grpc.StatusCode.INVALID_ARGUMENT, "the stream ended before its hello"
            )
            return
        message = decode_request(first)
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
            grants = self._read_grants()
        except TokenError:  # the referee's trouble (a damaged file, no descriptor left): not the bot's
            await context.abort(grpc.StatusCode.UNAVAILABLE, CANNOT_CHECK)
            return
        found = TokenBook.match(grants, hello.token)
        if found is None or found[0] not in self.names:
            await self._refuse(host, context, grpc.StatusCode.UNAUTHENTICATED, REFUSED)
            return
        name, grant = found
        granted = self.grant(hello)
        if not self.lobby.room(name, granted):
            await context.abort(
                grpc.StatusCode.ALREADY_EXISTS,
                "this entrant is connected and playing: one connection at a time"
                if granted == 1
                else f"this entrant is connected and playing {granted} matches: {granted} streams at once",
            )
            return
        await self._play(name, grant.digest, hello, host, context, granted)

    async def _play(
        self, name: str, digest: str, hello: pb.Hello, host: str, context: Context, granted: int = 1
    ) -> None:
        """An admitted stream: welcome, pings, then the lobby until its stream ends. Granted several
        matches at once, it is one of the entrant's streams, each of which plays one match at a time."""
        session = RemoteSession(f"r{next(self._ids)}", hello, context, self.refusals, self.keepalive)
        session.latencies = []
        self._digests[session] = digest
        welcome = pb.Welcome(
            protocol_version=PROTOCOL_VERSION,
            session_id=session.session_id,
            remote=True,
            max_matches=granted,
        )
        LOGGER.info("remote door: %s connected from %s as %s", name, host, session.session_id)
        if self.front is not None:
            self.front.admitted(context.peer() or "")
        serving = asyncio.create_task(session.serve())
        try:
            await session.send(pb.ConnectResponse(welcome=welcome).SerializeToString())
            trips = [
                trip for n in range(PINGS) if (trip := await session.ping(n + 1, PING_TIMEOUT)) is not None
            ]
            round_trip = statistics.median(trips) if trips else 0.0
            session.lag_allowance = min(round_trip, MAX_LAG)
            self.lobby.measured(name, round_trip)
            await session.send(
                pb.ConnectResponse(
                    notice=pb.Notice(
                        text=f"remote connection: round trip {round_trip * 1000:.0f} ms; each decision gets "
                        f"{session.lag_allowance * 1000:.0f} ms more for it (at most {MAX_LAG * 1000:.0f})"
                        + (f"; {granted} matches at once, one per stream" if granted > 1 else "")
                    )
                ).SerializeToString()
            )
            self._joined[session] = (host, name, granted)
            self._allow(host)
            await self.lobby.join(name, session, granted)
            await serving
        finally:
            serving.cancel()
            session.close(session.close_reason or "stream ended")
            if self._joined.pop(session, None) is not None:
                self._allow(host)
            await self.lobby.leave(name, session)
            self.lobby.record(name, session)
            self._digests.pop(session, None)
            LOGGER.info("remote door: %s (%s) left: %s", name, session.session_id, session.close_reason)
        if session.status is not grpc.StatusCode.OK:
            await context.abort(session.status, session.close_reason)
        elif session.close_reason != LEAGUE_OVER:  # OK tells a remote bot the league is over: only then
            await context.abort(grpc.StatusCode.UNAVAILABLE, session.close_reason)


class DoorServer:
    """The door's gRPC server and the front before it, stopped together."""

    def __init__(self, server: grpc.aio.Server, front: Front, folder: Path, door: Door) -> None:
        self.server, self.front, self.folder, self.door = server, front, folder, door

    async def stop(self, grace: float | None = None) -> None:
        """Accepts nothing more, lets the streams end within ``grace`` seconds (their last statuses reach
        the bots), then drops every connection."""
        self.front.stop_listening()
        try:
            await self.server.stop(grace)
        finally:
            await self.front.stop()
            self.door.refusal_log.close()
            shutil.rmtree(self.folder, ignore_errors=True)


async def open_door(
    door: Door, settings: RemoteSettings, keepalive: Keepalive, limits: Limits | None = None
) -> tuple[DoorServer, int]:
    """The door's started server and the port it took (``--listen HOST:0`` takes a free one): the front
    on ``settings.listen``, the gRPC server behind it on a Unix socket in a private folder (no other
    user of the machine can reach it past the front). ``limits``: the front's, by default those that
    fit this process's open files (:meth:`Limits.for_this_process`)."""
    assert settings.listen is not None
    limits = limits if limits is not None else Limits.for_this_process()
    door.keepalive = keepalive
    # SERVER_OPTIONS cut any message over MAX_TRANSPORT_BYTES (1 MiB); a stranger's connection may
    # carry only a few streams at once. The keepalive replaces theirs (none, for sandboxed bots).
    streams = max(4, door.max_matches + SPARE_STREAMS)  # each of an entrant's matches is a stream
    options = dict(
        [*SERVER_OPTIONS, ("grpc.max_concurrent_streams", streams), *keepalive.options(), *limits.options()]
    )
    server = grpc.aio.server(options=list(options.items()))
    _add_referee_service(door, server)  # type: ignore[arg-type]
    folder = Path(tempfile.mkdtemp(prefix="pyramid-door-"))  # mode 0700
    inner = str(folder / "door.sock")
    if settings.tls_cert is not None and settings.tls_key is not None:
        credentials = grpc.ssl_server_credentials(
            [(settings.tls_key.read_bytes(), settings.tls_cert.read_bytes())]
        )
        bound = server.add_secure_port(f"unix:{inner}", credentials)
    else:
        bound = server.add_insecure_port(f"unix:{inner}")
    if bound == 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise OSError(f"cannot listen on unix:{inner}")
    await server.start()
    front = Front(inner, limits, door.refusal_log.refused)
    host, _, port = settings.listen.rpartition(":")
    try:
        taken = await front.start(host, int(port))
    except BaseException:
        await server.stop(None)
        await front.stop()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    door.front = front
    return DoorServer(server, front, folder, door), taken
