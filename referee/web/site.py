"""The report's folder that ``referee serve`` serves, rewritten whenever the results change.

The rewrite (:func:`referee.web.reads.rewrite`) runs in a reader process (:mod:`referee.web.readers`),
never in the one that plays, and the play does not wait for it: the matches stored while the report is
being rewritten are in the next rewrite, which starts once this one has ended and :data:`PAGES_EVERY`
has passed since it began (one at a time, from the latest results each time). Each finished rewrite is
told to the pages as a ``pages`` event, on which they fetch themselves again.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Final

from referee.league.config import League
from referee.web.events import Hub
from referee.web.readers import Busy, Readers, ReadFailed

LOGGER = logging.getLogger(__name__)
PAGES_EVERY: Final = 1.0
"""Seconds from the start of one rewrite of the pages to the start of the next, at least."""


class LiveSite:
    """The report's folder, rewritten by ``readers`` whenever :meth:`stale` says the results changed.
    ``state`` counts the finished rewrites: a page read is kept while it is the latest."""

    def __init__(self, folder: Path, readers: Readers, hub: Hub, every: float = PAGES_EVERY) -> None:
        self.folder = folder
        self.every = every
        self.readers = readers
        self.hub = hub
        self.state = 0
        self._wanted: tuple[League, int] | None = None
        self._writing: asyncio.Task[None] | None = None

    def stale(self, league: League, seed: int) -> None:
        """The results of ``league`` under ``seed`` changed: a rewrite now, or after the one under way."""
        self._wanted = (league, seed)
        if self._writing is None or self._writing.done():
            self._writing = asyncio.create_task(self._rewrite())

    async def _rewrite(self) -> None:
        loop = asyncio.get_running_loop()
        while self._wanted is not None:
            (league, seed), self._wanted = self._wanted, None
            begun = loop.time()
            try:
                await self.readers.call("rewrite", league, seed, self.folder, queue=False)
            except Busy:  # the readers are closed: the server is stopping
                return
            except ReadFailed as exc:
                LOGGER.warning("the live pages in %s were not rewritten: %s", self.folder, exc)
                continue
            self.state += 1
            self.hub.publish("pages", rewrites=self.state)
            # The changes meanwhile wait, and go into one rewrite: in a league that stores a match every
            # few milliseconds, the pages would otherwise take a reader's whole core.
            await asyncio.sleep(max(0.0, self.every - (loop.time() - begun)))

    async def close(self) -> None:
        if self._writing is not None:
            self._writing.cancel()
            await asyncio.gather(self._writing, return_exceptions=True)
