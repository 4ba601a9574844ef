"""The live feed: what the league driver and the human tables tell every open page.

Each listener (a browser's event stream) has a bounded queue of its own. Publishing never waits: a
listener whose queue is full is a slow or gone browser, and it is dropped at once: its queue is
emptied and its connection cut (a browser's script reconnects and reloads what it shows), so no
browser can stall a match, and none that stopped reading keeps its socket. A listener whose socket has
taken nothing for :data:`SEND_DEADLINE` is dropped the same way, however few events there were. Each
address may hold :data:`LISTENERS_PER_ADDRESS` streams at once, and the server :data:`LISTENERS`.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Final

QUEUE: Final = 64
"""Sends (each what was published within :data:`SEND_EVERY`) a listener may fall behind by before it is
dropped."""
SEND_EVERY: Final = 0.25
"""Seconds the events published are gathered for before they are sent to the listeners, as one chunk:
a fast league publishes hundreds a second, and a send per event per listener would cost the play loop
that many wake-ups of every stream (with 200 listeners, half the pace of a league of in-process bots:
``benchmarks/serve.py --watched``)."""
KEEPALIVE: Final = 15.0
"""Seconds between comments on an idle stream, so that proxies and browsers keep it open."""
SEND_DEADLINE: Final = 10.0
"""Seconds a listener's connection may take no bytes (its buffers full) before it is dropped."""
LISTENERS_PER_ADDRESS: Final = 8
"""Event streams one address may hold at once (a browser tab holds one); the next is refused (429)."""
LISTENERS: Final = 224
"""Event streams the server holds at once, from every address; the next is refused (503). Of the
server's 256 connections (``limits.CONNECTIONS``), 32 stay for pages and the API."""


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened: ``kind`` names it (docs/SERVER.md, "Events"), ``data`` is its JSON body."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)

    def sse(self) -> str:
        """The event in the server-sent events format; the JSON holds no raw newline, so one data line."""
        return f"event: {self.kind}\ndata: {json.dumps(self.data, ensure_ascii=False)}\n\n"


_CLOSE: Final = b""
"""Put in a dropped listener's queue (no event is empty): its stream ends."""


class Listener:
    """One event stream: its queue of encoded events, its address, and what cuts its connection."""

    def __init__(self, address: str, queue: int, cut: Callable[[], None]) -> None:
        self.address = address
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(queue + 1)
        self.cut = cut
        self.dropped = False

    async def chunks(self, keepalive: float = KEEPALIVE) -> AsyncIterator[bytes]:
        """The stream's text, as it is to be sent, until the listener is dropped. Every event waiting
        when the stream wakes goes out in one write: in a fast league a stream wakes for several, and
        a write per event would cost the play loop that many sends for every listener."""
        yield b"retry: 2000\n\n"
        while True:
            try:
                async with asyncio.timeout(keepalive):  # not wait_for: no task per event
                    chunk = await self.queue.get()
            except TimeoutError:
                yield b": keepalive\n\n"
                continue
            parts = [chunk]
            while chunk and not self.queue.empty():
                chunk = self.queue.get_nowait()
                parts.append(chunk)
            if parts[-1]:
                yield b"".join(parts)
                continue
            if len(parts) > 1:
                yield b"".join(parts)
            return


class ListenerRefused(Exception):
    """Too many streams: ``status`` 429 for one address's, 503 for the server's."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


class Hub:
    """Fans events out to listeners without ever blocking the publisher."""

    def __init__(
        self,
        queue: int = QUEUE,
        per_address: int = LISTENERS_PER_ADDRESS,
        most: int = LISTENERS,
        every: float = SEND_EVERY,
    ) -> None:
        self._queue = queue
        self._per_address = per_address
        self._most = most
        self._listeners: set[Listener] = set()
        self._addresses: Counter[str] = Counter()
        self._every = every
        self._pending: list[bytes] = []
        self._due: asyncio.TimerHandle | None = None
        self.dropped = 0
        """Listeners dropped because they fell :data:`QUEUE` events behind or stopped taking bytes."""
        self.closed = False

    @property
    def listeners(self) -> int:
        return len(self._listeners)

    def publish(self, kind: str, **data: Any) -> None:
        """Tells every listener, within :data:`SEND_EVERY`; returns at once."""
        if not self._listeners:
            return
        self._pending.append(Event(kind, data).sse().encode())  # once, whatever the number of listeners
        if self._due is None:
            try:
                self._due = asyncio.get_running_loop().call_later(self._every, self._send)
            except RuntimeError:  # no event loop (a caller outside the server): sent now
                self._send()

    def _send(self) -> None:
        """What was published since the last send, to every listener as one chunk."""
        self._due = None
        chunk, self._pending = b"".join(self._pending), []
        if not chunk:
            return
        for listener in list(self._listeners):
            try:
                listener.queue.put_nowait(chunk)
            except asyncio.QueueFull:
                self.drop(listener)

    def listen(self, address: str = "", cut: Callable[[], None] = lambda: None) -> Listener:
        """A new listener from ``address``, whose connection ``cut`` closes at once; raises
        :class:`ListenerRefused` beyond the caps, and once the hub is closed."""
        if self.closed:
            raise ListenerRefused(503, "the server is stopping")
        if self._addresses[address] >= self._per_address:
            raise ListenerRefused(
                429, f"{address} holds {self._per_address} event streams already: close one first"
            )
        if len(self._listeners) >= self._most:
            raise ListenerRefused(503, f"the server holds {self._most} event streams: try again later")
        listener = Listener(address, self._queue, cut)
        self._listeners.add(listener)
        self._addresses[address] += 1
        return listener

    def forget(self, listener: Listener) -> None:
        """The listener's stream has ended."""
        if listener in self._listeners:
            self._listeners.discard(listener)
            self._addresses[listener.address] -= 1
            if not self._addresses[listener.address]:
                del self._addresses[listener.address]

    def drop(self, listener: Listener) -> None:
        """Ends a listener's stream and cuts its connection, without waiting for either."""
        if listener.dropped:
            return
        listener.dropped = True
        self.forget(listener)
        self.dropped += 1
        while not listener.queue.empty():  # make room for the close, which ends its stream
            listener.queue.get_nowait()
        listener.queue.put_nowait(_CLOSE)
        listener.cut()

    def close(self) -> None:
        """Ends every stream (the server is stopping) and refuses new ones."""
        self.closed = True
        if self._due is not None:
            self._due.cancel()
            self._due, self._pending = None, []
        for listener in list(self._listeners):
            self.forget(listener)
            while not listener.queue.empty():
                listener.queue.get_nowait()
            listener.queue.put_nowait(_CLOSE)
