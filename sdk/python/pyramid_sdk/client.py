"""Connects a :class:`~pyramid_sdk.bot.Bot` to a referee over gRPC and plays until the referee is done.

::

    from pyramid_sdk.client import run
    run(MyBot())   # address from PYRAMID_ADDRESS, token from the pipe PYRAMID_TOKEN_FD names

A slow ``play()`` only delays this bot's answer; the referee's time control decides what that costs.

The same bot plays as a remote entrant, from its author's machine (docs/REMOTE.md), when
``PYRAMID_TOKEN_FILE`` names its token's file (and ``PYRAMID_TLS_CA`` the organiser's CA certificate,
for TLS): it then reconnects with backoff whenever the referee is not there or the connection drops,
and stops when the league is over (the referee ends the stream with OK) or on Ctrl-C. A remote bot may
ask to play several matches at once (``run(MyBot(), max_matches=4)``, or ``PYRAMID_MAX_MATCHES=4``): once
the referee's welcome grants N, it plays on N streams, each on a thread of its own with its own copy of
the bot (:mod:`pyramid_sdk.lanes`).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pyramid_sdk import transport

transport.configure()  # before gRPC loads: it reads its settings once (see pyramid_sdk.transport)
# isort: split
import grpc

from pyramid_sdk.handshake import CONNECT, hello_request
from pyramid_sdk.stream import AsyncioStream, StreamEnded, ThreadStream, single_thread

if TYPE_CHECKING:
    import threading

    from pyramid_sdk.bot import Bot
    from pyramid_sdk.dispatch import Dispatcher
    from pyramid_sdk.lanes import Lane

ENV_ADDRESS = "PYRAMID_ADDRESS"
ENV_TOKEN_FD = "PYRAMID_TOKEN_FD"
"""The file descriptor the referee's launcher passes the token on: read once, then closed."""
ENV_TOKEN = "PYRAMID_TOKEN"
"""A token given by hand, for a bot started outside the launcher (the launcher never sets it)."""
ENV_TOKEN_FILE = "PYRAMID_TOKEN_FILE"
"""A remote entrant's token file (docs/REMOTE.md): setting it makes the bot a remote one, which
reconnects."""
ENV_TLS_CA = "PYRAMID_TLS_CA"
"""The PEM file of the CA that signed the referee's certificate: the connection then uses TLS."""
PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 30.0
"""Seconds a remote bot waits before reconnecting: doubling from the first to the most, with jitter."""
FINAL = frozenset({"UNAUTHENTICATED", "FAILED_PRECONDITION", "INVALID_ARGUMENT", "PERMISSION_DENIED"})
"""Refusals that another try cannot change (a wrong token, protocol version): a remote bot stops."""
ENV_MAX_MATCHES = "PYRAMID_MAX_MATCHES"
"""How many matches at once a remote bot asks for, when ``run`` is not given ``max_matches``."""


class ConnectionRefused(RuntimeError):
    """The referee refused this bot (wrong token, protocol version) or could not be reached."""


def run(
    bot: Bot, address: str | None = None, token: str | None = None, max_matches: int | None = None
) -> None:
    """Plays every match the referee asks for, then returns when the referee ends the stream: with OK
    (done with this bot), or with CANCELLED (the referee was interrupted; a line on stderr says so).

    ``address`` defaults to ``PYRAMID_ADDRESS``, and ``token`` to what the launcher wrote on the pipe
    ``PYRAMID_TOKEN_FD`` names (or, for a bot started by hand, ``PYRAMID_TOKEN``; when both are set, the
    pipe wins). A refusal exits the
    process with a one-line message.

    ``max_matches`` (else ``PYRAMID_MAX_MATCHES``, else 1) is how many matches at once a remote bot asks
    for; a bot the referee started plays one match at a time whatever it asks.
    """
    address = address or os.environ.get(ENV_ADDRESS)
    if not address:
        raise SystemExit(f"{bot.name}: no referee address: set {ENV_ADDRESS} or pass address=")
    try:
        token = token if token is not None else read_token()
    except ValueError as exc:
        raise SystemExit(f"{bot.name}: {exc}") from None
    try:
        on_one_thread = single_thread()
    except ValueError as exc:
        raise SystemExit(f"{bot.name}: {exc}") from None
    try:
        credentials = channel_credentials()
    except ValueError as exc:
        raise SystemExit(f"{bot.name}: {exc}") from None
    try:
        if os.environ.get(ENV_TOKEN_FILE) and os.environ.get(ENV_TOKEN_FD) is None:
            from pyramid_sdk import remote  # noqa: PLC0415 (a remote bot's only)
            from pyramid_sdk.lanes import Lanes, matches_asked  # noqa: PLC0415 (a remote bot's only)

            try:
                options = remote.channel_options(remote.keepalive_timeout())
                asked = matches_asked(max_matches, os.environ.get(ENV_MAX_MATCHES))
            except ValueError as exc:
                raise SystemExit(f"{bot.name}: {exc}") from None

            def serve_lane(lane: Lane) -> None:
                _serve_remote(lane.bot, address, token, credentials, on_one_thread, options, asked, lane=lane)

            lanes = Lanes(bot, serve_lane)
            try:
                _serve_remote(bot, address, token, credentials, on_one_thread, options, asked, lanes.grow)
            finally:
                lanes.end()
        else:
            _Connection(bot, address, token, credentials).serve(on_one_thread)
    except ConnectionRefused as exc:
        raise SystemExit(f"{bot.name}: {exc}") from None


