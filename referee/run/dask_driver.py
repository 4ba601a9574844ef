"""The Dask driver: the league's matches played on the worker processes of a Dask cluster.

``referee run LEAGUE --workers N`` starts a :class:`distributed.LocalCluster` of N worker processes on
this machine; ``--dask tcp://HOST:8786`` uses a running cluster. Only *where* a match is played changes
(architecture principle 9): a task is "play this scheduled match", with the schedule's seed, and returns
its :class:`~referee.match.playing.MatchOutcome`; this process (the client) stores each outcome as it
arrives, one transaction per match, and stays the only writer of the results database. Ratings are
computed from the stored matches in schedule order, as always, so the order in which workers finish does
not matter.

This module is the client: a driver of the league's :class:`~referee.run.competition.Competition`,
as the in-process driver (``local_driver.py``) is, and the only writer of the results. The workers play
through the same :class:`~referee.match.arbiter.Arbiter` (``dask_worker.py``: its :class:`ArenaPlugin`
keeps one referee and launcher per worker for the run, runs the builds and starts the next
match's bots ahead).

What may go wrong on a worker is told apart from what an entrant did:

- a worker that lacks an entrant's folder or path, or cannot set up the sandbox, is *unfit*: the client
  names it and the path, and plays on without it (before the first match: stops, storing nothing);
- a bot that cannot start on a worker is tried again on another worker; only an entrant that failed to
  start on two different workers is disqualified for the run (the in-process driver: after three
  failed starts in a row), so a broken worker never disqualifies a healthy bot; a disqualified entrant's
  matches are skipped by the client, never stored (a start failure is not a result);
- a failed ``build:`` is the entrant's failure, as in-process (disqualified, nothing stored);
- a worker that dies mid-match: Dask runs the task again on another worker, with the same seed.

Ctrl-C reaches every process of the terminal's process group, the LocalCluster's workers too. They leave
it to the client: a worker of ``--workers N`` ignores SIGINT (it is blocked while the cluster starts them,
and their plugin installs a handler that does nothing), and when the run is interrupted the client has
every worker end its bots' streams with CANCELLED and stop them, then closes the cluster, so that one
tidy line is all the user sees. A worker of a cluster the user runs (``--dask``) keeps its own Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import secrets
import signal
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Final

import dask
from distributed import Client, LocalCluster, as_completed
from distributed.client import Future
from distributed.scheduler import KilledWorker

from referee.league.config import League
from referee.league.schedule import ScheduledMatch
from referee.match.launcher import Launcher, RemoteSource
from referee.match.outcome import Finished, NotStarted
from referee.match.setup import open_launcher
from referee.run.competition import Competition, Progress, RunReport
from referee.run.dask_worker import (
    ArenaPlugin,
    ClusterError,
    Feed,
    MatchJob,
    PlayedOnWorker,
    Unplayable,
    WorkerStats,
    interrupt_worker,
    play_on_worker,
    worker_stats,
    worker_unfit,
)
from referee.run.driver import OnProgress, Place, Tally, drive, quiet
from referee.run.host import Host
from referee.run.local_driver import LocalDriver
from referee.run.preflight import Broken

__all__ = ["ClusterError", "DaskDriver", "Unplayable"]

LOGGER = logging.getLogger(__name__)

CONNECT_TIMEOUT: Final = 10.0
"""Seconds to reach a scheduler before ``referee run --dask`` gives up."""
WORKERS_TIMEOUT: Final = 60.0
"""Seconds to wait for a running cluster's first worker."""
WORKER_START_FAILURES: Final = 2
"""Distinct workers on which an entrant's bot must fail to start before the entrant is disqualified."""
INTERRUPT_TIMEOUT: Final = 10.0
"""Seconds an interrupted run waits for the workers to end their bots' streams and stop them."""


LOCAL_SETTINGS: Final = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.memory.monitor-interval": "1s",
}
"""A LocalCluster's workers share the cores with the bots: no statistical profiler (it samples the
worker's stacks every 10 ms) and fewer event-loop health checks (every 20 ms by default)."""


