"""The Dask executor: the league's matches played on the worker processes of a Dask cluster.

``referee run LEAGUE --workers N`` starts a :class:`distributed.LocalCluster` of N worker processes on
this machine; ``--dask tcp://HOST:8786`` uses a running cluster. Only *where* a match is played changes
(architecture principle 9): a task is "play this scheduled match", with the schedule's seed, and returns
its :class:`~referee.match.runner.MatchOutcome`; this process (the client) stores each outcome as it
arrives, one transaction per match, and stays the only writer of the results database. Ratings are
computed from the stored matches in schedule order, as always, so the order in which workers finish does
not matter.

On each worker a :class:`ArenaPlugin` (a Dask ``WorkerPlugin``, so that a worker that joins or is
restarted mid-run gets one too) keeps, for the whole run, one referee server and one launcher with the
league's sandbox, runs each entrant's ``build:`` before that entrant's first match there, and starts the
bots of the match the client will most likely send it next while the current one plays, as the
in-process executor does. Match tasks are coroutines, run on the worker's own event loop (the one Dask
already runs), so the bot processes are children of the worker's main thread and die with it.

What may go wrong on a worker is told apart from what an entrant did:

- a worker that lacks an entrant's folder or path, or cannot set up the sandbox, is *unfit*: the client
  names it and the path, and plays on without it (before the first match: stops, storing nothing);
- a bot that cannot start on a worker is tried again on another worker; only an entrant that failed to
  start on two different workers is disqualified for the run (the in-process executor: after three
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
import fcntl
import importlib.util
import os
import resource
import secrets
import signal
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import dask
from distributed import Client, LocalCluster, WorkerPlugin, as_completed, get_worker
from distributed.client import Future
from distributed.scheduler import KilledWorker

from referee.league.config import League
from referee.league.schedule import ScheduledMatch
from referee.league.tournament import VOID_RETRIES, Progress, Tournament, run_build
from referee.match.bots import BotSpecError
from referee.match.faults import FaultPolicy
from referee.match.launcher import BotProcess, Confinement, Launcher, interrupted
from referee.match.outcome import MatchOutcome, MatchStatus
from referee.match.runner import AbsentSeat, LocalSeat, RemoteSeat, Seat, play_match
from referee.match.sandbox import SandboxError, resolve_mode
from referee.match.setup import open_launcher

CONNECT_TIMEOUT: Final = 10.0
"""Seconds to reach a scheduler before ``referee run --dask`` gives up."""
WORKERS_TIMEOUT: Final = 60.0
"""Seconds to wait for a running cluster's first worker."""
UNCLAIMED: Final = 60.0
"""Seconds after a match a worker keeps the bots it started ahead for the next, if no task comes for it."""
START_FAILURES: Final = 2
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


class ExecutorError(RuntimeError):
    """The cluster cannot play this league; the message is one line: what, where, what to do."""


# -- what passes between the client and the workers ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchJob:
    """One task: play ``scheduled`` on this worker; ``following`` is the match the client will send this
    worker next, whose bots it may start now."""

    plugin: str
    scheduled: ScheduledMatch
    following: ScheduledMatch | None
    disqualified: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Played:
    """A match played (complete or void) on ``worker``."""

    outcome: MatchOutcome
    started: float
    worker: str


@dataclass(frozen=True, slots=True)
class Unplayable:
    """The worker could not play the match: ``kind`` is ``start`` (an entrant's bot did not start),
    ``build`` (its build failed: the entrant's failure), ``unfit`` (the worker lacks what the league
    needs; ``entrant`` is empty) or ``interrupted`` (the run was, and the client reads no more)."""

    kind: str
    worker: str
    entrant: str
    reason: str


@dataclass(frozen=True, slots=True)
class WorkerStats:
    """What one worker did for a run: bot processes started, hellos refused, and the CPU seconds of the
    worker process (the referee's work and Dask's, every thread) since the run's plugin was set up."""

    started: int
    refusals: tuple[str, ...]
    cpu: float