def channel_credentials() -> grpc.ChannelCredentials | None:
    """TLS credentials trusting the CA of ``PYRAMID_TLS_CA``, or ``None`` (no TLS) if it is not set."""
    path = os.environ.get(ENV_TLS_CA)
    if not path:
        return None
    try:
        with open(path, "rb") as file:
            pem = file.read()
    except OSError as exc:
        raise ValueError(f"cannot read the CA certificate {ENV_TLS_CA}={path}: {exc.strerror}") from None
    if PEM_CERTIFICATE not in pem:  # gRPC would take it, and fail every handshake
        raise ValueError(f"{ENV_TLS_CA}={path} is not a PEM certificate")
    return grpc.ssl_channel_credentials(pem)


def _serve_remote(
    bot: Bot,
    address: str,
    token: str,
    credentials: grpc.ChannelCredentials | None,
    on_one_thread: bool,
    options: Sequence[tuple[str, int]],
    asked: int = 1,
    on_welcome: Callable[[int], None] | None = None,
    lane: Lane | None = None,
) -> None:
    """Plays as a remote entrant: connects, plays what it is offered, and reconnects with backoff after
    any end of its connection but the league's (``OK``) and a :data:`FINAL` refusal, until Ctrl-C: a
    drop, a cut, an absent or interrupted referee, and whatever else ends the stream. A connection that
    fails before the referee answered is probed (:func:`pyramid_sdk.remote.tls_refusal`): TLS settings
    that can never work stop the bot with one line saying what to set.

    ``asked``: the matches at once its hello asks for; ``on_welcome`` is told what each welcome granted
    (the first stream starts the others then, :class:`~pyramid_sdk.lanes.Lanes`). A ``lane`` is one of
    those others: its label names it in its lines, and its stop event stops it as Ctrl-C does."""
    import random  # noqa: PLC0415 (its jitter is a remote bot's only: a sandboxed bot starts without it)

    from pyramid_sdk.remote import tls_refusal  # noqa: PLC0415

    label = lane.label if lane is not None else bot.name
    interrupted = lane.stop if lane is not None else _ctrl_c_seen()
    delay = BACKOFF_FIRST
    while not interrupted.is_set():
        connection = _Connection(
            bot, address, token, credentials, remote=True, options=options, asked=asked, on_welcome=on_welcome
        )
        unavailable = False
        try:
            if lane is not None:
                lane.connection = connection
            connection.serve(on_one_thread)
            print(f"{label}: the referee ended the stream: the league is over", file=sys.stderr)
            return
        except StreamEnded as exc:
            if exc.code.name in FINAL:
                raise ConnectionRefused(str(exc)) from None
            why, unavailable = str(exc), exc.code is grpc.StatusCode.UNAVAILABLE
        except KeyboardInterrupt:
            interrupted.set()
        except Exception as exc:  # gRPC's, or a message the SDK could not take: this connection is over
            why = f"{type(exc).__name__}: {exc}"
        try:
            if not interrupted.is_set():  # also set when gRPC turned a Ctrl-C into a failed connection
                if connection.welcomed:
                    delay = BACKOFF_FIRST
                elif unavailable and (refusal := tls_refusal(address, os.environ.get(ENV_TLS_CA))):
                    raise ConnectionRefused(refusal)
                wait = delay * random.uniform(0.8, 1.2)
                print(f"{label}: {why}; reconnecting in {wait:.1f}s", file=sys.stderr, flush=True)
                interrupted.wait(wait)
        except KeyboardInterrupt:
            interrupted.set()
        if interrupted.is_set():
            print(f"{label}: stopped (Ctrl-C)", file=sys.stderr)
            return
        delay = min(delay * 2, BACKOFF_MAX)


