"""``referee serve``'s driver: plan the league's missing matches, play one, record it, tell the
listeners (through the :class:`Publisher` the web app hands it: this module imports nothing of the web
app); again, for as long as the server runs.

It drives the league's :class:`~referee.run.competition.Competition` as ``referee run``'s
:class:`~referee.run.local_driver.LocalDriver` does, through the same public interfaces: the league's
:class:`~referee.run.host.Host` (logs, sandbox, builds), the preflight, a
:class:`~referee.match.arbiter.Arbiter` that plays each match, and the competition that plans the matches
and records each attempt, so a match played here is the match ``referee run`` would play: same seed,
same seats, same record. The competition stays open (the league held) while the server runs. The league
file is read again whenever it changes (a new entrant from ``referee submit``, a ``--replace``d
version): the competition plans again (:meth:`~referee.run.competition.Competition.replan`), and the
builds, the launcher and the preflight are set up again for the league as it now is; but a change that
only adds remote entrants (an author's entry) or changes a token is taken in as the league plays
(:meth:`ServeDriver._absorb`), with no match waited for and no build or preflight run again. Up to the
league's ``concurrency`` matches are in play at once.

Remote entrants play through the server's one door (:class:`~referee.run.remote_entrants.OpenDoor`),
whose lobby every pass's launcher seats them from. Unlike ``referee run``, which ends, the server
plays a match with remote entrants only while they are all connected and free: an arena runs for days,
and a bot that is away for a while must neither hold a table nor be disqualified (docs/SERVER.md).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import itertools
import logging
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from referee.league.changes import remote_newcomers
from referee.league.config import League, LeagueError, load_league
from referee.league.schedule import ScheduledMatch
from referee.match.arbiter import Arbiter
from referee.match.launcher import Launcher
from referee.match.outcome import Finished, MatchStatus, NotStarted
from referee.match.setup import open_launcher
from referee.match.watch import LiveMatch, watched
from referee.remote.lobby import seatable
from referee.remote.settings import RemoteSettingsError
from referee.remote.tokens import TokenBook, TokenError, tokens_path
from referee.results.errors import StorageError, StoreError
from referee.results.lock import LeagueBusyError
from referee.results.owner import made_by
from referee.run.competition import Competition
from referee.run.driver import ClusterError, OnProgress, Place, Tally, drive, held
from referee.run.host import Host
from referee.run.preflight import Broken
from referee.run.remote_entrants import OpenDoor, missing_tokens, no_token

if TYPE_CHECKING:
    from distributed import Client

    from referee.run.serve_cluster import OnCluster

LOGGER = logging.getLogger(__name__)
POLL: Final = 1.0
"""Seconds between looks at the league file for changes while there is nothing to play."""
PRESENCE_KEPT: Final = 50
"""Connections and departures kept per remote entrant for its author's page (docs/SERVER.md)."""
CLUSTER_RETRY: Final = 30.0
"""Seconds before a pass the cluster could not play (a worker that lacks an entrant's folder, a match on
several workers that died) is tried again, if the league file does not change before."""


class Publisher(Protocol):
    """Where the driver tells what happens as it plays (the web app's event hub,
    :class:`referee.web.events.Hub`): the driver knows nothing of the web app, which hands it this."""

    @property
    def listeners(self) -> int:
        """How many listen now: a match's view is built only for someone."""
        ...

    def publish(self, kind: str, **data: Any) -> None:
        """Tells every listener; returns at once (the play goes on)."""
        ...


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    """Where the server plays the matches without remote seats, besides this process: a LocalCluster
    of ``workers`` processes on this machine (``--workers``, ``workers:``) or the running cluster whose
    scheduler is at ``address`` (``--dask``, ``dask:``); ``serve_cluster.py`` plays on it."""

    workers: int | None = None
    address: str | None = None