@contextlib.contextmanager
def _interrupts_blocked() -> Iterator[None]:
    """SIGINT blocked on this thread, and on the threads started meanwhile, whose child processes inherit
    it: the LocalCluster's workers start deaf to Ctrl-C. A Ctrl-C meanwhile waits, and is seen after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


@dataclass(slots=True)
class _Slot:
    """A chain of matches the client hands one worker after another: the next one is chosen ahead, so the
    worker can start its bots while the current match plays."""

    scheduled: ScheduledMatch
    following: ScheduledMatch | None
    attempt: int = 0
    prefer: str | None = None
    avoid: set[str] = field(default_factory=set)
    feed: Feed | None = None
    """Where its worker relays its live view (``referee serve``'s matches)."""


class DaskDriver:
    """Drives a :class:`Competition` on a Dask cluster: its matches played on the workers, stored here
    (:func:`drive`, with this driver as its seats). ``concurrency`` is the preflight's (matches at once
    are the cluster's threads). With remote entrants (:attr:`remote`, set by the door around the run),
    the matches with a remote seat are played in this process, where the door is (the in-process
    driver's way), and the others on the workers."""

    def __init__(
        self,
        competition: Competition,
        host: Host,
        address: str | None = None,
        workers: int | None = None,
        say: Callable[[str], None] = lambda line: None,
        concurrency: int | None = None,
    ) -> None:
        if (address is None) == (workers is None):
            raise ValueError("give a scheduler address or a number of workers")
        self.competition = competition
        self.host = host
        self.concurrency = concurrency or competition.league.concurrency
        self.address = address
        self.workers = workers
        self.say = say
        self.unfit: dict[str, str] = {}
        self.failed_starts: dict[str, dict[str, str]] = {}
        self.setup_seconds = 0.0
        """How long the cluster took to be ready to play (started or reached, workers set up)."""
        self.stats: dict[str, WorkerStats] = {}
        """Per worker, at the end of a run (a worker restarted mid-run counts from its restart)."""
        self.remote: RemoteSource | None = None
        """The lobby of the remote entrants, when the referee listens for them (``remote_entrants.py``):
        their matches are played here, since a remote bot is connected to this process's door."""

    @property
    def builds_here(self) -> bool:
        """The workers build the entrants, unless this process plays matches too (remote seats')."""
        return self.remote is not None

    def client(self) -> AbstractAsyncContextManager[Client]:
        """A client of the running cluster, or of a LocalCluster closed (workers and all) at the end."""
        return cluster_client(self.address, self.workers, self.say)

    async def run(self, on_progress: OnProgress = quiet) -> RunReport:
        return await drive(self.competition, self.host, self, on_progress)

    @contextlib.asynccontextmanager
    async def opened(self, host: Host) -> AsyncIterator[Place]:
        """The cluster for the run, every worker set up (:meth:`arena`)."""
        begun = time.perf_counter()
        async with self.client() as client, self.arena(client, host) as plugin, self._here(host) as here:
            self.setup_seconds = time.perf_counter() - begun
            yield _Cluster(self, client, plugin, here)

    @contextlib.asynccontextmanager
    async def _here(self, host: Host) -> AsyncIterator[Place | None]:
        """The in-process driver's seats, for the matches with a remote seat; ``None`` without a door."""
        if self.remote is None:
            yield None
            return
        local = LocalDriver(self.competition, host, self.concurrency)
        local.remote = self.remote
        async with local.opened(host) as place:
            yield place

    @contextlib.asynccontextmanager
    async def arena(self, client: Client, host: Host) -> AsyncIterator[str]:
        """The name of this run's plugin, set up on every worker of ``client``'s cluster (its folders
        checked, the builds run, a referee and launcher of its own); interrupted, every worker ends its
        bots' streams with CANCELLED and stops them; at the end, each worker's :attr:`stats`. ``referee
        serve`` sets one up for each pass over the league, on the cluster it keeps for its whole life."""
        plugin = ArenaPlugin(secrets.token_hex(6), host, own_cluster=self.address is None)
        await client.register_plugin(plugin)
        try:
            await self._check_workers(client, plugin.name)
            yield plugin.name
        except (asyncio.CancelledError, KeyboardInterrupt):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.run(interrupt_worker, name=plugin.name), INTERRUPT_TIMEOUT)
            raise
        finally:
            with contextlib.suppress(Exception):
                stats = await client.run(worker_stats, name=plugin.name)
                self.stats = {worker: item for worker, item in stats.items() if item is not None}
            with contextlib.suppress(Exception):
                await client.unregister_worker_plugin(plugin.name)

    async def _check_workers(self, client: Client, plugin: str) -> None:
        unfit = await client.run(worker_unfit, name=plugin)
        lacks = [f"worker {worker}: {'; '.join(items)}" for worker, items in unfit.items() if items]
        if lacks:
            raise ClusterError(
                "; ".join(lacks) + ": every worker needs the entrants' folders at the same paths "
                "(docs/SCALING.md)"
            )

    async def _drive(
        self,
        client: Client,
        plugin: str,
        missing: list[ScheduledMatch],
        on_progress: OnProgress,
    ) -> None:
        """Plays one batch: a chain of matches per thread of the cluster, the next of each chosen ahead."""
        competition = self.competition
        queue = deque(missing)
        threads = await cluster_threads(client)
        slots: dict[Future[Any], _Slot] = {}
        pending = as_completed()

        def take() -> ScheduledMatch | None:
            return queue.popleft() if queue else None

        async def submit(slot: _Slot) -> None:
            while not competition.playable(slot.scheduled):
                # Not played, not stored: a disqualification is not a result (the next run retries it).
                competition.unplayed()
                following = slot.following or take()
                if following is None:
                    return
                slot = _Slot(following, take(), prefer=slot.prefer)
            future = await self._submit(client, plugin, slot)
            slots[future] = slot
            pending.add(future)

        chains = min(max(threads, 1), len(queue))
        for chain in range(chains):
            first = take()
            assert first is not None
            # A match to follow only while every chain still to start gets a first one: two matches on
            # two workers are two chains, not one chain of two.
            following = take() if len(queue) > chains - chain - 1 else None
            await submit(_Slot(first, following))
        async for future in pending:
            slot = slots.pop(future)
            try:
                result = await future
            except KilledWorker:
                raise ClusterError(
                    f"match {slot.scheduled.match_id} was on several workers that died while playing it "
                    "(Dask's distributed.scheduler.allowed-failures); look at the workers' logs, then run "
                    "again to resume"
                ) from None
            if isinstance(result, Unplayable) and not result.attempts:
                await self._unplayable(result, client)
                slot.attempt += 1
                await submit(slot)
                continue
            on_progress(await self._played(slot.scheduled, result, client))
            worker = result.worker
            if slot.following is not None:
                await submit(_Slot(slot.following, take(), prefer=worker))
            while queue and len(slots) < await cluster_threads(
                client
            ):  # a worker joined: give it a chain too
                first = take()
                assert first is not None
                await submit(_Slot(first, take()))

    async def play_one(
        self, client: Client, plugin: str, scheduled: ScheduledMatch, feed: Feed | None = None
    ) -> Finished | NotStarted:
        """Plays ``scheduled`` on a worker and stores its attempts: ``referee serve``'s way, which chooses
        each match as it can start. A worker unfit for it is named and avoided, as in a run, and a bot
        that did not start on a worker is tried on another; one that did not start on any (or a failed
        build, ``lasting``) is the caller's to count, as the caller counts a start that failed in its own
        process (:meth:`Competition.not_started`). With a ``feed``, its worker relays its live view."""
        slot = _Slot(scheduled, None, feed=feed)
        while True:
            future = await self._submit(client, plugin, slot)
            try:
                result = await future
            except KilledWorker:
                raise ClusterError(
                    f"match {scheduled.match_id} was on several workers that died while playing it "
                    "(Dask's distributed.scheduler.allowed-failures); look at the workers' logs"
                ) from None
            if isinstance(result, Unplayable) and not result.attempts:
                if result.kind == "unfit":
                    await self._unplayable(result, client)
                    slot.attempt += 1
                    continue
                if result.kind == "start" and await self._elsewhere(result, client):
                    slot.attempt += 1  # a broken worker never counts against a healthy bot
                    continue
            attempts = result.result.attempts if isinstance(result, PlayedOnWorker) else result.attempts
            for number, attempt in enumerate(attempts):
                self.competition.record(scheduled, attempt, number)
            if isinstance(result, PlayedOnWorker):
                LOGGER.info("match %s: played on worker %s", scheduled.match_id, result.worker)
                return result.result
            return NotStarted(
                result.entrant, result.reason, lasting=result.kind == "build", attempts=attempts
            )

    async def _elsewhere(self, failed: Unplayable, client: Client) -> bool:
        """Whether an entrant whose bot did not start on a worker is to be tried on another one now (the
        worker is avoided for it from then on); not once it failed on every worker, which is then
        forgotten, so that the caller counts one failed start and the next try may go anywhere."""
        tried = self.failed_starts.setdefault(failed.entrant, {})
        tried[failed.worker] = failed.reason
        if set(await _workers(client)) - set(self.unfit) - set(tried):
            self.say(f"worker {failed.worker}: {failed.reason}; trying {failed.entrant} on another")
            return True
        del self.failed_starts[failed.entrant]
        return False

    async def _submit(self, client: Client, plugin: str, slot: _Slot) -> Future[Any]:
        out = tuple(sorted(self.competition.disqualified.items()))
        job = MatchJob(plugin, slot.scheduled, slot.following, out, slot.feed)
        avoid = slot.avoid | set(self.unfit)
        for name in slot.scheduled.entrants:
            avoid |= set(self.failed_starts.get(name, ()))
        # Where it may run: anywhere but the workers that cannot play it (a strict restriction),
        # preferably where its bots were started ahead (a loose one, so a lost worker does not
        # hold it back).
        workers: list[str] | None = None
        loose = False
        if avoid:
            workers = [w for w in await _workers(client) if w not in avoid]
            if not workers:
                raise ClusterError(
                    f"no worker left that can play {slot.scheduled.match_id}: "
                    + "; ".join(f"{w}: {why}" for w, why in self.unfit.items())
                )
        elif slot.prefer is not None:
            workers, loose = [slot.prefer], True
        future: Future[Any] = client.submit(
            play_on_worker,
            job,
            key=f"pyramid-{plugin}-{slot.scheduled.position}-{slot.attempt}-{secrets.token_hex(3)}",
            pure=False,
            workers=workers,
            allow_other_workers=loose,
        )
        return future

    async def _played(
        self, scheduled: ScheduledMatch, result: PlayedOnWorker | Unplayable, client: Client
    ) -> Progress:
        """Stores every attempt of a match played on a worker (void ones too) and counts it; a match whose
        retry after a void did not start is left for the next run, its void attempts stored."""
        competition = self.competition
        for number, attempt in enumerate(
            result.attempts if isinstance(result, Unplayable) else result.result.attempts
        ):
            competition.record(scheduled, attempt, number)  # stops a run that keeps voiding
        if isinstance(result, Unplayable):
            await self._unplayable(result, client)
            return competition.finished(scheduled, Finished(result.attempts))
        LOGGER.info("match %s: played on worker %s", scheduled.match_id, result.worker)
        return competition.finished(scheduled, result.result)

    async def _unplayable(self, result: Unplayable, client: Client) -> None:
        competition = self.competition
        if result.kind == "unfit":
            if result.worker not in self.unfit:
                self.unfit[result.worker] = result.reason
                self.say(f"worker {result.worker}: {result.reason}; no more matches go there")
        elif result.kind == "build":
            competition.disqualify(result.entrant, result.reason)
        else:
            failed = self.failed_starts.setdefault(result.entrant, {})
            failed[result.worker] = result.reason
            workers = set(await _workers(client)) - set(self.unfit)
            if len(failed) >= WORKER_START_FAILURES:
                competition.disqualify(
                    result.entrant, f"{result.reason} (on workers {', '.join(sorted(failed))})"
                )
            elif workers <= set(failed):
                raise ClusterError(
                    f"{result.entrant} cannot start on worker {result.worker}, the only worker left: "
                    f"{result.reason}; fix the worker (or the entrant) and run again"
                )
            else:
                self.say(f"worker {result.worker}: {result.reason}; trying {result.entrant} on another")


