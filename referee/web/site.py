"""When the live pages change: the report's pages are rendered on request by a reader process
(:func:`referee.web.reads.page`, :class:`referee.report.on_request.OnRequest`), never written after
each match, and a page read is kept until :attr:`LiveSite.state` moves on. It moves on, and the pages
are told so by a ``pages`` event (on which they fetch themselves again), once the results have changed
and at most once every :data:`PAGES_EVERY`: in a league that stores a match every few milliseconds the
pages would otherwise be rendered again for every match, for every reader of them.
"""

from __future__ import annotations

import asyncio
from typing import Final

from referee.league.config import League
from referee.web.events import Hub

PAGES_EVERY: Final = 1.0
"""Seconds between two changes of the pages, at least."""


class LiveSite:
    """The state of the report's pages: :attr:`state` counts their changes, told to ``hub``."""

    def __init__(self, hub: Hub, every: float = PAGES_EVERY) -> None:
        self.hub = hub
        self.every = every
        self.state = 0
        self._later: asyncio.TimerHandle | None = None
        self._last = -every

    def stale(self, league: League, seed: int) -> None:
        """The results changed: the pages change now, or once :data:`PAGES_EVERY` has passed since they
        last did (the changes meanwhile go into that one)."""
        if self._later is not None:
            return
        loop = asyncio.get_running_loop()
        self._later = loop.call_at(max(loop.time(), self._last + self.every), self._change)

    def _change(self) -> None:
        self._later = None
        self._last = asyncio.get_running_loop().time()
        self.state += 1
        self.hub.publish("pages", rewrites=self.state)

    async def close(self) -> None:
        if self._later is not None:
            self._later.cancel()
            self._later = None