def league_text(path: Path) -> str:
    """A digest of the league file: when it changes, the league is read again."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def remote_problems(league: League, door: OpenDoor | None) -> list[Broken]:
    """The remote entrants that cannot play now, each with why: there is no door (``referee serve``
    started without ``--listen``, and the league file gained one since), or no token. They sit out, as a
    broken bot does, and the pages say why; the rest of the league plays."""
    names = league.remote_names
    if not names:
        return []
    if door is None:
        why = "a remote entrant, and referee serve was started without --listen (docs/REMOTE.md)"
        return [Broken(name, why) for name in names]
    try:
        missing = missing_tokens(league)
    except RemoteSettingsError as exc:
        return [Broken(name, str(exc)) for name in names]
    return [Broken(name, no_token(league, name)) for name in missing]


def _say(line: str) -> None:
    """A line for the person who started the server (what ``--fresh`` did), and for its log."""
    LOGGER.warning("%s", line)
    print(line, file=sys.stderr, flush=True)


class ServeDriver:
    """Plays a league on and on. ``on_stored`` is told (and must return at once: the play goes on) after
    each stored match and whenever the league is read again; ``state`` counts those changes, so that
    what is read of the results is kept until the next (:class:`referee.web.readers.Answers`)."""

    def __init__(
        self,
        league_file: Path,
        hub: Publisher,
        on_stored: Callable[[League, int], None] = lambda league, seed: None,
        poll: float = POLL,
        door: OpenDoor | None = None,
        fresh: bool = False,
        cluster: ClusterSettings | None = None,
    ) -> None:
        self.league_file = league_file.resolve()
        self.cluster = cluster
        """The Dask cluster the matches without remote seats are played on; ``None``: all play here."""
        self.client: Client | None = None
        """A client of :attr:`cluster`, from the first pass until :meth:`run` ends."""
        self.fresh = fresh
        """Forget the league's stored results when its competition is first opened (``--fresh``)."""
        self.door = door
        """The remote entrants' door, open for the server's whole life; ``None`` without ``--listen``."""
        self.presence: dict[str, collections.deque[tuple[float, bool]]] = {}
        """Each remote entrant's latest connections and departures (when, connected), for its author's
        page: at most :data:`PRESENCE_KEPT` of them, since the server started."""
        if door is not None:  # the pages mark each remote entrant connected or away as it changes
            door.lobby.on_presence = self._presence
        self.hub = hub
        self.on_stored = on_stored
        self.poll = poll
        self.league: League | None = None
        """The league as last read: what the pages show."""
        self.seed = 0
        """The seed of its results (the competition's): the pages read them under it."""
        self.problem = ""
        """Why the league cannot be played now (a broken league file, a broken bot), or nothing."""
        self.live: dict[str, LiveMatch] = {}
        """The matches in play, by id."""
        self.played = 0
        self.rated_at = -1
        """:attr:`played` when the ratings were last stored (never yet: -1)."""
        self.competition: Competition | None = None
        """The league's competition, open (its database held) from the first pass until :meth:`run` ends."""
        self.state = 0
        """Changes of the results and of the league since the server started: a match stored, or not
        started (its strike stored), the league file read again."""
        self._loaded: League | None = None
        """The league file as this pass read it (or last took in: :meth:`_absorb`)."""
        self._grants: dict[str, str] = {}
        """Each remote entrant's token hash as this pass last saw it: a new one lets it play again."""
        self._serving: Competition | None = None
        """The competition whose matches are being played now (not while a pass builds and checks)."""
        self._seen = ""
        """The digest of the files as the league in play last took them in."""

    def _presence(self, name: str, connected: bool) -> None:
        kept = self.presence.setdefault(name, collections.deque(maxlen=PRESENCE_KEPT))
        kept.append((time.time(), connected))
        self.hub.publish("connection", name=name, connected=connected)

    async def run(self) -> None:
        """Until cancelled: each pass plays the league as the file says now, until the file changes."""
        async with contextlib.AsyncExitStack() as stack:
            await self._run(stack)

    async def _run(self, stack: contextlib.AsyncExitStack) -> None:
        try:
            while True:
                digest = self._digest()
                try:
                    league = load_league(self.league_file, made_by=made_by)
                    competition = self._competition(self._admitted(league))
                except LeagueError as exc:
                    self._trouble(str(exc))
                    await self._until_changed(digest)
                    continue
                except StoreError as exc:
                    if self.league is None or isinstance(exc, LeagueBusyError | StorageError):
                        raise  # nothing to serve, or a database that cannot be trusted: serve stops, one line
                    self._trouble(f"{exc}; the pages show the league as it was")  # e.g. its rules changed
                    await self._until_changed(digest)
                    continue
                if self.door is not None and not self.door.is_open:  # the league is held: now its door
                    await self.door.open()
                if self.cluster is not None and self.client is None:  # and the cluster, for good
                    from referee.run import serve_cluster  # noqa: PLC0415 (Dask only when it is used)

                    self.client = await stack.enter_async_context(serve_cluster.client(self.cluster, _say))
                self.league, self.seed = competition.league, competition.seed
                self._loaded, self._grants = league, self._token_hashes()
                self._changed(competition)
                self.hub.publish("league", name=competition.league.name)
                try:
                    await self._pass(competition, digest)
                except ClusterError as exc:  # a worker unfit for the league, or lost mid-match
                    self._trouble(
                        f"{exc}; the server tries again in {CLUSTER_RETRY:g}s or when the file changes"
                    )
                    await self._until_changed(digest, CLUSTER_RETRY)
        finally:
            if self.competition is not None:
                self.competition.close()
                self.competition = None

    def _competition(self, league: League) -> Competition:
        """The competition of the league file as it now reads: opened on the first pass (or when the
        file names another database), planned again on the next ones. Settings that would invalidate the
        stored results (rules, seed) raise :class:`StoreError`, the competition left as it was."""
        competition = self.competition
        if competition is not None and competition.league.database != league.database:
            competition.close()
            self.competition = competition = None
        if competition is None:
            competition = self.competition = Competition.open(
                league, fresh=self.fresh, say=_say, skip_broken=True
            )
            self.fresh = False  # once: a later pass plays on what this one stored
        else:
            try:
                competition.replan(league)  # forgets the last pass's disqualifications
            except ValueError as exc:
                raise StoreError(str(exc)) from None
        return competition

    def _changed(self, competition: Competition) -> None:
        self.state += 1
        self.on_stored(competition.league, competition.seed)

    def connected(self, name: str) -> bool:
        """Whether the remote entrant ``name``'s bot is connected to the door now."""
        return self.door is not None and self.door.lobby.connected(name)

    def _admitted(self, league: League) -> League:
        """``league``, its remote entrants now the ones the door admits."""
        if self.door is not None:
            self.door.admit(league)
        return league

    def _digest(self) -> str:
        """What a change of starts a new pass: the league file and, with a door, the token file (a token
        issued for a remote entrant that had none lets it play; a revoked one makes it sit out)."""
        tokens = league_text(tokens_path(self.door.league.database)) if self.door is not None else ""
        return league_text(self.league_file) + tokens

    def _trouble(self, problem: str) -> None:
        LOGGER.warning("%s", problem)
        self.problem = problem
        self.hub.publish("problem", text=problem)

    async def _until_changed(self, digest: str, at_most: float | None = None) -> None:
        """Until the league file (or the token file) changes, or ``at_most`` seconds have passed."""
        loop = asyncio.get_running_loop()
        until = None if at_most is None else loop.time() + at_most
        while self._digest() == digest and (until is None or loop.time() < until):
            await asyncio.sleep(self.poll)

    async def _pass(self, competition: Competition, digest: str) -> None:
        """One pass: the league as its file now reads, played until the file changes (:func:`drive`, the
        server's watched tables as its seats); the builds, the launcher and the preflight are set up
        again for it."""
        host = Host.of(competition.league)
        await drive(competition, host, _Served(self, competition, digest), jobs=_ONE_PASS)

    async def _serve(
        self, competition: Competition, arbiter: Arbiter, digest: str, cluster: OnCluster | None = None
    ) -> None:
        """Plays the matches that can start, up to the league's ``concurrency`` at once here and, with a
        ``cluster``, as many more as its workers' threads there, until the file changes; rates the league
        whenever nothing can be played now after something was. A match with a remote seat is played
        here, where the door is; with a cluster, every other one is played there."""
        concurrency = competition.league.concurrency
        league = competition.league
        remote = set(league.remote_names)

        def here(match: ScheduledMatch) -> bool:
            return cluster is None or not remote.isdisjoint(match.entrants)

        playing: dict[str, tuple[ScheduledMatch, asyncio.Task[None]]] = {}
        self._serving, self._seen = competition, digest
        try:
            while True:
                if self._digest() != self._seen and not self._take_in(competition):
                    break  # a change the league in play cannot take in: a new pass
                if competition.league is not league:  # grown by an entry (here, or in take_in)
                    league, remote = competition.league, set(competition.league.remote_names)
                for match_id, (_, task) in list(playing.items()):
                    if task.done():
                        del playing[match_id]
                        task.result()  # a failure of the referee's own stops serve, loudly
                in_play = [m for m, _ in playing.values()]
                free = {True: concurrency - sum(here(m) for m in in_play), False: 0}
                if cluster is not None:
                    free[False] = await cluster.threads() - sum(not here(m) for m in in_play)
                scheduled = None
                if max(free.values()) > 0:
                    scheduled = self._next(competition, in_play, partial(_room, free, here))
                if scheduled is None:
                    if not playing and self.rated_at != self.played:  # stored as the end of a run does
                        competition.rated()
                        self.rated_at = self.played
                    waits = {task for _, task in playing.values()}
                    waits.add(asyncio.ensure_future(asyncio.sleep(self.poll)))
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                    continue
                if here(scheduled):
                    play = self._play_one(competition, arbiter, scheduled)
                else:
                    assert cluster is not None
                    play = self._play_there(competition, cluster, scheduled)
                playing[scheduled.match_id] = (scheduled, asyncio.create_task(play))
            if self.door is not None:  # a token revoked or reissued: that bot is told now
                self.door.lobby.dismiss()
            await asyncio.gather(*(task for _, task in playing.values()))  # the league changed
        finally:
            self._serving = None
            for _, task in playing.values():
                task.cancel()
            await asyncio.gather(*(task for _, task in playing.values()), return_exceptions=True)

    def take_in(self) -> None:
        """The league file or the token file was just changed by this process (an entry, a rotation):
        taken in now, before the author is answered, so that a bot started at once with its new token
        is admitted. While a pass is still building and checking, the door admits the newcomers at once
        and the pass takes them in when its matches start."""
        if self._serving is not None:
            if self._digest() != self._seen:
                self._take_in(self._serving)
            return
        if self._loaded is None or self.door is None:
            return
        try:
            league = load_league(self.league_file, made_by=made_by)
        except LeagueError:
            return
        if remote_newcomers(self._loaded, league):
            self.door.admit(league)

    def _take_in(self, competition: Competition) -> bool:
        """:meth:`_absorb`, the digest it took in kept; whether it could."""
        absorbed = self._absorb(competition)
        if absorbed is None:
            return False
        self._seen = absorbed
        return True

    def _absorb(self, competition: Competition) -> str | None:
        """The league file or the token file changed in a way the league in play can take in without
        ending its pass (no match in play waits, no build or preflight runs again): remote entrants
        added (:func:`remote_newcomers`; an author's entry, docs/REMOTE.md "Entering by yourself"), a
        token issued, rotated or revoked. The competition grows by the newcomers' tables, the door admits
        them, and a remote entrant without a token sits out while one whose token changed may play
        again. Returns the files' new digest, or ``None`` for any other change: the caller ends the pass,
        and the next one reads the league afresh (and says what is wrong with a broken file)."""
        digest = self._digest()
        if self._loaded is None:
            return None
        try:
            league = load_league(self.league_file, made_by=made_by)
        except LeagueError:
            return None
        added = remote_newcomers(self._loaded, league)
        if added is None or (added and self.door is None):
            return None
        if added:
            try:
                competition.grow(league)
            except (ValueError, StoreError) as exc:
                LOGGER.warning("%s: a new pass takes the newcomers in", exc)
                return None
            LOGGER.warning(
                "%s joined the league in play (%d matches scheduled)",
                ", ".join(added),
                len(competition.schedule),
            )
        self._loaded = league
        if self.door is not None:
            self.door.admit(competition.league)  # the newcomers admitted; a revoked token's bot told now
        self._sit_out(competition)
        self.league = competition.league
        self._changed(competition)
        self.hub.publish("league", name=competition.league.name)
        return digest

    def _sit_out(self, competition: Competition) -> None:
        """The remote entrants without a token sit out (one line and a ``problem`` event each, as a
        pass's start says); one whose token changed since (issued, reissued, rotated) may play again,
        whatever kept it out (a token missing, three starts missed)."""
        grants = self._token_hashes()
        problems = {item.name: item for item in remote_problems(competition.league, self.door)}
        for name in competition.league.remote_names:
            problem = problems.get(name)
            if problem is not None and name not in competition.disqualified:
                LOGGER.warning("%s: %s", name, problem.reason)
                self.hub.publish("problem", text=f"{name}: {problem.reason}")
                competition.disqualify(name, problem.reason)
                competition.broken.append(problem)
            elif problem is None and grants.get(name) != self._grants.get(name):
                competition.reinstate(name)
        self._grants = grants
        self.problem = "; ".join(f"{b.name}: {b.reason}" for b in competition.broken)

    def _token_hashes(self) -> dict[str, str]:
        """Each remote entrant's token hash now (what it was last seen to be, while the file cannot be
        read)."""
        if self.door is None:
            return {}
        try:
            grants = TokenBook(tokens_path(self.door.league.database)).grants()
        except TokenError:
            return self._grants
        return {name: grant.digest for name, grant in grants.items()}

    def _next(
        self,
        competition: Competition,
        playing: list[ScheduledMatch],
        room: Callable[[ScheduledMatch], bool] = lambda match: True,
    ) -> ScheduledMatch | None:
        """The first missing match not in play whose entrants can all play now, and for which there is
        ``room`` (here, or on the cluster); an ``until: settled`` league plans its next batch once the
        last one is stored."""
        missing: Iterator[ScheduledMatch] = competition.pending()
        first = next(missing, None)
        if first is None and not playing and competition.league.settling is not None:
            missing = iter(competition.next_batch())
        elif first is not None:
            missing = itertools.chain((first,), missing)
        in_play = {m.match_id for m in playing}
        remote = set(competition.league.remote_names)
        return next(
            (
                m
                for m in missing
                if m.match_id not in in_play
                and room(m)
                and competition.playable(m)
                and self._here([n for n in m.entrants if n in remote], m.seed, playing)
            ),
            None,
        )

    def _here(self, remote: list[str], deals: int, playing: list[ScheduledMatch]) -> bool:
        """Whether a match's ``remote`` entrants all have a free session for it now, each seated at fewer
        matches in ``playing`` than it has sessions and at none on the same ``deals`` (its seed: a table's
        rotations reach a remote entrant one after another): in a league that runs on, a remote entrant
        whose bot is not connected at the moment waits for its matches, which are played once it
        connects, rather than failing its starts (the claim's wait, ``remote: wait``, still covers a bot
        that drops between this look and its match). The others' matches go on meanwhile."""
        if not remote:
            return True
        lobby = self.door.lobby if self.door is not None else None
        return lobby is not None and seatable(lobby, remote, deals, [(m.entrants, m.seed) for m in playing])

    async def _play_one(self, competition: Competition, arbiter: Arbiter, scheduled: ScheduledMatch) -> None:
        """Plays ``scheduled`` in this process, watched card by card by the listeners."""
        sitting = competition.sitting(scheduled)
        lineup = await arbiter.seat(sitting)
        if lineup.failed is not None:  # counted by the competition: three in a row disqualify
            arbiter.release(lineup)
            await self._not_started(competition, scheduled, lineup.failed)
            return
        live = self._live(competition, scheduled)
        live.listeners.append(lambda match: self.hub.publish("play", **match.state()))
        lineup.seats = watched(lineup.seats, live)
        count = itertools.count()
        try:
            result = await arbiter.play(
                sitting, lineup, lambda attempt: competition.record(scheduled, attempt, next(count))
            )
        finally:
            live.close()
            self.live.pop(scheduled.match_id, None)
        self._ended(competition, scheduled, result)

    async def _play_there(
        self, competition: Competition, cluster: OnCluster, scheduled: ScheduledMatch
    ) -> None:
        """Plays ``scheduled`` on a worker of the cluster, watched through the view its worker relays
        (:meth:`_relayed`)."""
        live = self._live(competition, scheduled, on_worker=True)
        live.listeners.append(lambda match: self.hub.publish("play", **match.state()))
        try:
            result = await cluster.play(scheduled, live.shown)
        finally:
            live.close()
            self.live.pop(scheduled.match_id, None)
        if isinstance(result, NotStarted) and not result.attempts:
            await self._not_started(competition, scheduled, result)
            return
        self._ended(competition, scheduled, result)

    def _relayed(self, event: dict[str, Any]) -> None:
        """A worker's relay of a match it plays (``dask_worker.Feed``): the view of that match in play,
        if it still is (a late relay of a stored match is dropped)."""
        live = self.live.get(str(event.get("match_id")))
        if live is not None and live.on_worker:
            live.relay(int(event.get("deal") or 0), event.get("view"))

    def _live(
        self, competition: Competition, scheduled: ScheduledMatch, on_worker: bool = False
    ) -> LiveMatch:
        """``scheduled``, listed in play from now on (:attr:`live`, the ``match_started`` event)."""
        live = LiveMatch(
            scheduled.match_id,
            scheduled.entrants,
            _shown(competition, scheduled),
            scheduled.position + 1,
            tuple(competition.league.remote_names),
            watching=lambda: self.hub.listeners > 0,  # its view built for the listeners alone
            on_worker=on_worker,
        )
        self.live[scheduled.match_id] = live
        self.hub.publish("match_started", **live.summary())
        return live

    async def _not_started(
        self, competition: Competition, scheduled: ScheduledMatch, failed: NotStarted
    ) -> None:
        """A match whose bots did not all start: counted by the competition (three in a row disqualify),
        and tried again while it is playable."""
        competition.not_started(scheduled, failed, tries=1)
        self._changed(competition)
        await asyncio.sleep(self.poll)

    def _ended(
        self, competition: Competition, scheduled: ScheduledMatch, result: Finished | NotStarted
    ) -> None:
        """A match played (its attempts stored as they ended): counted, and told to the listeners."""
        if isinstance(result, NotStarted):  # a retry after a void did not start: its voids are stored
            competition.not_started(scheduled, result, tries=1)
            outcome = result.attempts[-1].outcome
        else:
            competition.finished(scheduled, result)
            outcome = result.outcome
        self.played += 1
        self._changed(competition)
        if self.door is not None:
            for refusal in self.door.new_refusals():
                LOGGER.warning("remote door: refused: %s", refusal)
        self.hub.publish(
            "match_finished",
            match_id=scheduled.match_id,
            position=scheduled.position + 1,
            status=str(outcome.status),
            complete=outcome.status is MatchStatus.COMPLETE,
        )


