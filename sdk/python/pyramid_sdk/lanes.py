"""A remote bot's several matches at once: one stream per match, each on a thread of its own.

A remote entrant may ask in its hello for up to K matches at once (``run(bot, max_matches=K)``, or
``PYRAMID_MAX_MATCHES``); the referee's welcome says how many it granted, N (docs/PROTOCOL.md, "Several
matches at once"). Each match is played on a stream of its own, and each stream plays one match at a time
exactly as a single stream does: so once the first stream is welcomed, :class:`Lanes` starts N - 1 more,
each a :class:`Lane`: a thread that connects with the same token on a gRPC channel of its own (a
connection of its own, with grpcio 1.85; the door allows an entrant a connection per granted match) and
reconnects on its own, playing with
its own copy of the bot (``copy.deepcopy``, made before its first match), so that what a bot keeps on
``self`` for a match never mixes with another match's. A bot that holds something too big to copy (a
model) shares it by defining ``__deepcopy__``.

Each lane answers the referee's ``Ping`` on its own thread, between its own decisions, so a lane that
waits for its next match answers while another lane's bot thinks. The threads share Python's interpreter
lock: a bot whose code is pure Python thinks on one core at a time however many lanes it has (numpy, a
GPU or a native library releases the lock, and a pool of processes that a decision hands its search to,
``concurrent.futures.ProcessPoolExecutor``, thinks on as many cores as it has). Run one process per
token: a second process of the same entrant opens streams of its own, which take the first one's idle
streams' places (docs/PROTOCOL.md, "Several matches at once").

Only a remote bot loads this module.
"""

from __future__ import annotations

import copy
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyramid_sdk.bot import Bot
    from pyramid_sdk.client import _Connection

MAX_ASKED: Final = 1024
"""The most matches at once a bot may ask for (the referee grants at most its league's cap anyway)."""
END_WAIT: Final = 5.0
"""Seconds the first stream waits, once it ended, for the other lanes to end by themselves (the referee
ends each stream with the league) before it closes them."""


def matches_asked(given: int | None, text: str | None) -> int:
    """How many matches at once to ask for: ``given``, else ``text`` (``PYRAMID_MAX_MATCHES``), else 1;
    ``ValueError`` saying what to set for anything but a whole number from 1 to :data:`MAX_ASKED`.

    >>> matches_asked(None, None), matches_asked(3, None), matches_asked(None, " 8 ")
    (1, 3, 8)
    >>> matches_asked(None, "lots")
    Traceback (most recent call last):
    ...
    ValueError: PYRAMID_MAX_MATCHES='lots' is not a whole number of matches from 1 to 1024
    """
    if given is None and not (text or "").strip():
        return 1
    shown = f"max_matches={given!r}" if given is not None else f"PYRAMID_MAX_MATCHES={(text or '').strip()!r}"
    try:
        asked = int(given if given is not None else (text or "").strip())
    except (TypeError, ValueError):
        asked = 0
    if isinstance(given, bool) or not 1 <= asked <= MAX_ASKED:
        raise ValueError(f"{shown} is not a whole number of matches from 1 to {MAX_ASKED}")
    return asked


@dataclass(eq=False)
class Lane:
    """One more stream of the entrant: its bot (a copy), the name its lines carry, the event that stops
    it, and its connection while it has one (closed to stop it at once)."""

    bot: Bot
    label: str
    stop: threading.Event
    connection: _Connection | None = None
    thread: threading.Thread | None = field(default=None, repr=False)


class Lanes:
    """The lanes beyond the first stream: :meth:`grow` is called with every welcome's grant, and starts
    lanes until there are that many streams; :meth:`end` stops them once the first stream's loop is over
    (the league is over, Ctrl-C, a final refusal)."""

    def __init__(self, bot: Bot, serve: Callable[[Lane], None]) -> None:
        self.bot = bot
        self.serve = serve
        self.lanes: list[Lane] = []
        self.stop = threading.Event()
        self._lock = threading.Lock()

    def grow(self, granted: int) -> None:
        with self._lock:
            while len(self.lanes) < granted - 1 and not self.stop.is_set():
                lane = Lane(copy.deepcopy(self.bot), f"{self.bot.name} [{len(self.lanes) + 2}]", self.stop)
                lane.thread = threading.Thread(target=self._run, args=(lane,), name=lane.label, daemon=True)
                self.lanes.append(lane)
                lane.thread.start()

    def _run(self, lane: Lane) -> None:
        """A lane's thread: its stream's loop, and one line if that ends in a refusal (which the first
        stream meets too, and stops the bot for)."""
        try:
            self.serve(lane)
        except Exception as exc:
            print(f"{lane.label}: {exc}", file=sys.stderr)

    def end(self) -> None:
        """Waits a moment for the lanes to end as the referee ends their streams, then stops the rest:
        their streams are closed, which ends them as an interrupted referee would."""
        with self._lock:
            lanes = list(self.lanes)
        for lane in lanes:
            if lane.thread is not None:
                lane.thread.join(END_WAIT / max(1, len(lanes)))
        self.stop.set()
        for lane in lanes:
            stream = lane.connection.stream if lane.connection is not None else None
            if stream is not None and lane.thread is not None and lane.thread.is_alive():
                stream.close()
        for lane in lanes:
            if lane.thread is not None:
                lane.thread.join(1.0)
