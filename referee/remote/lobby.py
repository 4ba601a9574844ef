"""The remote entrants that are connected, and which of them are free to play.

Each remote entrant has as many sessions (streams) as the door granted it, one by default, at most the
league's ``remote: max_matches``; each session plays one match at a time, so an entrant granted N plays
up to N matches at once. A match claims a free session of each of its remote entrants at once
(:meth:`Lobby.claim`), only when every one of them has one: a match never holds one entrant while it
waits for another, so two matches that share two remote entrants cannot wait on each other. A claim
that is not satisfied within the league's wait fails like a bot that would not start, and says who was
missing; the other matches go on meanwhile.

**One entrant never plays two matches of the same deals at once** (a table's rotations, which share its
seed): a bot that plays them side by side could see every hand of the deal from the other seats while it
plays. A claim gives the match's ``deals`` (its seed), and a session of an entrant is free for it only
while no other session of that entrant plays those deals: a table's rotations reach an entrant one after
another (docs/SECURITY.md, "Remote entrants").

A connection counts as alive only while its bot's own code answers: gRPC's threads answer the
transport's pings while the bot's code is stalled, and a stopped machine's kernel still holds its TCP
connection. So the lobby sends the protocol's ``Ping`` before it hands a connection to a match, and to
an idle connection every :data:`IDLE_PING_EVERY` seconds, and at once to one whose match ended with a
request unanswered; a bot that does not ``Pong`` within the lobby's ping timeout (:data:`PING_TIMEOUT`
at most, the league's per-action limit if shorter, with the connection's lag allowance) is cut with
``UNAVAILABLE`` saying so: it is away, not connected, and is seated again once it connects and answers.
A claim that meets such a bot fails at once, without waiting out the league's wait on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Final, Protocol

import grpc

from referee.match.bots import BotSpec
from referee.match.launcher import STOP_GRACE, BotProcess, Unclaimed
from referee.match.sessions import INTERRUPTED, Session
from referee.remote.record import Latency

LEAGUE_OVER = "the league is over: the referee needs this bot no more"
PING_TIMEOUT: Final = 5.0
"""Seconds a connected bot has to answer the referee's ``Ping``, at most (a league whose per-action limit
is shorter gives that: :meth:`Lobby.for_time`), its lag allowance added."""
IDLE_PING_EVERY: Final = 10.0
"""Seconds between two ``Ping`` s of a connection that waits for its next match."""
FIRST_NONCE: Final = 1000
"""The lobby's pings count from here (the door's first pings, before the lobby, count from 1)."""


def ping_timeout(per_action: float) -> float:
    """Seconds a bot has to answer a ping in a league whose per-action limit is ``per_action``: that
    limit, or :data:`PING_TIMEOUT` if it is shorter (a bot that cannot answer a ping in a decision's time
    would not answer its first request in time either).

    >>> ping_timeout(1.0), ping_timeout(30.0)
    (1.0, 5.0)
    """
    return min(PING_TIMEOUT, per_action)


def silence(timeout: float) -> str:
    """The reason a connection whose bot did not answer is cut with (``UNAVAILABLE``).

    >>> silence(1.25)
    "no answer to the referee's ping within 1.25s: connection cut"
    >>> silence(0.3012)  # the lag allowance is added to the timeout: shown to the hundredth
    "no answer to the referee's ping within 0.3s: connection cut"
    """
    return f"no answer to the referee's ping within {round(timeout, 2):g}s: connection cut"


class Absent(Unclaimed):
    """Remote entrants that were not connected and free in time, like bots that would not start; the
    message names them. ``names``: those not connected (a start failure of theirs); ``busy``: those
    connected but still playing another match (no fault of theirs)."""

    def __init__(
        self, names: Sequence[str], busy: Sequence[str], wait: float, silent: float | None = None
    ) -> None:
        self.names, self.busy = tuple(names), tuple(busy)
        self.silent = silent
        """The ping timeout ``names`` did not answer within (their connections were cut), or ``None``:
        they were not connected."""
        listed = ", ".join(repr(name) for name in names)
        if silent is not None:
            problem = (
                f"remote entrant {listed} did not answer the referee's ping within {silent:g}s: its "
                "connection was cut (a bot stalled or asleep plays again once it connects and answers)"
            )
        elif names:
            problem = (
                f"remote entrant {listed} was not connected within {wait:g}s (docs/REMOTE.md: its "
                "author starts the bot with its token)"
            )
        else:
            problem = f"remote entrant {', '.join(map(repr, busy))} was still playing after {wait:g}s"
        super().__init__(problem)


class Seats(Protocol):
    """What :func:`seatable` asks of a lobby (``referee.match.launcher.RemoteSource`` has it too)."""

    def ready(self, names: Sequence[str], deals: int | None = None) -> bool: ...

    def capacity(self, name: str) -> int: ...


def seatable(
    lobby: Seats, names: Sequence[str], deals: int | None, held: Iterable[tuple[Collection[str], int]]
) -> bool:
    """Whether a match of remote entrants ``names`` on ``deals`` (its seed) can be seated now, while the
    matches ``held`` (each its entrants and seed: taken by a driver, not yet done) are in play or about
    to claim their seats: each entrant has a session more than it is held by, none of its held matches
    plays these deals, and the lobby has a free session of each (:meth:`Lobby.ready`).

    >>> class Two:
    ...     def ready(self, names, deals=None): return True
    ...     def capacity(self, name): return 2
    >>> seatable(Two(), ["a"], 7, [({"a", "b"}, 7)]), seatable(Two(), ["a"], 8, [({"a", "b"}, 7)])
    (False, True)
    >>> seatable(Two(), ["a"], 9, [({"a"}, 7), ({"a"}, 8)])
    False
    """
    taken: dict[str, list[int]] = {name: [] for name in names}
    for entrants, seed in held:
        for name in entrants:
            if name in taken:
                taken[name].append(seed)
    for name, seeds in taken.items():
        if deals in seeds or len(seeds) >= lobby.capacity(name):
            return False
    return lobby.ready(names, deals)


class Lobby:
    """Connected remote bots between matches. :attr:`valid` says whether a session's token is still good
    (a reissued or revoked one is not): checked whenever a session is handed out. ``ping_timeout`` and
    ``idle_ping_every``: see the module's docstring. :attr:`latency` is what the runs saw of each
    entrant's connections; :attr:`on_change` is called whenever it grew (the record is written then)."""

    def __init__(
        self, wait: float, ping_timeout: float = PING_TIMEOUT, idle_ping_every: float = IDLE_PING_EVERY
    ) -> None:
        self.wait = wait
        self.ping_timeout = ping_timeout
        self.idle_ping_every = idle_ping_every
        self.valid: Callable[[str, Session], bool] = lambda name, session: True
        self._connected: dict[str, list[Session]] = {}
        """Each entrant's sessions, oldest first."""
        self._grants: dict[str, int] = {}
        """How many sessions each entrant was granted by its latest hello."""
        self._busy: dict[Session, int | None] = {}
        """The sessions held by a claim or a match, each with the deals (the seed) it plays."""
        self._changed = asyncio.Condition()
        self.latency: dict[str, Latency] = {}
        self.on_change: Callable[[], None] = lambda: None
        self.on_presence: Callable[[str, bool], None] = lambda name, connected: None
        """Called when an entrant's bot connects (no session of it was open) or goes (its last session
        left): what the served pages mark as connected or away."""
        self.closed = False
        self._nonces: Iterator[int] = itertools.count(FIRST_NONCE)
        self._proofs: dict[Session, asyncio.Task[bool]] = {}
        """The ping in flight on each session: a claim and the idle watch share it."""
        self._watches: set[asyncio.Task[object]] = set()
        """The idle watches and the pings after a match, kept until they are done."""

    @classmethod
    def for_time(cls, wait: float, per_action: float) -> Lobby:
        """A lobby for a league whose per-action limit is ``per_action`` (:func:`ping_timeout`)."""
        return cls(wait, ping_timeout=ping_timeout(per_action))

    def _live(self, name: str) -> list[Session]:
        return [session for session in self._connected.get(name, ()) if not session.is_closed]

    def playing(self, name: str) -> bool:
        """Whether ``name`` is connected and in a match now (on any of its sessions)."""
        return any(session in self._busy for session in self._live(name))

    def room(self, name: str, grant: int = 1) -> bool:
        """Whether a new session of ``name`` granted ``grant`` may join: it has fewer sessions than that,
        or one of them is idle (the newcomer takes its place). A second stream of an entrant granted one
        match at a time is refused while the first plays, as before several were granted."""
        live = self._live(name)
        return len(live) < grant or any(session not in self._busy for session in live)

    def grant(self, name: str) -> int:
        """How many matches at once ``name``'s latest hello was granted (1 when it has none)."""
        return self._grants.get(name, 1)

    def capacity(self, name: str) -> int:
        """How many of ``name``'s sessions are open now: the matches it can be playing at once."""
        return len(self._live(name))

    async def join(self, name: str, session: Session, grant: int = 1) -> None:
        """A newly connected session of ``name``, granted ``grant`` matches at once, joins its others;
        past ``grant`` sessions, the oldest idle ones are closed (a restarted bot's new streams take the
        old ones' places)."""
        if self.closed:  # it came in the moment the league ended
            session.close(LEAGUE_OVER)
            return
        sessions = self._connected.setdefault(name, [])
        sessions[:] = [old for old in sessions if not old.is_closed]
        arrived = not sessions
        sessions.append(session)
        self._grants[name] = grant
        for old in [old for old in sessions if old is not session and old not in self._busy]:
            if len(sessions) <= grant:
                break
            old.close("a newer connection of this entrant took its place")
            sessions.remove(old)
        watch = asyncio.create_task(self._watch(name, session))
        self._watches.add(watch)
        watch.add_done_callback(self._watches.discard)
        if arrived:
            self.on_presence(name, True)
        await self._notify()

    async def leave(self, name: str, session: Session) -> None:
        sessions = self._connected.get(name, [])
        if session in sessions:
            sessions.remove(session)
            self._busy.pop(session, None)
            if not sessions:
                del self._connected[name]
                self.on_presence(name, False)
        await self._notify()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def connected(self, name: str) -> bool:
        """Whether ``name``'s bot is connected now (free or in a match): cut once it stops answering."""
        return bool(self._live(name))

    def _free(self, name: str, deals: int | None = None) -> Session | None:
        """A session of ``name`` that is idle, while none of its others plays ``deals``; ``None`` if there
        is none. One whose token is no longer good is closed on the way."""
        live = self._live(name)
        if deals is not None and any(self._busy.get(session, None) == deals for session in live):
            return None  # a table's rotations reach an entrant one after another
        idle = (session for session in live if session not in self._busy)
        return next((session for session in idle if self._good(name, session)), None)

    def _good(self, name: str, session: Session) -> bool:
        """Whether ``session``'s token is still good; one that is not is closed, saying why."""
        if self.valid(name, session):
            return True
        why = "its token was revoked or reissued, or it is no longer an entrant of the league"
        session.close(why, grpc.StatusCode.UNAUTHENTICATED)
        return False

    def dismiss(self) -> None:
        """Ends every idle connection whose entrant may no longer play (its token revoked or reissued,
        or gone from the league file): ``referee serve`` calls it whenever either file changes, so that
        such a bot is told at once, not when a match next looks for it. One in a match is told when the
        match hands it back (:meth:`release`)."""
        for name in list(self._connected):
            for session in self._live(name):
                if session not in self._busy:
                    self._good(name, session)

    def ready(self, names: Sequence[str], deals: int | None = None) -> bool:
        """Whether every one of ``names`` has a free session for a match on ``deals`` now: a claim of
        them would not wait (it still pings them first). ``referee serve`` plays a match with remote
        entrants only then, so that an entrant whose bot is not connected at the moment neither holds a
        table nor fails its starts (docs/SERVER.md)."""
        return all(self._free(name, deals) is not None for name in names)

    async def claim(
        self, names: Sequence[str], wait: float | None = None, deals: int | None = None
    ) -> list[Session]:
        """A session of each of ``names``, all taken at once when all have a free one for ``deals`` (the
        match's seed: see the module's doc) and have answered a ping; :class:`Absent` after ``wait``
        seconds (the league's, by default) naming those that were not connected, or as soon as one of
        them did not answer (its connection is cut)."""
        wait = self.wait if wait is None else wait
        sessions: list[Session] = []
        try:
            async with asyncio.timeout(wait), self._changed:
                await self._changed.wait_for(lambda: self.ready(names, deals))
                for name in names:
                    session = self._free(name, deals)
                    assert session is not None
                    self._busy[session] = deals  # held while it answers the ping
                    sessions.append(session)
        except TimeoutError:
            absent = [name for name in names if not self.connected(name)]
            busy = [name for name in names if name not in absent and self._free(name, deals) is None]
            raise Absent(absent, busy, wait) from None
        try:
            answers = await asyncio.gather(*(self._prove(session) for session in sessions))
        except BaseException:
            await self._unhold(names, sessions)
            raise
        silent = [name for name, alive in zip(names, answers, strict=True) if not alive]
        if silent:
            await self._unhold(names, sessions)
            raise Absent(silent, (), wait, silent=self.ping_timeout)
        for session in sessions:
            session.start_match()
        return sessions

    async def _unhold(self, names: Sequence[str], sessions: Sequence[Session]) -> None:
        for session in sessions:
            self._busy.pop(session, None)
        await self._notify()

    async def _prove(self, session: Session) -> bool:
        """Whether ``session``'s bot answers a ping in time; one that does not is cut. One ping at a time
        per session: a claim waits for the one the idle watch has in flight."""
        proof = self._proofs.get(session)
        if proof is None:
            proof = asyncio.create_task(self._ping(session))
            self._proofs[session] = proof
            proof.add_done_callback(lambda _: self._proofs.pop(session, None))
        return await asyncio.shield(proof)

    async def _ping(self, session: Session) -> bool:
        if session.is_closed:
            return False
        timeout = self.ping_timeout + session.lag_allowance
        if await session.ping(next(self._nonces), timeout) is not None:
            return True
        session.close(silence(timeout), grpc.StatusCode.UNAVAILABLE)
        return False

    async def _watch(self, name: str, session: Session) -> None:
        """Pings ``session`` every :attr:`idle_ping_every` seconds while it waits for a match, until it
        is closed (it does not answer, it leaves, the league ends)."""
        while not session.is_closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(session.wait_closed(), self.idle_ping_every)
            if self._idle(name, session) and not await self._prove(session):
                await self._notify()
                return

    def _idle(self, name: str, session: Session) -> bool:
        mine = session in self._connected.get(name, ())
        return mine and session not in self._busy and not session.is_closed

    async def claim_bots(self, specs: Sequence[BotSpec], deals: int | None = None) -> list[BotProcess]:
        """:meth:`claim` for a launcher: each session as a :class:`RemoteBot`, whose stop hands it
        back; a missing entrant is :class:`Absent`, a :class:`BotSpecError` as for a bot that would not
        start."""
        sessions = await self.claim([spec.name for spec in specs], deals=deals)
        return [RemoteBot(spec, session, self) for spec, session in zip(specs, sessions, strict=True)]

    async def release(self, name: str, session: Session) -> None:
        """A match is done with ``name``'s session: it waits in the lobby for the next one. One that left
        a request unanswered (a timeout whose reply never came) is pinged at once: a stalled bot is cut
        before the next match looks for it."""
        self.record(name, session, matches=1)
        self._busy.pop(session, None)
        mine = session in self._connected.get(name, ()) and not session.is_closed
        # its token revoked, or its entrant gone, meanwhile: told now (_good closes it)
        if mine and self._good(name, session) and session.busy:
            proof = asyncio.create_task(self._prove(session))
            self._watches.add(proof)
            proof.add_done_callback(self._watches.discard)
        await self._notify()

    def measured(self, name: str, round_trip: float) -> None:
        """A new connection of ``name`` measured its round trip."""
        self.latency.setdefault(name, Latency()).add_round_trip(round_trip)
        self.on_change()

    def record(self, name: str, session: Session, matches: int = 0) -> None:
        """Adds what ``session`` saw since the last call (its decisions' latencies, ``matches`` more)."""
        latency = self.latency.setdefault(name, Latency())
        latency.allowance = session.lag_allowance
        latency.matches += matches
        if session.latencies:
            latency.add_decisions(session.latencies)
            session.latencies.clear()
        elif not matches:
            return
        self.on_change()

    def close(self, interrupted: bool = False) -> None:
        """The league is over: every connection ends with OK, and the SDKs stop; or the referee was
        ``interrupted``: CANCELLED, and the SDKs wait for it to come back."""
        self.closed = True
        for session in [session for sessions in self._connected.values() for session in sessions]:
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