def _public(league: League) -> League:
    """The league as sent to the workers: without its seed (each match carries its own), so a secret
    league seed never leaves this process."""
    return replace(league, seed=None)


# -- the worker side ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Lineup:
    seats: list[Seat]
    processes: list[BotProcess]
    disqualified: tuple[tuple[str, str], ...]
    problem: Unplayable | None = None


class ArenaPlugin(WorkerPlugin):
    """One run's referee on one Dask worker: its server, launcher, builds and bots started ahead."""

    def __init__(
        self, run: str, league: League, log_dir: Path, confinement: Confinement, own_cluster: bool = False
    ) -> None:
        self.name = f"pyramid-arena-{run}"
        self.run = run
        self.league = league
        self.log_dir = log_dir
        self.confinement = confinement
        self.own_cluster = own_cluster
        """The workers are those of the run's own LocalCluster: they leave Ctrl-C to the client."""

    async def setup(self, worker: Any) -> None:
        if self.own_cluster:
            _leave_interrupts_to_the_client()
        self.playing: set[asyncio.Task[Any]] = set()
        self.interrupted = False
        self.worker = str(worker.address)
        self.cpu_at_setup = _cpu()
        self.nthreads = int(getattr(worker.state, "nthreads", 1) or 1)
        self.upcoming: dict[str, asyncio.Task[_Lineup]] = {}
        self.builds: dict[str, asyncio.Task[str | None]] = {}
        self.stopping: set[asyncio.Task[None]] = set()
        self.stack = contextlib.AsyncExitStack()
        self.launcher: Launcher | None = None
        self.unfit = self.missing()
        if self.unfit:
            return
        try:
            resolve_mode(self.confinement.mode)
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self.launcher = await self.stack.enter_async_context(
                open_launcher(self.log_dir, self.confinement)
            )
        except (SandboxError, OSError) as exc:
            self.unfit = [str(exc)]

    def missing(self) -> list[str]:
        """What the league needs that this machine lacks, one phrase each."""
        lacks = []
        for entrant in self.league.entrants:
            for path, what in ((entrant.spec.cwd, "folder"), *((p, "path") for p in entrant.spec.paths)):
                if path is not None and not path.exists():
                    lacks.append(f"lacks {path} ({entrant.name}'s {what})")
        return lacks

    async def teardown(self, worker: Any) -> None:
        for task in (*self.upcoming.values(), *self.builds.values()):
            task.cancel()
        await asyncio.gather(*self.upcoming.values(), *self.builds.values(), return_exceptions=True)
        await asyncio.gather(*self.stopping, return_exceptions=True)
        await self.stack.aclose()

    async def stats(self) -> WorkerStats:
        await asyncio.gather(*self.stopping, return_exceptions=True)
        cpu = _cpu() - self.cpu_at_setup
        if self.launcher is None:
            return WorkerStats(0, (), cpu)
        return WorkerStats(self.launcher.started, tuple(self.launcher.registry.refusals), cpu)

    async def interrupt(self) -> None:
        """The run was interrupted: the matches playing here stop, and every bot of this worker sees its
        stream end with CANCELLED and is stopped."""
        self.interrupted = True
        for task in self.playing:
            task.cancel()
        await asyncio.gather(*self.playing, return_exceptions=True)
        for task in (*self.upcoming.values(), *self.builds.values()):
            task.cancel()
        await asyncio.gather(*self.upcoming.values(), *self.builds.values(), return_exceptions=True)
        await asyncio.gather(*self.stopping, return_exceptions=True)
        if self.launcher is not None:
            await self.launcher.stop_all(interrupted=True)

    async def play(self, job: MatchJob) -> Played | Unplayable:
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

    async def _play(self, job: MatchJob) -> Played | Unplayable:
        if self.unfit or self.launcher is None:
            return Unplayable("unfit", self.worker, "", "; ".join(self.unfit))
        starting = self.upcoming.pop(job.scheduled.match_id, None)
        lineup = None
        if starting is not None:
            try:
                lineup = await starting
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # this task is cancelled, not only the bots started ahead
            except Exception:  # started again below, where any error shows
                pass
        if lineup is not None and lineup.disqualified != job.disqualified:
            self._stop(lineup)  # started before an entrant was disqualified: start again
            lineup = None
        if lineup is None:
            lineup = await self._lineup(job.scheduled, job.disqualified)
        if job.following is not None and job.following.match_id not in self.upcoming:
            while len(self.upcoming) >= self.nthreads:  # a guess the client did not follow
                stale = self.upcoming.pop(next(iter(self.upcoming)))
                stale.cancel()
                stale.add_done_callback(self._stop_stale)
            self.upcoming[job.following.match_id] = asyncio.create_task(
                self._lineup(job.following, job.disqualified)
            )
        if lineup.problem is not None:
            self._stop(lineup)
            self._expire_later(job)
            return lineup.problem
        league = self.league
        started = time.time()
        try:
            outcome = await play_match(
                lineup.seats,
                league.rules,
                job.scheduled.seed,
                match_id=job.scheduled.match_id,
                time_control=league.time_control,
                fault_policy=FaultPolicy(league.max_faults),
            )
        finally:
            self._stop(lineup, interrupted())
            self._expire_later(job)
        return Played(outcome, started, self.worker)

    def _expire_later(self, job: MatchJob) -> None:
        """The task for ``job.following`` comes as soon as the client hears of this one's end; if it
        does not come, the bots started for it are stopped after a while."""
        if job.following is not None:
            asyncio.get_running_loop().call_later(UNCLAIMED, self._expire, job.following.match_id)

    def _stop(self, lineup: _Lineup, interrupted: bool = False) -> None:
        """Stops a lineup's bots in the background (a polite stop waits for a bot to exit by itself)."""
        launcher = self.launcher
        if launcher is None or not lineup.processes:
            return
        task = asyncio.create_task(_stop_all(launcher, lineup.processes, interrupted))
        self.stopping.add(task)
        task.add_done_callback(self.stopping.discard)

    def _expire(self, match_id: str) -> None:
        """Stops bots started ahead for a match no task came for (the client went away, say)."""
        stale = self.upcoming.get(match_id)
        if stale is not None and stale.done():
            del self.upcoming[match_id]
            self._stop_stale(stale)

    def _stop_stale(self, task: asyncio.Task[_Lineup]) -> None:
        if not task.cancelled() and task.exception() is None:
            self._stop(task.result())

    async def _lineup(self, scheduled: ScheduledMatch, disqualified: tuple[tuple[str, str], ...]) -> _Lineup:
        """Builds (once per worker) and fresh seats for one match, all started at once."""
        lineup = _Lineup([], [], disqualified)
        out = dict(disqualified)
        for name in scheduled.entrants:
            if name in out:
                continue
            problem = await self._build(name)
            if problem is not None:
                where = f"{problem} (on worker {self.worker})"
                lineup.problem = Unplayable("build", self.worker, name, where)
                return lineup
        lineup.seats = list(
            await asyncio.gather(*(self._seat(name, out, lineup) for name in scheduled.entrants))
        )
        return lineup

    async def _seat(self, name: str, out: dict[str, str], lineup: _Lineup) -> Seat:
        entrant = self.league.entrant(name)
        if name in out:
            return AbsentSeat(name, f"disqualified: {out[name]}")
        if entrant.in_process:
            try:
                return LocalSeat(entrant.spec.load(), name)
            except BotSpecError as exc:
                return AbsentSeat(name, str(exc))
        assert self.launcher is not None
        try:
            try:
                process = await self.launcher.start(entrant.spec)
            except BotSpecError:
                process = await self.launcher.start(entrant.spec)  # a busy machine can miss the window
        except BotSpecError as exc:
            if lineup.problem is None:
                lineup.problem = Unplayable("start", self.worker, name, str(exc))
            return AbsentSeat(name, str(exc))
        lineup.processes.append(process)
        assert process.session is not None
        return RemoteSeat(process.session, name, exit_words=process.exit_words)

    def _build(self, name: str) -> asyncio.Task[str | None]:
        """The entrant's build on this worker, run once (shared by every match that needs it)."""
        task = self.builds.get(name)
        if task is None:
            task = self.builds[name] = asyncio.create_task(self._run_build(name))
        return task

    async def _run_build(self, name: str) -> str | None:
        """Workers of one machine share its folders: the first to build an entrant in a run does, under a
        lock, and leaves a mark that the others of this run read instead of building again."""
        entrant = self.league.entrant(name)
        if entrant.build is None:
            return None
        lock = self.log_dir / f"{name}.build.lock"
        mark = self.log_dir / f"{name}.build.done"
        with lock.open("a+") as handle:
            await asyncio.to_thread(fcntl.flock, handle.fileno(), fcntl.LOCK_EX)
            try:
                with contextlib.suppress(OSError):
                    run, _, earlier = mark.read_text(encoding="utf-8").partition("\n")
                    if run == self.run:
                        return earlier or None
                problem = await run_build(entrant, self.log_dir)
                mark.write_text(f"{self.run}\n{problem or ''}", encoding="utf-8")
                return problem
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