def _ctrl_c_seen() -> threading.Event:
    """An event set by Ctrl-C (SIGINT), which still raises KeyboardInterrupt as usual: a remote bot's
    reconnection loop reads it, so that a Ctrl-C that arrives inside a gRPC call, and comes out of it as
    a failed connection rather than as KeyboardInterrupt, still stops the bot."""
    import signal  # noqa: PLC0415 (a remote bot's only, as is its loop)
    import threading  # noqa: PLC0415

    seen = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        return seen  # signals reach the main thread only

    def on_sigint(signum: int, frame: object) -> None:
        seen.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    return seen


def read_token() -> str:
    """The token from the launcher's pipe, read to its end and closed, so that nothing else can read it
    later; else the file ``PYRAMID_TOKEN_FILE`` names; else ``PYRAMID_TOKEN``; else ``""``. Raises
    ``ValueError`` for a descriptor that is not open or a token file that cannot be read."""
    fd = os.environ.pop(ENV_TOKEN_FD, None)
    if fd is None:
        path = os.environ.get(ENV_TOKEN_FILE)
        if path:
            try:
                with open(path, encoding="ascii", errors="replace") as file:
                    return file.read(1024).strip()
            except OSError as exc:
                raise ValueError(
                    f"cannot read the token file {ENV_TOKEN_FILE}={path}: {exc.strerror}"
                ) from None
        return os.environ.get(ENV_TOKEN, "")
    try:
        with os.fdopen(int(fd), "rb") as pipe:
            return pipe.read(1024).decode("ascii", "replace").strip()
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the token from {ENV_TOKEN_FD}={fd}: {exc}") from None


class _Connection:
    """One stream to the referee: the hello, then every message handed to the bot's dispatcher.

    Only gRPC and this module load before the hello; protobuf, the generated classes and the game's wire
    format load with the first message (:mod:`pyramid_sdk.dispatch`), so that the four fresh bot
    processes of every match start about as fast as gRPC alone (``benchmarks/README.md``, "Start-up").
    """

    def __init__(
        self,
        bot: Bot,
        address: str,
        token: str,
        credentials: grpc.ChannelCredentials | None = None,
        remote: bool = False,
        options: Sequence[tuple[str, int]] = (),
        asked: int = 1,
        on_welcome: Callable[[int], None] | None = None,
    ) -> None:
        self.bot = bot
        self.asked = asked
        """The matches at once the hello asks for (a remote bot's; 1 sends the hello without the field)."""
        self.on_welcome = on_welcome
        self.address = address
        self.token = token
        self.credentials = credentials
        self.remote = remote
        """A remote entrant's connection: every abnormal end of the stream goes to the caller."""
        self.options = options
        """The channel's options: a remote connection's keepalive (:mod:`pyramid_sdk.remote`)."""
        self.welcomed = False
        self._dispatcher: Dispatcher | None = None
        self.stream: ThreadStream | None = None
        """The stream while it is open (on one thread): another thread may close it to stop this one."""

    def serve(self, on_one_thread: bool) -> None:
        """Plays until the referee ends the stream, on :class:`~pyramid_sdk.stream.ThreadStream` or, if not
        ``on_one_thread``, on :class:`~pyramid_sdk.stream.AsyncioStream`."""
        asked = self.asked if self.asked > 1 else 0  # one at a time: the hello every bot sent before
        first = hello_request(self.token, self.bot.name, self.bot.version, max_matches=asked)
        try:
            if on_one_thread:
                # The bot's methods run on this thread, between two messages: one decision is one round
                # trip with no thread hand-off (see pyramid_sdk.stream).
                with ThreadStream(self.address, CONNECT, first, self.credentials, self.options) as stream:
                    self.stream = stream
                    reply = None
                    while (message := stream.exchange(reply)) is not None:
                        reply = self._handle(message)
            else:
                asyncio.run(self._serve_asyncio(first))
        except StreamEnded as exc:
            if self.remote:
                raise
            if exc.code is not grpc.StatusCode.CANCELLED:
                raise ConnectionRefused(str(exc)) from None
            # The referee was interrupted: not this bot's failure, so run() returns (exit code 0).
            print(f"{self.bot.name}: the referee cancelled the stream: {exc.details}", file=sys.stderr)

    async def _serve_asyncio(self, first: bytes) -> None:
        async with AsyncioStream(self.address, CONNECT, first, self.credentials, self.options) as stream:
            reply = None
            while (message := await stream.exchange(reply)) is not None:
                reply = self._handle(message)

    def _handle(self, data: bytes) -> bytes | None:
        if self._dispatcher is None:
            from pyramid_sdk.dispatch import Dispatcher  # noqa: PLC0415  (after the hello: see the class)

            self._dispatcher = Dispatcher(self.bot)
        reply = self._dispatcher.handle(data)
        if not self.welcomed:  # the first message is the welcome: it says what was granted
            self.welcomed = True
            if self.on_welcome is not None:
                self.on_welcome(self._dispatcher.granted)
        return reply
