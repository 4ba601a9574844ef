"""The remote entrants that are connected, and which of them are free to play.

Each remote entrant has at most one connection, which plays one match at a time. A match claims all of
its remote entrants at once (:meth:`Lobby.claim`), only when every one of them is connected and free: a
match never holds one entrant while it waits for another, so two matches that share two remote entrants
cannot wait on each other. A claim that is not satisfied within the league's wait fails like a bot that
would not start, and says who was missing; the other matches go on meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import grpc

from referee.match.bots import BotSpec
from referee.match.launcher import STOP_GRACE, BotProcess, Unclaimed
from referee.match.sessions import INTERRUPTED, Session
from referee.remote.record import Latency

LEAGUE_OVER = "the league is over: the referee needs this bot no more"


class Absent(Unclaimed):
    """Remote entrants that were not connected and free in time, like bots that would not start; the
    message names them. ``names``: those not connected (a start failure of theirs); ``busy``: those
    connected but still playing another match (no fault of theirs)."""

    def __init__(self, names: Sequence[str], busy: Sequence[str], wait: float) -> None:
        self.names, self.busy = tuple(names), tuple(busy)
        listed = ", ".join(repr(name) for name in names)
        problem = (
            f"remote entrant {listed} was not connected within {wait:g}s (docs/REMOTE.md: its author "
            "starts the bot with its token)"
            if names
            else f"remote entrant {', '.join(map(repr, busy))} was still playing after {wait:g}s"
        )
        super().__init__(problem)


class Lobby:
    """Connected remote bots between matches. :attr:`valid` says whether a session's token is still good
    (a reissued or revoked one is not): checked whenever a session is handed out."""

    def __init__(self, wait: float) -> None:
        self.wait = wait
        self.valid: Callable[[str, Session], bool] = lambda name, session: True
        self._connected: dict[str, Session] = {}
        self._busy: set[str] = set()
        self._changed = asyncio.Condition()
        self.latency: dict[str, Latency] = {}
        self.closed = False

    def playing(self, name: str) -> bool:
        """Whether ``name`` is connected and in a match now (a second connection is then refused)."""
        session = self._connected.get(name)
        return session is not None and not session.is_closed and name in self._busy

    async def join(self, name: str, session: Session) -> None:
        """A newly connected session takes ``name``'s place; an older idle one of ``name`` is closed."""
        if self.closed:  # it came in the moment the league ended
            session.close(LEAGUE_OVER)
            return
        old = self._connected.get(name)
        if old is not None and old is not session:
            old.close("a newer connection of this entrant took its place")
        self._connected[name] = session
        self._busy.discard(name)
        async with self._changed:
            self._changed.notify_all()

    async def leave(self, name: str, session: Session) -> None:
        if self._connected.get(name) is session:
            del self._connected[name]
            self._busy.discard(name)
        async with self._changed:
            self._changed.notify_all()

    def connected(self, name: str) -> bool:
        """Whether ``name``'s bot is connected now (free or in a match)."""
        session = self._connected.get(name)
        return session is not None and not session.is_closed

    def _free(self, name: str) -> bool:
        session = self._connected.get(name)
        if session is None or session.is_closed or name in self._busy:
            return False
        if not self.valid(name, session):
            why = "its token was revoked or reissued, or it is no longer an entrant of the league"
            session.close(why, grpc.StatusCode.UNAUTHENTICATED)
            return False
        return True

    def dismiss(self) -> None:
        """Ends every idle connection whose entrant may no longer play (its token revoked or reissued,
        or gone from the league file): ``referee serve`` calls it whenever either file changes, so that
        such a bot is told at once, not when a match next looks for it. One in a match is told when the
        match hands it back (:meth:`release`)."""
        for name in list(self._connected):
            if name not in self._busy:
                self._free(name)

    def ready(self, names: Sequence[str]) -> bool:
        """Whether every one of ``names`` is connected and free now: a claim of them would not wait.
        ``referee serve`` plays a match with remote entrants only then, so that an entrant whose bot is
        not connected at the moment neither holds a table nor fails its starts (docs/SERVER.md)."""
        return all(self._free(name) for name in names)

    async def claim(self, names: Sequence[str], wait: float | None = None) -> list[Session]:
        """The sessions of ``names``, all taken at once when all are free; :class:`Absent` after
        ``wait`` seconds (the league's, by default) naming those that were not."""
        wait = self.wait if wait is None else wait
        try:
            async with asyncio.timeout(wait), self._changed:
                await self._changed.wait_for(lambda: all(self._free(name) for name in names))
        except TimeoutError:
            absent = [name for name in names if not self.connected(name)]
            busy = [name for name in names if name not in absent and not self._free(name)]
            raise Absent(absent, busy, wait) from None
        self._busy.update(names)
        for name in names:
            self._connected[name].start_match()
        return [self._connected[name] for name in names]

    async def claim_bots(self, specs: Sequence[BotSpec]) -> list[BotProcess]:
        """:meth:`claim` for a launcher: each session as a :class:`RemoteBot`, whose stop hands it
        back; a missing entrant is :class:`Absent`, a :class:`BotSpecError` as for a bot that would not
        start."""
        sessions = await self.claim([spec.name for spec in specs])
        return [RemoteBot(spec, session, self) for spec, session in zip(specs, sessions, strict=True)]

    async def release(self, name: str, session: Session) -> None:
        """A match is done with ``name``'s session: it waits in the lobby for the next one."""
        self.record(name, session)
        if self._connected.get(name) is session:
            self._busy.discard(name)
            self._free(name)  # its token revoked, or its entrant gone, meanwhile: told now
        async with self._changed:
            self._changed.notify_all()

    def record(self, name: str, session: Session) -> None:
        latency = self.latency.setdefault(name, Latency())
        latency.allowance = session.lag_allowance
        if session.latencies:
            latency.decisions.extend(session.latencies)
            session.latencies.clear()

    def close(self, interrupted: bool = False) -> None:
        """The league is over: every connection ends with OK, and the SDKs stop; or the referee was
        ``interrupted``: CANCELLED, and the SDKs wait for it to come back."""
        self.closed = True
        for session in list(self._connected.values()):
            if interrupted:
                session.close(INTERRUPTED, grpc.StatusCode.CANCELLED)
            else:
                session.close(LEAGUE_OVER)


class RemoteBot(BotProcess):
    """A remote entrant's connection, claimed for one match. There is no process to stop: stopping it
    hands the connection back to the lobby for the entrant's next match (or ends it with CANCELLED when
    the referee is interrupted)."""

    def __init__(self, spec: BotSpec, session: Session, lobby: Lobby) -> None:
        super().__init__(spec)
        self.session = session
        self._lobby = lobby

    async def stop(self, grace: float = STOP_GRACE, interrupted: bool = False) -> None:
        session, self.session = self.session, None
        if session is None:
            return
        if interrupted:
            session.close(INTERRUPTED, grpc.StatusCode.CANCELLED)
        await self._lobby.release(self.spec.name, session)