class _OnePass:
    """``referee serve``'s job source: one pass that goes even with nothing missing (the file may change,
    a remote entrant connect), its matches chosen as they can start (:meth:`ServeDriver._next`)."""

    def goes(self, missing: list[ScheduledMatch]) -> bool:
        return True

    def next(self, competition: Competition) -> list[ScheduledMatch]:
        return []


_ONE_PASS: Final = _OnePass()


@dataclass(frozen=True, slots=True)
class _Served:
    """The server's seats for one pass: its tables, on a launcher that seats the remote entrants from
    the door's lobby; each match watched by the listeners."""

    driver: ServeDriver
    competition: Competition
    digest: str

    @property
    def builds_here(self) -> bool:
        """On a cluster, the workers build the entrants (as in ``referee run --workers``), unless this
        process plays matches too: those with a remote seat, whose other seats may need a build."""
        return self.driver.cluster is None or bool(self.competition.league.remote_names)

    @property
    def concurrency(self) -> int:
        return self.competition.league.concurrency

    @contextlib.asynccontextmanager
    async def opened(self, host: Host) -> AsyncIterator[Place]:
        door = self.driver.door
        async with open_launcher(
            host.log_dir, host.confinement, remote=door.lobby if door else None
        ) as launcher:
            arbiter = host.arbiter(launcher)
            try:
                async with self._cluster(host) as cluster:
                    yield _ServedPlace(self.driver, self.competition, self.digest, launcher, arbiter, cluster)
            finally:
                await arbiter.close()

    @contextlib.asynccontextmanager
    async def _cluster(self, host: Host) -> AsyncIterator[OnCluster | None]:
        """The server's cluster set up for this pass, or ``None`` when every match is played here."""
        driver = self.driver
        if driver.cluster is None or driver.client is None:
            yield None
            return
        from referee.run.serve_cluster import on_cluster  # noqa: PLC0415 (Dask only when it is used)

        competition = self.competition
        async with on_cluster(
            driver.client, driver.cluster, competition, host, _say, driver._relayed
        ) as cluster:
            yield cluster


