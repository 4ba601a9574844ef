"""The door's refusals on the referee's log, so that an organiser sees a flood without it filling the disk.

The first refusal of an address for a reason is one line at once; later ones of the same address and
reason are counted, and said in one line per :data:`WINDOW` seconds while they go on (``refused 1492
more connections from 10.0.0.9 in 60s: …``). At most :data:`MAX_ADDRESSES` addresses are followed one
by one; past that, the rest are counted together as "other addresses", so a flood from many addresses
costs a bounded number of lines and of memory too.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Final

WINDOW: Final = 60.0
"""Seconds between two lines about the refusals of one address for one reason."""
MAX_ADDRESSES: Final = 1024
OTHERS: Final = "other addresses"


@dataclass(slots=True)
class _Window:
    count: int = 0
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)


class RefusalLog:
    """Rate-limited lines about refused connections, on ``logger`` at WARNING."""

    def __init__(self, logger: logging.Logger, window: float = WINDOW) -> None:
        self.logger = logger
        self.window = window
        self._open: dict[tuple[str, str], _Window] = {}

    def refused(self, host: str, reason: str) -> None:
        """One refusal of a connection from ``host``, for ``reason`` (a few words, the same each time)."""
        key = (host, reason)
        if key not in self._open and len(self._open) >= MAX_ADDRESSES:
            key = (OTHERS, reason)
        window = self._open.get(key)
        if window is not None:
            window.count += 1
            return
        self.logger.warning("remote door: refused a connection from %s: %s", key[0], reason)
        self._open[key] = self._arm(key, _Window())

    def _arm(self, key: tuple[str, str], window: _Window) -> _Window:
        loop = asyncio.get_running_loop()
        window.timer = loop.call_later(self.window, self._said, key)
        return window

    def _said(self, key: tuple[str, str]) -> None:
        window = self._open.pop(key)
        if not window.count:
            return
        host, reason = key
        self.logger.warning(
            "remote door: refused %d more connections from %s in %gs: %s",
            window.count,
            host,
            self.window,
            reason,
        )
        self._open[key] = self._arm(key, _Window())  # the flood goes on: one line a window

    def close(self) -> None:
        """Says what is still counted, now (the door closes)."""
        for key, window in list(self._open.items()):
            if window.timer is not None:
                window.timer.cancel()
            if window.count:
                self.logger.warning(
                    "remote door: refused %d more connections from %s: %s", window.count, *key
                )
        self._open.clear()
