"""The live feed: what the league runner and the human tables tell every open page.

Each listener (a browser's event stream) has a bounded queue of its own. Publishing never waits: a
listener whose queue is full is a slow or gone browser, and it is dropped (its stream ends, and the page's
script reconnects and reloads what it shows), so no browser can ever stall a match.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Final

QUEUE: Final = 64
"""Events a listener may fall behind by before it is dropped."""
KEEPALIVE: Final = 15.0
"""Seconds between comments on an idle stream, so that proxies and browsers keep it open."""


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened: ``kind`` names it (docs/SERVER.md, "Events"), ``data`` is its JSON body."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)

    def sse(self) -> str:
        """The event in the server-sent events format; the JSON holds no raw newline, so one data line."""
        return f"event: {self.kind}\ndata: {json.dumps(self.data, ensure_ascii=False)}\n\n"


_CLOSE: Final = Event("close")


class Hub:
    """Fans events out to listeners without ever blocking the publisher."""

    def __init__(self, queue: int = QUEUE) -> None:
        self._queue = queue
        self._listeners: set[asyncio.Queue[Event]] = set()
        self.dropped = 0
        """Listeners dropped because they fell :data:`QUEUE` events behind."""
        self.closed = False

    @property
    def listeners(self) -> int:
        return len(self._listeners)

    def publish(self, kind: str, **data: Any) -> None:
        event = Event(kind, data)
        for queue in list(self._listeners):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:
                self._drop(queue)

    def _drop(self, queue: asyncio.Queue[Event]) -> None:
        self._listeners.discard(queue)
        self.dropped += 1
        while not queue.empty():  # make room for the close, which ends its stream
            queue.get_nowait()
        queue.put_nowait(_CLOSE)

    def close(self) -> None:
        """Ends every stream (the server is stopping) and refuses new ones."""
        self.closed = True
        for queue in list(self._listeners):
            self._drop(queue)

    async def stream(self, keepalive: float = KEEPALIVE) -> AsyncIterator[str]:
        """One listener's events as server-sent event text, until it is dropped or the hub closes."""
        if self.closed:
            return
        queue: asyncio.Queue[Event] = asyncio.Queue(self._queue + 1)
        self._listeners.add(queue)
        try:
            yield "retry: 2000\n\n"
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), keepalive)
                except TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                if event is _CLOSE:
                    return
                yield event.sse()
        finally:
            self._listeners.discard(queue)