@dataclass(frozen=True, slots=True)
class _ServedPlace:
    """The server's seats, open for one pass."""

    driver: ServeDriver
    competition: Competition
    digest: str
    launcher: Launcher
    arbiter: Arbiter
    cluster: OnCluster | None = None

    def trying(self) -> AbstractAsyncContextManager[Launcher]:
        return held(self.launcher)

    def unready(self, league: League) -> list[Broken]:
        """The remote entrants that cannot play now, told to the pages as they are found."""
        remote = remote_problems(league, self.driver.door)
        for problem in remote:
            LOGGER.warning("%s: %s", problem.name, problem.reason)
            self.driver.hub.publish("problem", text=f"{problem.name}: {problem.reason}")
        return remote

    async def play(self, batch: list[ScheduledMatch], on_progress: OnProgress) -> None:
        """The whole pass: not ``batch`` alone but every match that can start, as the competition plans
        them, until the league file changes."""
        competition = self.competition
        self.driver.problem = "; ".join(f"{b.name}: {b.reason}" for b in competition.broken)
        await self.driver._serve(competition, self.arbiter, self.digest, self.cluster)

    def tally(self) -> Tally:
        there = self.cluster.tally() if self.cluster is not None else Tally()
        return Tally(
            self.launcher.started + there.processes_started,
            (*self.launcher.registry.refusals, *there.refusals),
        )


def _room(free: dict[bool, int], here: Callable[[ScheduledMatch], bool], match: ScheduledMatch) -> bool:
    """Whether a seat is free where ``match`` would be played: ``free[True]`` here, ``free[False]`` on
    the cluster."""
    return free[here(match)] > 0


def _shown(competition: Competition, scheduled: ScheduledMatch) -> bool:
    """Whether a match may be watched card by card: only when no other match of its table is still to
    come, since they replay its deals (``referee.results.disclosure``)."""
    done = competition.store.complete_ids()
    return all(i in done for i in competition.table_of(scheduled) if i != scheduled.match_id)