@dataclass(frozen=True, slots=True)
class _Cluster:
    """The Dask driver's seats for one run: the cluster's workers, through its client."""

    driver: DaskDriver
    client: Client
    plugin: str
    here: Place | None = None
    """The in-process seats of the matches with a remote seat (:meth:`DaskDriver._here`)."""

    def trying(self) -> AbstractAsyncContextManager[Launcher]:
        """A launcher of this process's own: the preflight runs here, once the workers have their folders
        and before any of them plays (the entrants' folders and programs are on this machine too: the
        league file was checked against them); an entrant with a build is left to the workers, unless
        this process builds too (remote seats)."""
        if self.here is not None:
            return self.here.trying()
        host = self.driver.host
        return open_launcher(host.log_dir, host.confinement)

    def unready(self, league: League) -> list[Broken]:
        return []  # a remote entrant without its token is refused before the run (with_door)

    async def play(self, batch: list[ScheduledMatch], on_progress: OnProgress) -> None:
        """The batch's matches with a remote seat here, the others on the workers, at once."""
        remote = set(self.driver.competition.league.remote_names)
        here = [m for m in batch if not remote.isdisjoint(m.entrants)]
        there = [m for m in batch if remote.isdisjoint(m.entrants)]
        async with asyncio.TaskGroup() as group:
            if there:
                group.create_task(self.driver._drive(self.client, self.plugin, there, on_progress))
            if here:
                assert self.here is not None  # a league with remote entrants has its door
                group.create_task(self.here.play(here, on_progress))

    def tally(self) -> Tally:
        stats = self.driver.stats.values()
        local = self.here.tally() if self.here is not None else Tally()
        return Tally(
            local.processes_started + sum(item.started for item in stats),
            (*local.refusals, *(line for item in stats for line in item.refusals)),
        )


