"""Matches in play, as every seat at the table sees them: never a hand.

A league match is watched through its seats: each seat is wrapped in a :class:`WatchedSeat`, which passes
every call through unchanged and, from the observation the referee sends that seat, keeps only what the
whole table sees (:func:`public_view`): declarations and trump, the cards played and the tricks, the
tricks taken, how many cards each seat still holds (a count every seat can make: all start with six),
the pyramids, and the talk when every seat hears it (``talk: open``; with ``defenders`` the declarer does
not). The hand and the legal actions are left out, so the view holds no card that is not on the table.
The :class:`LiveMatch` adds each seat's clock as the referee last gave it to that seat (the time left in
its bank), which tells nothing of a card.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pyramid_sdk.bot import MatchInfo, MatchResult
from pyramid_sdk.observation import Observation, Trick
from pyramid_sdk.rules import Talk
from referee.match.faults import Fault
from referee.match.playing import Answer, Seat

TURN: Final = 0.005
"""Seconds a match of in-process bots plays before it lets the server's event loop answer requests."""


def _trick(trick: Trick) -> dict[str, Any]:
    return {"leader": trick.leader, "cards": [card.code for card in trick.cards], "winner": trick.winner}


def public_view(obs: Observation) -> dict[str, Any]:
    """What every seat of the table knows now (docs/SERVER.md, "A match in play").

    >>> from pyramid_sdk import Match, Rules
    >>> view = public_view(Match(Rules(players=2), 7).observation(0))
    >>> sorted(view)  # no hand, no legal actions
    ['cards_left', 'current_trick', 'deal', 'dealer', 'declaration', 'declarer', 'forfeited', 'phase', \
'pyramids', 'taken', 'talk', 'to_act', 'tricks']
    >>> view["cards_left"]  # how many, never which
    [6, 6]
    """
    shared_talk = obs.rules.talk is Talk.OPEN
    return {
        "deal": obs.deal_number,
        "phase": str(obs.phase),
        "dealer": obs.dealer,
        "declarer": obs.declarer,
        "to_act": obs.to_act,
        "declaration": None
        if obs.declaration is None
        else {"tricks": obs.declaration.tricks, "trump": obs.declaration.trump.code},
        "current_trick": _trick(obs.current_trick),
        "tricks": [_trick(trick) for trick in obs.tricks],
        "taken": list(obs.taken),
        "cards_left": [obs.hand_size(seat) for seat in range(obs.players)],
        "pyramids": [
            {"total": p.total, "entries": [[e.declared, e.taken, e.points] for e in p.entries]}
            for p in obs.pyramids
        ],
        "talk": [[m.seat, m.trick, m.text] for m in obs.talk] if shared_talk else [],
        "forfeited": list(obs.forfeited),
    }


TELL_EVERY: Final = 0.05
"""Seconds between two tellings of a match's changes to its listeners, at least (its latest state is
told once they have passed): a match of fast bots changes every few microseconds, and telling each
change would cost a view and an event for every listener per decision, faster than anyone can watch."""


def _seconds(value: float | None) -> float | None:
    """A clock reading fit for JSON: tenths of a second, or ``None`` for none (or no limit)."""
    return round(value, 1) if value is not None and math.isfinite(value) else None


def _always() -> bool:
    return True


