"""Bot sessions: one authenticated, long-lived gRPC stream per bot connection.

A :class:`Session` owns the stream once the handshake is done. Its reader task turns everything the bot
sends into the reply the referee is waiting for, a late reply it drops, or a recorded protocol violation,
so a bot that floods, lies about request ids or goes silent can never block the match that uses it. Only
a reply that names the pending request answers it: one wrong message costs at most one fault, never the
request the bot is still answering.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from pyramid_sdk import transport

transport.configure()  # before gRPC loads: it reads its settings once (see pyramid_sdk.transport)
# isort: split
import grpc
from google.protobuf import text_format
from google.protobuf.message import DecodeError

from pyramid_sdk.v1 import pyramid_pb2 as pb
from pyramid_sdk.v1 import views_pb2 as views

LOGGER = logging.getLogger(__name__)
"""At DEBUG, every message to and from each bot, one line each (``--log-level debug``)."""

Context = grpc.aio.ServicerContext[bytes, bytes]
"""Bytes both ways: the referee serialises its responses itself, and parses the bot's messages itself
(``server._add_referee_service``), so that bytes it cannot decode are the bot's fault, not a broken
stream."""

MAX_MESSAGE_BYTES: Final = 8 * 1024
"""The largest message a bot may send; its largest legal one, with a debug text at its cap, is under 2
KiB. A larger one is a malformed message (the transport itself cuts the stream past
``server.MAX_TRANSPORT_BYTES``)."""

MAX_VIOLATIONS: Final = 200
"""A session that keeps sending what nobody asked for is closed after this many stray messages."""

WRITE_TIMEOUT: Final = 10.0
"""Seconds a message may wait for the bot to read earlier ones before the session is given up."""

MAX_NAME: Final = 40
"""Characters of a bot's self-given name and version the referee keeps (``Hello.bot_name``)."""

MAX_NOTES: Final = 20
"""Notices about dropped replies and refused hellos one session sends its bot, at most: the bot learns
the pattern from the first few."""

INTERRUPTED: Final = "the referee was interrupted"
"""The status message of the streams the referee cancels when it is stopped (Ctrl-C, SIGTERM)."""


@dataclass(frozen=True, slots=True)
class Timeout:
    """No reply in time."""


@dataclass(frozen=True, slots=True)
class Closed:
    """The stream ended before the reply came."""

    reason: str


@dataclass(frozen=True, slots=True)
class Stray:
    """The bot answered something other than the pending request (wrong id, a second hello, ...)."""

    detail: str


Outcome = pb.ActionReply | Timeout | Closed | Stray
TIMED_OUT: Final = Timeout()


def clean_name(text: str) -> str:
    """A name or version a bot gave itself, as the referee keeps it: the first :data:`MAX_NAME`
    characters of its text, without surrounding white space, each unprintable character shown as ``?``
    (any bot may put anything in its hello, and the name reaches terminals and logs).

    >>> clean_name("  alpha\\nbot "), len(clean_name("x" * 100))
    ('alpha?bot', 40)
    """
    return "".join(char if char.isprintable() else "?" for char in text.strip()[:MAX_NAME])


def unique_names(wanted: Sequence[str]) -> list[str]:
    """``wanted``, each name taken already numbered (``random#2``): the seats of one table, or the bots
    of one comparison, never share a name.

    >>> unique_names(["random", "random", "bob", "random"])
    ['random', 'random#2', 'bob', 'random#3']
    """
    names: list[str] = []
    for name in wanted:
        unique, number = name, 1
        while unique in names:
            number += 1
            unique = f"{name}#{number}"
        names.append(unique)
    return names