async def _stop_all(launcher: Launcher, processes: list[BotProcess], interrupted: bool = False) -> None:
    await asyncio.gather(
        *(launcher.stop(process, interrupted) for process in processes), return_exceptions=True
    )


def _leave_interrupts_to_the_client() -> None:
    """Makes this worker process deaf to Ctrl-C, which its client handles for it: a handler that does
    nothing (a bot started later gets SIGINT's default again, as exec resets a handled signal), then
    SIGINT unblocked again (the client blocked it while the cluster started this process)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _ignore)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _ignore(number: int, frame: object) -> None:
    """SIGINT's handler on a LocalCluster's worker: the client stops the run (see the module's doc)."""


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


def _plugin(name: str) -> ArenaPlugin:
    plugin = get_worker().plugins.get(name)
    if not isinstance(plugin, ArenaPlugin):
        raise ExecutorError(f"worker {get_worker().address} has no {name} plugin")
    return plugin


async def play_on_worker(job: MatchJob) -> Played | Unplayable:
    """The task: play one scheduled match on the worker that runs it."""
    return await _plugin(job.plugin).play(job)


async def _interrupt_worker(dask_worker: Any, name: str) -> None:
    plugin = dask_worker.plugins.get(name)
    if isinstance(plugin, ArenaPlugin):
        await plugin.interrupt()


def _worker_unfit(dask_worker: Any, name: str) -> list[str]:
    plugin = dask_worker.plugins.get(name)
    return list(plugin.unfit) if isinstance(plugin, ArenaPlugin) else ["the arena plugin did not start"]


async def _worker_stats(dask_worker: Any, name: str) -> WorkerStats | None:
    plugin = dask_worker.plugins.get(name)
    return await plugin.stats() if isinstance(plugin, ArenaPlugin) else None


def _cpu() -> float:
    """CPU seconds of this process, all its threads."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


# -- the client side ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Slot:
    """A chain of matches the client hands one worker after another: the next one is chosen ahead, so the
    worker can start its bots while the current match plays."""

    scheduled: ScheduledMatch
    following: ScheduledMatch | None
    attempt: int = 0
    prefer: str | None = None
    avoid: set[str] = field(default_factory=set)


class DaskExecutor:
    """Plays a :class:`Tournament`'s missing matches on a Dask cluster and stores them here."""

    def __init__(
        self,
        tournament: Tournament,
        address: str | None = None,
        workers: int | None = None,
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        if (address is None) == (workers is None):
            raise ValueError("give a scheduler address or a number of workers")
        self.tournament = tournament
        self.address = address
        self.workers = workers
        self.say = say
        self.unfit: dict[str, str] = {}
        self.failed_starts: dict[str, dict[str, str]] = {}
        self.setup_seconds = 0.0
        """How long the cluster took to be ready to play (started or reached, workers set up)."""
        self.stats: dict[str, WorkerStats] = {}
        """Per worker, at the end of a run (a worker restarted mid-run counts from its restart)."""

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[Client]:
        """A client of the running cluster, or of a LocalCluster closed (workers and all) at the end."""
        if self.address is not None:
            try:
                client = await Client(self.address, asynchronous=True, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise ExecutorError(
                    f"cannot reach the Dask scheduler at {self.address}: {_first_line(exc)}; start one with "
                    "`dask scheduler` (docs/SCALING.md) or check the address"
                ) from None
            try:
                if not client.scheduler_info()["workers"]:
                    self.say(f"waiting for a Dask worker to join {self.address}")
                    try:
                        await client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
                    except TimeoutError:
                        raise ExecutorError(
                            f"no Dask worker joined {self.address} within {WORKERS_TIMEOUT:g}s; start one "
                            f"with `dask worker {self.address}`"
                        ) from None
                yield client
            finally:
                await client.close()
            return
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")  # workers inherit it
        with dask.config.set(LOCAL_SETTINGS):  # the nannies pass it on to their workers as they start
            with _interrupts_blocked():
                cluster = LocalCluster(
                    n_workers=self.workers,
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
                self.say(f"Dask LocalCluster: {self.workers} worker processes, dashboard {dashboard}")
                async with Client(cluster, asynchronous=True) as client:
                    await client.wait_for_workers(self.workers)
                    yield client

    async def run(self, on_progress: Callable[[Progress], None] = lambda progress: None) -> Progress:
        tournament = self.tournament
        missing = tournament.missing()
        progress = tournament.progress(missing)
        on_progress(progress)
        if not missing:
            return progress
        tournament.log_dir.mkdir(parents=True, exist_ok=True)
        run = secrets.token_hex(6)
        plugin = ArenaPlugin(
            run,
            _public(tournament.league),
            tournament.log_dir,
            tournament.confinement(),
            own_cluster=self.address is None,
        )
        begun = time.perf_counter()
        checked = False
        async with self.client() as client:
            await client.register_plugin(plugin)
            try:
                unfit = await client.run(_worker_unfit, name=plugin.name)
                lacks = [f"worker {worker}: {'; '.join(items)}" for worker, items in unfit.items() if items]
                if lacks:
                    raise ExecutorError(
                        "; ".join(lacks) + ": every worker needs the entrants' folders at the same paths "
                        "(docs/SCALING.md)"
                    )
                self.setup_seconds = time.perf_counter() - begun
                # The preflight runs here, once the workers have their folders and before any of them
                # plays: the entrants' folders and programs are on this machine too (the league file was
                # checked against them). An entrant with a build is left to the workers, which build it.
                async with open_launcher(tournament.log_dir, tournament.confinement()) as launcher:
                    built = {e.name for e in tournament.league.entrants if e.build is not None}
                    await tournament.preflight(launcher, [], built)
                checked = True
                while missing:  # one pass for a fixed schedule; one per batch until settled
                    await self._drive(client, plugin.name, missing, progress, on_progress)
                    missing = tournament.extend(progress)
            except (asyncio.CancelledError, KeyboardInterrupt):
                # Interrupted: every worker ends its bots' streams with CANCELLED and stops them.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.run(_interrupt_worker, name=plugin.name), INTERRUPT_TIMEOUT)
                raise
            finally:
                if checked:  # a run stopped before its first match changes nothing stored
                    tournament.store.set_disqualified(tournament.disqualified)
                with contextlib.suppress(Exception):
                    stats = await client.run(_worker_stats, name=plugin.name)
                    self.stats = {worker: item for worker, item in stats.items() if item is not None}
                    tournament.processes_started = sum(item.started for item in self.stats.values())
                    tournament.refusals = [line for item in self.stats.values() for line in item.refusals]
                with contextlib.suppress(Exception):
                    await client.unregister_worker_plugin(plugin.name)
        return progress

    async def _drive(
        self,
        client: Client,
        plugin: str,
        missing: list[ScheduledMatch],
        progress: Progress,
        on_progress: Callable[[Progress], None],
    ) -> None:
        tournament = self.tournament
        queue = deque(missing)
        threads = await _threads(client)
        slots: dict[Future[Any], _Slot] = {}
        pending = as_completed()

        async def submit(slot: _Slot) -> None:
            while any(name in tournament.disqualified for name in slot.scheduled.entrants):
                # Not played, not stored: a disqualification is not a result (the next run retries it).
                tournament.skipped += 1
                following = slot.following or take()
                if following is None:
                    return
                slot = _Slot(following, take(), prefer=slot.prefer)
            out = tuple(sorted(tournament.disqualified.items()))
            job = MatchJob(plugin, slot.scheduled, slot.following, out)
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
                    raise ExecutorError(
                        f"no worker left that can play {slot.scheduled.match_id}: "
                        + "; ".join(f"{w}: {why}" for w, why in self.unfit.items())
                    )
            elif slot.prefer is not None:
                workers, loose = [slot.prefer], True
            future = client.submit(
                play_on_worker,
                job,
                key=f"pyramid-{plugin}-{slot.scheduled.position}-{slot.attempt}-{secrets.token_hex(3)}",
                pure=False,
                workers=workers,
                allow_other_workers=loose,
            )
            slots[future] = slot
            pending.add(future)

        def take() -> ScheduledMatch | None:
            return queue.popleft() if queue else None

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
                raise ExecutorError(
                    f"match {slot.scheduled.match_id} was on several workers that died while playing it "
                    "(Dask's distributed.scheduler.allowed-failures); look at the workers' logs, then run "
                    "again to resume"
                ) from None
            if isinstance(result, Unplayable):
                await self._unplayable(result, client)
                slot.attempt += 1
                await submit(slot)
                continue
            outcome = result.outcome
            tournament.store.save(slot.scheduled, outcome, result.started)
            for name in slot.scheduled.entrants:  # its bot started: an earlier disqualification is over
                if name not in tournament.disqualified:
                    tournament.store.clear_disqualified(name)
            if outcome.status is MatchStatus.COMPLETE:
                tournament.voids_in_a_row = 0
            else:
                tournament.void(slot.scheduled, outcome, slot.attempt)  # stops a run that keeps voiding
            if outcome.status is not MatchStatus.COMPLETE and slot.attempt < VOID_RETRIES:
                slot.attempt += 1
                slot.prefer = result.worker
                await submit(slot)
                continue
            progress.played += 1
            progress.last = outcome
            if outcome.status is MatchStatus.COMPLETE:
                progress.done += 1
                progress.count(slot.scheduled.entrants, outcome.record.credited_totals)
            else:
                progress.void += 1
            on_progress(progress)
            if slot.following is not None:
                await submit(_Slot(slot.following, take(), prefer=result.worker))
            while queue and len(slots) < await _threads(client):  # a worker joined: give it a chain too
                first = take()
                assert first is not None
                await submit(_Slot(first, take()))

    async def _unplayable(self, result: Unplayable, client: Client) -> None:
        tournament = self.tournament
        if result.kind == "unfit":
            if result.worker not in self.unfit:
                self.unfit[result.worker] = result.reason
                self.say(f"worker {result.worker}: {result.reason}; no more matches go there")
        elif result.kind == "build":
            tournament.disqualified.setdefault(result.entrant, result.reason)
        else:
            failed = self.failed_starts.setdefault(result.entrant, {})
            failed[result.worker] = result.reason
            workers = set(await _workers(client)) - set(self.unfit)
            if len(failed) >= START_FAILURES:
                tournament.disqualified.setdefault(
                    result.entrant, f"{result.reason} (on workers {', '.join(sorted(failed))})"
                )
            elif workers <= set(failed):
                raise ExecutorError(
                    f"{result.entrant} cannot start on worker {result.worker}, the only worker left: "
                    f"{result.reason}; fix the worker (or the entrant) and run again"
                )
            else:
                self.say(f"worker {result.worker}: {result.reason}; trying {result.entrant} on another")


async def _workers(client: Client) -> list[str]:
    """The addresses of the cluster's workers now."""
    nthreads: dict[str, int] = await client.nthreads()
    return list(nthreads)


async def _threads(client: Client) -> int:
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