@dataclass(slots=True)
class LiveMatch:
    """A match in play: who sits where and the last observation of it, whose public view is built only
    when it is asked for (a page, the API) or someone listens (``watching``): a match nobody watches
    costs no view. ``shown`` is whether its deals may be shown now (``referee.results.disclosure``: not
    while another match of its table is to come)."""

    match_id: str
    seats: tuple[str, ...]
    shown: bool
    position: int | None = None
    """Its place in the league's schedule, from 1 (none for a human table)."""
    remote: tuple[str, ...] = ()
    """The seats' entrants that play from their authors' machines (not sandboxed), as the pages mark them."""
    on_worker: bool = False
    """Played on a worker of a Dask cluster (``referee serve --workers``): its seats are there, and its
    view is the one the worker relays (:meth:`relay`), not built here."""
    steps: int = 0
    """Observations of the match seen so far."""
    turned: float = 0.0
    """When its seats last let the event loop run (:data:`TURN`)."""
    listeners: list[Callable[[LiveMatch], None]] = field(default_factory=list)
    """Told after each change of :meth:`state`, while ``watching()``."""
    watching: Callable[[], bool] = _always
    banks: dict[int, float] = field(default_factory=dict)
    """Each seat's time bank, in seconds, as the referee gave it with that seat's last request."""
    per_action: float | None = None
    """The seconds a decision may take before it draws on the bank, as the last request gave it."""
    _obs: Observation | None = None
    _deal: int = 0
    _view: dict[str, Any] | None = None
    _told: dict[str, Any] | None = None
    _told_at: float = -math.inf
    _due: asyncio.TimerHandle | None = None

    @property
    def view(self) -> dict[str, Any] | None:
        """What every seat sees now (:func:`public_view`), or ``None`` before the first decision."""
        if self._view is None and self._obs is not None:
            self._view = public_view(self._obs)
            self._view["clocks"] = {
                "banks": [_seconds(self.banks.get(seat)) for seat in range(len(self.seats))],
                "per_action": _seconds(self.per_action),
            }
        return self._view

    def summary(self) -> dict[str, Any]:
        """What a list of matches in play says of it: no card, whatever ``shown`` is."""
        return {
            "match_id": self.match_id,
            "position": self.position,
            "seats": list(self.seats),
            "deal": self._obs.deal_number if self._obs is not None else self._deal,
            "deals_hidden": not self.shown,
            "remote": [name for name in self.seats if name in self.remote],
            "on_worker": self.on_worker,
        }

    def state(self) -> dict[str, Any]:
        """What its live page shows: with its deals hidden, the summary alone."""
        state = self.summary()
        if self.shown and self.view is not None:
            state["view"] = self.view
        return state

    def update(self, obs: Observation) -> None:
        self._obs, self._view = obs, None
        self.steps += 1
        if self._due is None and self.listeners:  # else nobody to tell, or a telling is due already
            self._changed()

    def relay(self, deal: int, view: dict[str, Any] | None) -> None:
        """The match as the worker that plays it saw it last (a :func:`public_view`, or ``None`` while
        its deals are hidden, when the worker sends the deal number alone)."""
        self._obs, self._deal, self._view = None, deal, view
        self.steps += 1
        if self._due is None and self.listeners:
            self._changed()

    def _changed(self) -> None:
        """A change with no telling due: told now if someone watches and :data:`TELL_EVERY` has passed
        since the last telling, else a telling is due then (or, while nobody watches, a look again in
        :data:`TELL_EVERY`). Either way the changes until then cost a counter each: a match of
        in-process bots changes every few microseconds, and asking ``watching`` every time was a
        tenth of a served league's time a match beside ``referee run``'s."""
        wait = self._told_at + TELL_EVERY - time.monotonic()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop to tell it later: told now
            self._tell()
            return
        if wait <= 0 and self.watching():
            self._tell()
        else:
            self._due = loop.call_later(wait if wait > 0 else TELL_EVERY, self._tell)

    def _tell(self) -> None:
        self._due = None
        if not self.listeners or not self.watching():
            return
        self._told_at = time.monotonic()
        state = self.state()
        if state == self._told:  # e.g. each seat's look at the end of a deal
            return
        self._told = state
        for listener in self.listeners:
            listener(self)

    def close(self) -> None:
        """The match is over: a telling still due is made now, before its end is told."""
        if self._due is not None:
            self._due.cancel()
            self._tell()


class WatchedSeat:
    """A seat whose observations feed a :class:`LiveMatch`; every call goes through unchanged."""

    def __init__(self, seat: Seat, live: LiveMatch) -> None:
        self.seat = seat
        self.live = live
        # The seat's own methods, not a call through: the referee asks for violations five times a turn.
        self.violations: Callable[[], list[str]] = seat.violations
        self.notify: Callable[[str], None] = seat.notify

    @property
    def name(self) -> str:
        return self.seat.name

    @name.setter
    def name(self, value: str) -> None:
        self.seat.name = value

    async def start(self, info: MatchInfo) -> str | None:
        return await self.seat.start(info)

    async def decide(self, obs: Observation, time_limit: float, bank: float) -> Answer:
        live = self.live
        live.banks[obs.seat] = bank  # the per-action time and the bank make up ``time_limit``
        live.per_action = time_limit - bank
        live.update(obs)
        # A bot of the referee's own process (``module:``) decides without ever letting the event loop
        # run: without a turn now and then, a whole match would play before the server answered.
        now = time.monotonic()
        if now - live.turned > TURN:
            live.turned = now
            await asyncio.sleep(0)
        return await self.seat.decide(obs, time_limit, bank)

    async def deal_end(self, obs: Observation) -> None:
        self.live.update(obs)
        await self.seat.deal_end(obs)

    async def end(self, result: MatchResult, forfeited: bool, faults: Sequence[Fault]) -> None:
        await self.seat.end(result, forfeited, faults)


def watched(seats: Sequence[Seat], live: LiveMatch) -> list[Seat]:
    return [WatchedSeat(seat, live) for seat in seats]