class Session:
    """A connected, authenticated bot. The match runner talks to it through :meth:`send` and :meth:`ask`.

    ``refusals`` (the registry's list) receives a line when the bot says hello again on this stream."""

    def __init__(
        self, session_id: str, hello: pb.Hello, context: Context, refusals: list[str] | None = None
    ) -> None:
        self.session_id = session_id
        self.bot_name = clean_name(hello.bot_name)
        self.bot_version = clean_name(hello.bot_version)
        self._refusals = refusals if refusals is not None else []
        self._context = context
        self._write_lock = asyncio.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = self._write_deadline = 0.0
        self._writer: asyncio.Task[object] | None = None
        """The task writing a request, from before it waits for the write lock until the write is done."""
        self._write_timed_out = False
        self._pending: tuple[int, asyncio.Future[Outcome]] | None = None
        self._expired: set[int] = set()
        self._violations: list[str] = []
        self._notes: list[str] = []
        self._noted = 0
        self._request_ids = 0
        self._drops = 0
        self._violation_count = 0
        self._closed = asyncio.Event()
        self.close_reason = ""
        self.status = grpc.StatusCode.OK
        """The status the stream ends with: OK, or CANCELLED when the referee was interrupted."""
        self.lag_allowance = 0.0
        """Seconds added to each decision's time for a remote connection's network round trip."""
        self.latencies: list[float] | None = None
        """A remote session's decision latencies (request written to reply read), seconds; else None."""
        self._ping: tuple[int, asyncio.Future[None]] | None = None
        self.heard = time.monotonic()
        """When the bot's last message came (``time.monotonic()``), or the session began."""
        if LOGGER.isEnabledFor(logging.DEBUG):
            self._log_in(pb.ConnectRequest(hello=hello))

    def _log_out(self, message: bytes) -> None:
        """Logs a message to the bot (called only at DEBUG: decoding it costs more than sending it)."""
        text = text_format.MessageToString(pb.ConnectResponse.FromString(message), as_one_line=True)
        LOGGER.debug("%s %s <- %s", self.session_id, self.bot_name, text)

    def _log_in(self, message: pb.ConnectRequest) -> None:
        """Logs a message from the bot (called only at DEBUG). A hello's token is a secret: never logged."""
        if message.HasField("hello") and message.hello.token:
            redacted = pb.ConnectRequest()
            redacted.CopyFrom(message)
            redacted.hello.token = "(secret)"
            message = redacted
        LOGGER.debug(
            "%s %s -> %s",
            self.session_id,
            self.bot_name,
            text_format.MessageToString(message, as_one_line=True),
        )

    @property
    def is_closed(self) -> bool:
        return self._closed.is_set()

    def close(self, reason: str, status: grpc.StatusCode = grpc.StatusCode.OK) -> None:
        """Ends the session; the stream handler returns and the bot sees its stream end with ``status``
        (OK when the referee is done with it, CANCELLED when the referee was interrupted,
        RESOURCE_EXHAUSTED when the bot flooded it, UNAVAILABLE when a remote bot stopped answering)."""
        if not self._closed.is_set():
            LOGGER.debug("%s %s: session closed: %s", self.session_id, self.bot_name, reason)
            self.close_reason = reason
            self.status = status
            self._closed.set()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._pending is not None and not self._pending[1].done():
                self._pending[1].set_result(Closed(reason))

    async def wait_closed(self) -> None:
        await self._closed.wait()

    def take_violations(self) -> list[str]:
        """Stray messages since the last call, as one-line details."""
        if not self._violations:  # asked before every decision: the usual answer allocates nothing
            return self._violations
        violations, self._violations = self._violations, []
        return violations

    def take_notes(self) -> list[str]:
        """Lines for the bot that are no fault of a match (a dropped reply, a refused hello), since the
        last call; the seat sends them as notices before its next request."""
        if not self._notes:
            return self._notes
        notes, self._notes = self._notes, []
        return notes

    @property
    def has_notes(self) -> bool:
        return bool(self._notes)

    def _note(self, text: str) -> None:
        self._noted += 1
        if self._noted <= MAX_NOTES:
            self._notes.append(text)

    @property
    def busy(self) -> bool:
        """A request timed out and its answer has not come yet: the bot may still be thinking about it."""
        return bool(self._expired)

    def next_request_id(self) -> int:
        """Request ids are unique for the session's life, so a late reply from an earlier match can never
        pass for the answer to a request of a later one."""
        self._request_ids += 1
        return self._request_ids

    def start_match(self) -> None:
        """Forgets stray messages of earlier matches: they were charged there, or came after the end."""
        self._violations = []

    async def send(self, message: bytes, timeout: float = WRITE_TIMEOUT) -> bool:
        """Writes one serialised ``ConnectResponse`` (the server sends bytes as they are); ``False`` (and
        the session closed) if the stream is gone or the bot has not read its earlier messages within
        ``timeout`` seconds (a bot that stops reading fills the transport's window, and an unbounded write
        would wait forever).

        gRPC allows one write in flight per stream; the lock keeps the handshake's welcome and the first
        match's messages from overlapping.
        """
        if self.is_closed:
            return False
        if LOGGER.isEnabledFor(logging.DEBUG):
            self._log_out(message)
        try:
            async with asyncio.timeout(timeout), self._write_lock:
                await self._context.write(message)
        except TimeoutError:
            self.close(f"the bot read nothing for {timeout:g}s")
            return False
        except Exception as exc:  # the stream can fail in many ways; all mean the same here
            self.close(f"stream write failed: {type(exc).__name__}")
            return False
        return True

    async def ask(self, message: bytes, request_id: int, timeout: float) -> Outcome:
        """Sends an action request (serialised, with id ``request_id``) and waits at most ``timeout``
        seconds, the write included, for its reply. A write still stuck then (a bot that stopped
        reading) gets ``max(timeout, 1)`` seconds in all, waiting for the write lock included, before the
        session is given up.

        A decision usually takes a millisecond against a deadline of seconds, so the session keeps one
        timer and moves the deadline it checks, rather than arming and cancelling a timer per decision,
        which was a tenth of the referee's work for one (see :meth:`_on_deadline`).
        """
        if self.is_closed:
            return Closed(self.close_reason)
        if LOGGER.isEnabledFor(logging.DEBUG):
            self._log_out(message)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Outcome] = loop.create_future()
        now = loop.time()
        timeout += self.lag_allowance
        self._pending = (request_id, future)
        self._deadline = deadline = now + timeout
        self._write_deadline = now + max(timeout, 1.0)
        timer = self._timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            self._timer = loop.call_at(deadline, self._on_deadline)
        self._writer = writer = asyncio.current_task()
        try:
            try:
                async with self._write_lock:
                    await self._context.write(message)
            except asyncio.CancelledError:
                if not self._write_timed_out or writer is None:
                    raise
                self._write_timed_out = False
                writer.uncancel()
                self.close(f"the bot read nothing for {max(timeout, 1.0):g}s")
                return Closed(self.close_reason)
            except Exception as exc:  # the stream can fail in many ways; all mean the same here
                self.close(f"stream write failed: {type(exc).__name__}")
                return Closed(self.close_reason)
            finally:
                self._writer = None
            outcome = await future
            if self.latencies is not None and isinstance(outcome, pb.ActionReply):
                self.latencies.append(loop.time() - now)
            return outcome
        finally:
            self._pending = None

    async def ping(self, nonce: int, timeout: float) -> float | None:
        """Seconds until the bot's Pong for a Ping (a remote connection's round trip), or ``None`` if
        none came within ``timeout``. Only between matches: the bot answers it when it next reads."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._ping = (nonce, future)
        started = loop.time()
        try:
            message = pb.ConnectResponse(ping=pb.Ping(nonce=nonce)).SerializeToString()
            if not await self.send(message, timeout):
                return None
            await asyncio.wait_for(future, max(0.0, started + timeout - loop.time()))
        except TimeoutError:
            return None
        finally:
            self._ping = None
        return loop.time() - started

    def _on_deadline(self) -> None:
        """The session's timer. It fires at the deadline of the request pending when it was armed; if a
        later request is pending now, it re-arms for that one's deadline instead."""
        self._timer = None
        pending = self._pending
        if pending is None:
            return
        loop = asyncio.get_running_loop()
        if loop.time() < self._deadline:
            self._timer = loop.call_at(self._deadline, self._on_deadline)
            return
        request_id, future = pending
        if not future.done():
            future.set_result(TIMED_OUT)
            self._expired.add(request_id)
        if self._writer is not None:  # still waiting to write, or writing
            loop.call_at(self._write_deadline, self._stop_write, request_id)

    def _stop_write(self, request_id: int) -> None:
        pending, writer = self._pending, self._writer
        if pending is not None and pending[0] == request_id and writer is not None:
            self._write_timed_out = True
            writer.cancel()

    async def serve(self) -> None:
        """Reads the bot's messages until the stream ends or the session is closed."""
        reader = asyncio.create_task(self._read_loop())
        closer = asyncio.create_task(self._closed.wait())
        try:
            await asyncio.wait({reader, closer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            reader.cancel()
            closer.cancel()
            self.close(self.close_reason or "stream ended")

    async def _read_loop(self) -> None:
        while True:
            try:
                message = await self._context.read()
            except Exception as exc:  # a message over the transport's limit, or a broken connection
                self.close(self.explain(f"stream broken: {_status_name(exc)}"))
                return
            if not isinstance(message, bytes):  # grpc.aio.EOF
                self.close(self.explain("the bot closed its stream"))
                return
            self.heard = time.monotonic()
            if self._dispatch(message):
                # The match runner goes first: it sends the next request while this bot has nothing to
                # say, and this task asks gRPC for the next message after that, off the critical path.
                await asyncio.sleep(0)

    def explain(self, reason: str) -> str:
        """Why the stream ended, for the fault detail: ``reason``, as the read saw it. A remote session
        says more (``referee.remote.door.RemoteSession``: its connection may have been cut under it)."""
        return reason

    def _dispatch(self, data: bytes) -> bool:
        """Routes one message; ``True`` if it was the reply the referee was waiting for.

        Only a reply naming the pending request answers it. A message that is too big or does not
        decode answers it too, as a malformed fault, if the request id it carries can still be read (a
        talk that is not UTF-8, say); otherwise, like any other message that is not that reply, it is
        one stray message: a malformed fault at the seat's next decision, while the pending request
        stays pending with its clock running. A reply to a request already decided is dropped."""
        size = len(data)
        if size > MAX_MESSAGE_BYTES:
            return self._undecodable(data, f"a message of {size} bytes; the limit is {MAX_MESSAGE_BYTES}")
        message = decode_request(data)
        if isinstance(message, str):
            LOGGER.debug("%s %s -> %d undecodable bytes", self.session_id, self.bot_name, size)
            return self._undecodable(data, message)
        if LOGGER.isEnabledFor(logging.DEBUG):
            self._log_in(message)
        kind = message.WhichOneof("kind")
        if kind == "action":
            return self._reply(message.action.request_id, message.action)
        if kind == "pong" and self._ping is not None and message.pong.nonce == self._ping[0]:
            if not self._ping[1].done():
                self._ping[1].set_result(None)
            return True
        if kind == "hello":
            self._refuse_hello(message.hello)
            return self._stray("a second hello on this stream, refused: a bot says hello once")
        return self._stray(f"unexpected {kind or 'empty'} message")

    def _undecodable(self, data: bytes, problem: str) -> bool:
        request_id = reply_id(data)
        if request_id is None:
            return self._stray(problem)
        return self._reply(request_id, Stray(problem))

    def _reply(self, request_id: int, reply: pb.ActionReply | Stray) -> bool:
        """Routes a reply to request ``request_id``: the answer to the pending request, a late answer to
        a request already decided (dropped: the decision stands), or a stray message."""
        pending = self._pending
        if pending is not None and pending[0] == request_id and not pending[1].done():
            pending[1].set_result(reply)
            return True
        if 0 < request_id <= self._request_ids:  # asked before, and decided: the decision stands
            LOGGER.debug("%s %s: dropped a reply to request %d", self.session_id, self.bot_name, request_id)
            if request_id in self._expired:
                self._expired.discard(request_id)  # its timeout was the bot's fault, and it was told
            else:
                self._note(f"dropped a reply to request {request_id}: that request was already decided")
            self._drops += 1
            if self._drops > self._request_ids:  # more late replies than requests: a flood
                self._count()
            return False
        return self._stray(f"reply to request {request_id}, which the referee never sent")

    def _refuse_hello(self, hello: pb.Hello) -> None:
        """A second hello on a stream is refused (the token it carries is never looked at): the organiser
        sees it among the refusals, the bot in a notice."""
        line = (
            f"a second hello on the stream of session {self.session_id} (bot name {self.bot_name!r}, "
            f"second hello's bot name {clean_name(hello.bot_name)!r}): a bot says hello once per stream"
        )
        LOGGER.warning("refused: %s", line)
        self._refusals.append(line)
        self._note(
            f"hello refused: this stream said hello already (session {self.session_id}); "
            "a bot says hello once per stream, and it costs a malformed fault"
        )

    def _count(self) -> bool:
        """Counts a message that was not the awaited reply; ``False`` (and the session closed) past
        :data:`MAX_VIOLATIONS`."""
        self._violation_count += 1
        if self._violation_count > MAX_VIOLATIONS:
            self.close(f"more than {MAX_VIOLATIONS} stray messages", grpc.StatusCode.RESOURCE_EXHAUSTED)
            return False
        return True

    def _stray(self, detail: str) -> bool:
        """Charges a message that is not the awaited reply: it waits in the violations, a malformed fault
        at the seat's next decision (the pending request, if any, stays pending). Always ``False``."""
        if self._count():
            self._violations.append(detail)
        return False


def decode_request(data: bytes) -> pb.ConnectRequest | str:
    """The message in ``data``, or one line saying why it is none (garbage, or text that is not UTF-8).

    >>> decode_request(b"\\xff\\xff")
    '2 bytes that do not decode as a ConnectRequest: Wire format was corrupt'
    """
    try:
        return pb.ConnectRequest.FromString(data)
    except DecodeError as exc:
        reason = str(exc).rsplit(": ", 1)[-1] or "not protobuf"
        return f"{len(data)} bytes that do not decode as a ConnectRequest: {reason}"


def reply_id(data: bytes) -> int | None:
    """The id of the request a message answers, read from bytes that do not decode as a whole (a talk
    that is not UTF-8) or are over the size limit; ``None`` if it names none.

    >>> bad = pb.ConnectRequest(action=pb.ActionReply(request_id=7, talk="@@")).SerializeToString()
    >>> reply_id(bad.replace(b"@@", b"\\xff\\xfe")), reply_id(b"\\xff\\xff")
    (7, None)
    """
    try:
        view = views.ConnectRequestView.FromString(data)
    except DecodeError:
        return None
    return view.action.request_id if view.HasField("action") else None


def _status_name(exc: BaseException) -> str:
    """What broke a stream, in one word: the gRPC status code, or the exception type."""
    if isinstance(exc, grpc.RpcError):
        code = exc.code() if hasattr(exc, "code") else None
        return f"{code.name if code else type(exc).__name__}"
    return type(exc).__name__


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class SessionRegistry:
    """Tokens the launcher handed out, and the sessions that presented them.

    A token admits one connection, once: it is bound to the process launched with it, and is void once
    used or once that process has ended (:meth:`forget`). :meth:`expect` returns a future that the
    handshake of the connection with that token resolves. A hello that presents a token already spent is
    refused and kept in :attr:`refusals`: some process other than the bot tried to take its seat.
    """

    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Future[Session]] = {}
        self._active: dict[str, Session] = {}
        self._spent: set[bytes] = set()
        """Digests of the tokens used or void: enough to recognise a replay, kept small for long runs."""
        self._ids: Iterator[int] = itertools.count(1)
        self.refusals: list[str] = []
        """One line per refused hello that presented a spent token, or came a second time on one stream
        (never the token itself)."""

    def expect(self, token: str) -> asyncio.Future[Session]:
        future: asyncio.Future[Session] = asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        return future

    def forget(self, token: str) -> None:
        self._spent.add(_digest(token))
        future = self._waiting.pop(token, None)
        if future is not None and not future.done():
            future.cancel()
        session = self._active.pop(token, None)
        if session is not None:
            session.close("the referee released this bot")

    def attach(self, token: str, hello: pb.Hello, context: Context) -> Session | None:
        """The session for a connection that presented ``token``, or ``None`` if it is not expected."""
        for known, future in self._waiting.items():
            if hmac.compare_digest(token.encode(), known.encode()) and not future.done():
                session = Session(f"s{next(self._ids)}", hello, context, self.refusals)
                del self._waiting[known]
                self._spent.add(_digest(known))
                self._active[known] = session
                future.set_result(session)
                return session
        if _digest(token) in self._spent:
            name = clean_name(hello.bot_name)
            line = (
                f"a hello from {context.peer() or 'an unknown peer'} (bot name {name!r}) presented the "
                "token of a seat that was already taken or whose process had ended"
            )
            LOGGER.warning("refused: %s", line)
            self.refusals.append(line)
        return None