@contextlib.asynccontextmanager
async def cluster_client(
    address: str | None, workers: int | None, say: Callable[[str], None] = lambda line: None
) -> AsyncIterator[Client]:
    """A client of the running cluster at ``address``, or of a LocalCluster of ``workers`` processes
    closed (workers and all) at the end; :class:`ClusterError` for a scheduler that cannot be reached or
    a cluster no worker joins."""
    if address is not None:
        try:
            client = await Client(address, asynchronous=True, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise ClusterError(
                f"cannot reach the Dask scheduler at {address}: {_first_line(exc)}; start one with "
                "`dask scheduler` (docs/SCALING.md) or check the address"
            ) from None
        try:
            if not client.scheduler_info()["workers"]:
                say(f"waiting for a Dask worker to join {address}")
                try:
                    await client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
                except TimeoutError:
                    raise ClusterError(
                        f"no Dask worker joined {address} within {WORKERS_TIMEOUT:g}s; start one "
                        f"with `dask worker {address}`"
                    ) from None
            yield client
        finally:
            await client.close()
        return
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")  # workers inherit it
    with dask.config.set(LOCAL_SETTINGS):  # the nannies pass it on to their workers as they start
        with _interrupts_blocked():
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                asynchronous=True,
                dashboard_address=":8787" if _has_bokeh() else ":0",  # no port to fight over
            )
            try:
                await cluster
            except BaseException:
                closing = cluster.close()  # an awaitable, the cluster being asynchronous
                if closing is not None:
                    await closing
                raise
        async with cluster:
            dashboard = _dashboard(cluster)
            say(f"Dask LocalCluster: {workers} worker processes, dashboard {dashboard}")
            async with Client(cluster, asynchronous=True) as client:
                await client.wait_for_workers(workers)
                yield client


async def _workers(client: Client) -> list[str]:
    """The addresses of the cluster's workers now."""
    nthreads: dict[str, int] = await client.nthreads()
    return list(nthreads)


async def cluster_threads(client: Client) -> int:
    """Matches the cluster can play at once: its workers' threads, asked of the scheduler (the client's
    own copy of its state is refreshed only every few seconds)."""
    nthreads: dict[str, int] = await client.nthreads()
    return sum(nthreads.values())


def _has_bokeh() -> bool:
    return importlib.util.find_spec("bokeh") is not None


def _dashboard(cluster: LocalCluster) -> str:
    if not _has_bokeh():
        return "off (pip install bokeh to get one)"
    return str(cluster.dashboard_link)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
