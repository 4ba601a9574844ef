"""The worker side of the Dask driver (``dask_driver.py``): what passes between the client and the
workers, and the :class:`ArenaPlugin` that plays matches on each worker through a
:class:`~referee.match.arbiter.Arbiter`.

On each worker the plugin (a Dask ``WorkerPlugin``, so that a worker that joins or is restarted mid-run
gets one too) keeps, for the whole run, one referee server and one launcher with the league's sandbox,
runs each entrant's ``build:`` before that entrant's first match there, and starts the bots of the match
the client will most likely send it next while the current one plays. Match tasks are coroutines, run on
the worker's own event loop, so the bot processes are children of the worker's main thread and die with
it. A void match is played again on the same worker by the arbiter; the client stores every attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import resource
import signal
import threading
from dataclasses import dataclass
from typing import Any, Final

from distributed import WorkerPlugin, get_worker

from referee.league.schedule import ScheduledMatch
from referee.match.arbiter import Arbiter, Lineup, Sitting
from referee.match.outcome import Attempt, Finished, NotStarted
from referee.match.sandbox import SandboxError, resolve_mode
from referee.match.setup import open_launcher
from referee.match.watch import LiveMatch, watched
from referee.run.driver import ClusterError
from referee.run.host import Host, run_build

__all__ = ["ClusterError", "Feed", "MatchJob", "PlayedOnWorker", "Unplayable", "WorkerStats"]

FEED_EVERY: Final = 0.05
"""Seconds between two relays of a served match's live view: a fast match sends a few a second, not one
per card through the scheduler."""
UNCLAIMED: Final = 60.0
"""Seconds after a match a worker keeps the bots it started ahead for the next, if no task comes for it."""


@dataclass(frozen=True, slots=True)
class MatchJob:
    """One task: play ``scheduled`` on this worker; ``following`` is the match the client will send this
    worker next, whose bots it may start now."""

    plugin: str
    scheduled: ScheduledMatch
    following: ScheduledMatch | None
    disqualified: tuple[tuple[str, str], ...]
    feed: Feed | None = None
    """Where to relay the match's public view as it plays (``referee serve``'s live pages); none for a
    run."""


@dataclass(frozen=True, slots=True)
class Feed:
    """A served match's live view, relayed from the worker that plays it: each change of what every seat
    sees (:func:`~referee.match.watch.public_view`, never a hand) is logged as a Dask event on ``topic``,
    which the server subscribes to, at most one every :data:`FEED_EVERY` seconds (the latest wins); the
    view only when ``shown`` (no other match of its table is still to come), else the deal number
    alone (:meth:`LiveMatch.state`)."""

    topic: str
    shown: bool


@dataclass(frozen=True, slots=True)
class PlayedOnWorker:
    """A match played (complete, or void after its retries) on ``worker``."""

    result: Finished
    worker: str


@dataclass(frozen=True, slots=True)
class Unplayable:
    """The worker could not play the match: ``kind`` is ``start`` (an entrant's bot did not start),
    ``build`` (its build failed, or its in-process bot does not load: the entrant's failure), ``unfit``
    (the worker lacks what the league needs; ``entrant`` is empty) or ``interrupted`` (the run was, and
    the client reads no more). ``attempts``: void plays of the match before a retry did not start."""

    kind: str
    worker: str
    entrant: str
    reason: str
    attempts: tuple[Attempt, ...] = ()


@dataclass(frozen=True, slots=True)
class WorkerStats:
    """What one worker did for a run: bot processes started, hellos refused, and the CPU seconds of the
    worker process (the referee's work and Dask's, every thread) since the run's plugin was set up."""

    started: int
    refusals: tuple[str, ...]
    cpu: float


_Ahead = tuple[tuple[tuple[str, str], ...], "asyncio.Task[Lineup | Unplayable]"]


class ArenaPlugin(WorkerPlugin):
    """One run's referee on one Dask worker: its server, launcher, builds and bots started ahead."""

    def __init__(self, run: str, host: Host, own_cluster: bool = False) -> None:
        self.name = f"pyramid-arena-{run}"
        self.run = run
        self.host = host
        self.own_cluster = own_cluster
        """The workers are those of the run's own LocalCluster: they leave Ctrl-C to the client."""

    async def setup(self, worker: Any) -> None:
        if self.own_cluster:
            _leave_interrupts_to_the_client()
        self.playing: set[asyncio.Task[Any]] = set()
        self.interrupted = False
        self.worker = str(worker.address)
        self.dask_worker = worker
        self.cpu_at_setup = _cpu()
        self.nthreads = int(getattr(worker.state, "nthreads", 1) or 1)
        self.upcoming: dict[str, _Ahead] = {}
        self.builds: dict[str, asyncio.Task[str | None]] = {}
        self.stack = contextlib.AsyncExitStack()
        self.arbiter: Arbiter | None = None
        self.unfit = self.missing()
        if self.unfit:
            return
        try:
            resolve_mode(self.host.confinement.mode)
            self.host.log_dir.mkdir(parents=True, exist_ok=True)
            launcher = await self.stack.enter_async_context(
                open_launcher(self.host.log_dir, self.host.confinement)
            )
            self.arbiter = self.host.arbiter(launcher)
        except (SandboxError, OSError) as exc:
            self.unfit = [str(exc)]

    def missing(self) -> list[str]:
        """What the league needs that this machine lacks, one phrase each."""
        lacks = []
        for entrant in self.host.league.entrants:
            for path, what in ((entrant.spec.cwd, "folder"), *((p, "path") for p in entrant.spec.paths)):
                if path is not None and not path.exists():
                    lacks.append(f"lacks {path} ({entrant.name}'s {what})")
        return lacks

    def _waiting(self) -> list[asyncio.Task[Any]]:
        return [task for _, task in self.upcoming.values()] + list(self.builds.values())

    async def teardown(self, worker: Any) -> None:
        for task in self._waiting():
            task.cancel()
        await asyncio.gather(*self._waiting(), return_exceptions=True)
        if self.arbiter is not None:
            await self.arbiter.close()
        await self.stack.aclose()

    async def stats(self) -> WorkerStats:
        cpu = _cpu() - self.cpu_at_setup
        if self.arbiter is None or self.arbiter.launcher is None:
            return WorkerStats(0, (), cpu)
        await self.arbiter.close()
        launcher = self.arbiter.launcher
        return WorkerStats(launcher.started, tuple(launcher.registry.refusals), cpu)

    async def interrupt(self) -> None:
        """The run was interrupted: the matches playing here stop, and every bot of this worker sees its
        stream end with CANCELLED and is stopped."""
        self.interrupted = True
        for task in self.playing:
            task.cancel()
        await asyncio.gather(*self.playing, return_exceptions=True)
        for task in self._waiting():
            task.cancel()
        await asyncio.gather(*self._waiting(), return_exceptions=True)
        if self.arbiter is not None and self.arbiter.launcher is not None:
            await self.arbiter.close()
            await self.arbiter.launcher.stop_all(interrupted=True)

    async def play(self, job: MatchJob) -> PlayedOnWorker | Unplayable:
        task = asyncio.current_task()
        assert task is not None
        self.playing.add(task)
        try:
            return await self._play(job)
        except asyncio.CancelledError:
            if not self.interrupted:
                raise
            task.uncancel()  # stopped by :meth:`interrupt`: a result nobody reads, not a failed task
            return Unplayable("interrupted", self.worker, "", "the run was interrupted")
        finally:
            self.playing.discard(task)

    async def _play(self, job: MatchJob) -> PlayedOnWorker | Unplayable:
        arbiter = self.arbiter
        if self.unfit or arbiter is None:
            return Unplayable("unfit", self.worker, "", "; ".join(self.unfit))
        lineup = await self._claim(job)
        if lineup is None:
            lineup = await self._lineup(job.scheduled, job.disqualified)
        self._start_following(job)
        relay = None
        try:
            if isinstance(lineup, Unplayable):
                return lineup
            if job.feed is not None:
                live = LiveMatch(job.scheduled.match_id, job.scheduled.entrants, job.feed.shown)
                lineup.seats = watched(lineup.seats, live)
                relay = _Relay(self.dask_worker, job.feed, live)
            result = await arbiter.play(self._sitting(job.scheduled), lineup)
        finally:
            if relay is not None:
                relay.close()
            self._expire_later(job)
        if isinstance(result, NotStarted):
            return self._not_started(result)
        return PlayedOnWorker(result, self.worker)

    async def _claim(self, job: MatchJob) -> Lineup | Unplayable | None:
        """The bots started ahead for ``job``, if they were started with its disqualifications."""
        ahead = self.upcoming.pop(job.scheduled.match_id, None)
        if ahead is None:
            return None
        disqualified, starting = ahead
        try:
            lineup = await starting
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # this task is cancelled, not only the bots started ahead
            return None
        except Exception:  # started again by the caller, where any error shows
            return None
        if disqualified != job.disqualified:  # started before an entrant was disqualified: start again
            self._release(lineup)
            return None
        return lineup

    def _start_following(self, job: MatchJob) -> None:
        following = job.following
        if following is None or following.match_id in self.upcoming:
            return
        if any(name in dict(job.disqualified) for name in following.entrants):
            return  # the client will not send it
        while len(self.upcoming) >= self.nthreads:  # a guess the client did not follow
            _, stale = self.upcoming.pop(next(iter(self.upcoming)))
            stale.cancel()
            stale.add_done_callback(self._stop_stale)
        task = asyncio.create_task(self._lineup(following, job.disqualified))
        self.upcoming[following.match_id] = (job.disqualified, task)

    def _sitting(self, scheduled: ScheduledMatch) -> Sitting:
        bots = tuple(self.host.league.entrant(name).spec for name in scheduled.entrants)
        return Sitting(scheduled.match_id, scheduled.seed, bots)

    def _not_started(self, failed: NotStarted) -> Unplayable:
        kind = "build" if failed.lasting else "start"
        reason = f"{failed.reason} (on worker {self.worker})" if failed.lasting else failed.reason
        return Unplayable(kind, self.worker, failed.entrant, reason, failed.attempts)

    def _expire_later(self, job: MatchJob) -> None:
        """The task for ``job.following`` comes as soon as the client hears of this one's end; if it
        does not come, the bots started for it are stopped after a while."""
        if job.following is not None:
            asyncio.get_running_loop().call_later(UNCLAIMED, self._expire, job.following.match_id)

    def _release(self, lineup: Lineup | Unplayable) -> None:
        if isinstance(lineup, Lineup) and self.arbiter is not None:
            self.arbiter.release(lineup)

    def _expire(self, match_id: str) -> None:
        """Stops bots started ahead for a match no task came for (the client went away, say)."""
        ahead = self.upcoming.get(match_id)
        if ahead is not None and ahead[1].done():
            del self.upcoming[match_id]
            self._stop_stale(ahead[1])

    def _stop_stale(self, task: asyncio.Task[Lineup | Unplayable]) -> None:
        if not task.cancelled() and task.exception() is None:
            self._release(task.result())

    async def _lineup(
        self, scheduled: ScheduledMatch, disqualified: tuple[tuple[str, str], ...]
    ) -> Lineup | Unplayable:
        """Builds (once per worker) and fresh seats for one match, all started at once."""
        assert self.arbiter is not None
        for name in scheduled.entrants:
            problem = await self._build(name)
            if problem is not None:
                return Unplayable("build", self.worker, name, f"{problem} (on worker {self.worker})")
        lineup = await self.arbiter.seat(self._sitting(scheduled))
        if lineup.failed is not None:
            self.arbiter.release(lineup)
            return self._not_started(lineup.failed)
        return lineup

    def _build(self, name: str) -> asyncio.Task[str | None]:
        """The entrant's build on this worker, run once (shared by every match that needs it)."""
        task = self.builds.get(name)
        if task is None:
            task = self.builds[name] = asyncio.create_task(self._run_build(name))
        return task

    async def _run_build(self, name: str) -> str | None:
        """Workers of one machine share its folders: the first to build an entrant in a run does, under a
        lock, and leaves a mark that the others of this run read instead of building again."""
        entrant = self.host.league.entrant(name)
        if entrant.build is None:
            return None
        lock = self.host.log_dir / f"{name}.build.lock"
        mark = self.host.log_dir / f"{name}.build.done"
        with lock.open("a+") as handle:
            await asyncio.to_thread(fcntl.flock, handle.fileno(), fcntl.LOCK_EX)
            try:
                with contextlib.suppress(OSError):
                    run, _, earlier = mark.read_text(encoding="utf-8").partition("\n")
                    if run == self.run:
                        return earlier or None
                problem = await run_build(entrant, self.host.log_dir)
                mark.write_text(f"{self.run}\n{problem or ''}", encoding="utf-8")
                return problem
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class _Relay:
    """Relays a :class:`LiveMatch` as the events of a :class:`Feed`: every :data:`FEED_EVERY` seconds,
    what every seat sees if it changed since the last relay. The match itself only keeps its last
    observation (it has no listener), so a view is built at most that often, however fast the bots;
    logging an event only queues it, so the play never waits for the server."""

    def __init__(self, worker: Any, feed: Feed, live: LiveMatch) -> None:
        self.worker, self.feed, self.live = worker, feed, live
        self.steps = 0
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(FEED_EVERY)
            self.send()

    def send(self) -> None:
        live = self.live
        if live.steps == self.steps:
            return
        self.steps = live.steps
        state = live.state()
        event = {"match_id": live.match_id, "deal": state["deal"], "view": state.get("view")}
        self.worker.log_event(self.feed.topic, event)

    def close(self) -> None:
        """The match is over: what it did last is sent now (the server drops it once it is stored)."""
        self.task.cancel()
        self.send()


def _leave_interrupts_to_the_client() -> None:
    """Makes this worker process deaf to Ctrl-C, which its client handles for it: a handler that does
    nothing (a bot started later gets SIGINT's default again, as exec resets a handled signal), then
    SIGINT unblocked again (the client blocked it while the cluster started this process)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _ignore)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _ignore(number: int, frame: object) -> None:
    """SIGINT's handler on a LocalCluster's worker: the client stops the run (see ``dask_driver.py``)."""


def _plugin(name: str) -> ArenaPlugin:
    plugin = get_worker().plugins.get(name)
    if not isinstance(plugin, ArenaPlugin):
        raise ClusterError(f"worker {get_worker().address} has no {name} plugin")
    return plugin


async def play_on_worker(job: MatchJob) -> PlayedOnWorker | Unplayable:
    """The task: play one scheduled match on the worker that runs it."""
    return await _plugin(job.plugin).play(job)


async def interrupt_worker(dask_worker: Any, name: str) -> None:
    plugin = dask_worker.plugins.get(name)
    if isinstance(plugin, ArenaPlugin):
        await plugin.interrupt()


def worker_unfit(dask_worker: Any, name: str) -> list[str]:
    plugin = dask_worker.plugins.get(name)
    return list(plugin.unfit) if isinstance(plugin, ArenaPlugin) else ["the arena plugin did not start"]


async def worker_stats(dask_worker: Any, name: str) -> WorkerStats | None:
    plugin = dask_worker.plugins.get(name)
    return await plugin.stats() if isinstance(plugin, ArenaPlugin) else None


def _cpu() -> float:
    """CPU seconds of this process, all its threads."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime
