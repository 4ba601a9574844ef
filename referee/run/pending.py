"""The matches of one pass of ``referee run``'s in-process driver that are still to play, and which of
them can start now.

A worker takes the first match, in schedule order, that can start at once: every entrant of it still in
the run, and every remote entrant of it connected with a free session, held by fewer matches of the run
than it has sessions (one, unless it was granted several matches at once) and by none on the same deals
(a table's rotations reach a remote entrant one after another: ``referee.remote.lobby``). A match
waiting for a remote entrant holds no worker: it is passed over, and the other matches go on. A remote
entrant that is away (not connected) is given the league's ``remote: wait`` from the moment a match of
the run first wanted it, once for all its matches (not once per match): after that, each of its matches
counts as a start it missed, and the third in a row disqualifies it for the run, as for a bot that does
not start; its other matches are then left unplayed, waiting for nobody. One whose token was revoked
(or has expired) is disqualified as soon as that has lasted :data:`REISSUE_GRACE`: it cannot connect
again. When only matches that wait are left, a worker sleeps until a match of the run ends, the next
deadline, or at most :data:`LOOK_AGAIN` seconds (a bot that connects); it never spins.

Which match is played first changes nothing of what is stored: the store is keyed by match id, and every
match keeps its own seed and seats.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections.abc import Callable, Iterable
from typing import Final

from referee.league.config import League
from referee.league.schedule import ScheduledMatch
from referee.match.launcher import RemoteSource
from referee.match.outcome import NotStarted
from referee.remote.lobby import Absent
from referee.remote.tokens import TokenBook, TokenError, tokens_path
from referee.run.competition import START_FAILURES, Competition

LOOK_AGAIN: Final = 1.0
"""Seconds at most between two looks for a match that can start, while every match left waits for a
remote entrant (one that connects meanwhile is seen by the next look)."""
REISSUE_GRACE: Final = 5.0
"""Seconds an away remote entrant's token must stay revoked (or expired) before the entrant is
disqualified: a token revoked and issued again meanwhile (a reissue) costs it nothing."""
LOGGER = logging.getLogger(__name__)


class Now(enum.Enum):
    """What a match can do now, as far as its remote entrants go."""

    START = "start"
    WAIT = "wait"
    LOOK_AGAIN = "look again"
    """An entrant of it was disqualified on the way: the match is left unplayed."""


def token_check(league: League) -> Callable[[str], str | None]:
    """Why a remote entrant of ``league`` can no longer connect (its token revoked or expired), or
    ``None``. A token file the referee cannot read says nothing about a bot: ``None`` (and one warning
    in the log)."""
    book = TokenBook(tokens_path(league.database))
    told: set[str] = set()

    def why_not(name: str) -> str | None:
        try:
            grant = book.grants().get(name)
        except TokenError as exc:
            if str(exc) not in told:
                told.add(str(exc))
                LOGGER.warning("%s", exc)
            return None
        again = f"`referee token issue {league.path} {name}` gives it a new one"
        if grant is None:
            return f"its token was revoked, so it cannot connect ({again})"
        if grant.expires is not None and time.time() >= grant.expires:
            return f"its token has expired, so it cannot connect ({again})"
        return None

    return why_not


class Pending:
    """The matches still to play in one pass, in schedule order (a retry goes to the end); see the
    module's doc. ``lobby`` is ``None`` when the league has no remote entrant."""

    def __init__(
        self,
        competition: Competition,
        lobby: RemoteSource | None = None,
        admitted: Callable[[str], str | None] = lambda name: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.competition = competition
        self.lobby = lobby
        self.admitted = admitted
        self.clock = clock
        self.remote = frozenset(competition.league.remote_names) if lobby is not None else frozenset()
        self.wait = competition.league.remote.wait
        self.matches: list[ScheduledMatch] = []
        self.tries: dict[str, int] = {}
        """Failed starts of each match in this run."""
        self.holding: dict[str, ScheduledMatch] = {}
        """The matches taken and not yet done, by id: their remote entrants are held for them."""
        self.away: dict[str, float] = {}
        """When a match of the run first wanted each remote entrant that has not been connected since."""
        self.revoked: dict[str, float] = {}
        """Since when each away remote entrant has been seen without a valid token."""
        self._moved = asyncio.Event()

    def __bool__(self) -> bool:
        return bool(self.matches)

    def put(self, matches: Iterable[ScheduledMatch]) -> None:
        self.matches.extend(matches)
        self._moved.set()

    def done(self, scheduled: ScheduledMatch) -> None:
        """A match taken is over (played, not started, or dropped): its remote entrants are free."""
        self.holding.pop(scheduled.match_id, None)
        self._moved.set()

    def not_started(self, scheduled: ScheduledMatch, failed: NotStarted, last: bool = False) -> None:
        """Counts a match whose bots did not start (on its latest try, or its ``last``): it is tried
        again at the end of the pass, or left unplayed (``Competition.not_started``)."""
        tries = self.tries[scheduled.match_id] = self.tries.get(scheduled.match_id, 0) + 1
        if self.competition.not_started(scheduled, failed, LAST_TRY if last else tries):
            self.put([scheduled])

    def take(self) -> ScheduledMatch | None:
        """The first match that can start now, its remote entrants held for it; ``None`` if none can.
        On the way, a match with a disqualified entrant is left unplayed, and one whose remote entrant
        has been away for the league's wait counts as not started."""
        now = self.clock()
        index = 0
        while index < len(self.matches):
            scheduled = self.matches[index]
            if not self.competition.playable(scheduled):
                del self.matches[index]
                self.competition.unplayed()
                continue
            remote = [name for name in scheduled.entrants if name in self.remote]
            now_ = self._now(remote, now, scheduled.seed)
            if now_ is Now.WAIT:
                index += 1
                continue
            if now_ is Now.LOOK_AGAIN:
                continue
            del self.matches[index]
            if isinstance(now_, NotStarted):
                self.not_started(scheduled, now_)
                continue
            self.holding[scheduled.match_id] = scheduled
            return scheduled
        return None

    def _now(self, remote: list[str], now: float, deals: int | None = None) -> Now | NotStarted:
        """What a match on ``deals`` (its seed) with these ``remote`` entrants can do now; a
        :class:`NotStarted` charged to those away once it has waited the league's wait for them. A
        revoked one is disqualified on the way."""
        if not remote:
            return Now.START
        assert self.lobby is not None
        for name in remote:
            held = [m for m in self.holding.values() if name in m.entrants]
            if any(m.seed == deals for m in held) or len(held) >= max(1, self.lobby.capacity(name)):
                return Now.WAIT  # in other matches of this run (or on these deals): it comes back
        gone = []
        for name in remote:
            if self.lobby.connected(name):
                self.away.pop(name, None)
                continue
            why = self.admitted(name)
            if why is None:
                self.revoked.pop(name, None)
            elif now - self.revoked.setdefault(name, now) >= REISSUE_GRACE:
                LOGGER.warning("remote entrant %s is disqualified for the run: %s", name, why)
                self.competition.disqualify(name, why)
                return Now.LOOK_AGAIN
            since = self.away.setdefault(name, now)
            if now - since >= self.wait:
                gone.append(name)
        if gone:
            return NotStarted(gone[0], str(Absent(gone, (), self.wait)), charged=tuple(gone))
        # Connected but not free: in a match (it comes back), or told by the lobby that its token is
        # no longer good (it is away at the next look).
        return Now.START if self.lobby.ready(remote, deals) else Now.WAIT

    def deadline(self) -> float | None:
        """Seconds until a match's wait for an away remote entrant runs out (or the grace of one whose
        token is gone), if one is waited for."""
        wanted = {name for m in self.matches for name in m.entrants if name in self.away}
        ends = [self.away[name] + self.wait for name in wanted]
        ends += [self.revoked[name] + REISSUE_GRACE for name in wanted if name in self.revoked]
        return max(0.0, min(ends) - self.clock()) if ends else None

    async def next(self) -> ScheduledMatch | None:
        """The next match to play, waiting while every match left waits for a remote entrant (until a
        match of the run ends, the next deadline, or :data:`LOOK_AGAIN`); ``None`` once none is left."""
        while True:
            scheduled = self.take()
            if scheduled is not None or not self.matches:
                return scheduled
            self._moved.clear()
            due = self.deadline()
            wait = LOOK_AGAIN if due is None else min(due, LOOK_AGAIN)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._moved.wait(), wait)


LAST_TRY: Final = START_FAILURES * 1000
"""A try count past every limit: a match whose retry after a void did not start is not tried again in
this run (its void attempts are stored; the next run plays it)."""
