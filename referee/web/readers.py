"""The reader processes of ``referee serve``: where every page and API answer is read, so that the
process that plays never does that work (:mod:`referee.web.reads` says why), and the answers the
server keeps, each as long as the results it was read from are the latest.

:class:`Readers` runs :data:`READERS` processes at :data:`NICENESS` (a lower CPU priority than the
play's), each one read at a time. A read waits for a free reader; when :data:`WAITING` reads wait
already, the next is refused at once (:class:`Busy`: the server answers ``503`` with ``Retry-After``),
so a flood queues nothing without bound. A read that takes longer than its deadline, or a reader that
dies, costs that reader: it is stopped and started again, and the read fails (:class:`ReadFailed`).
A request waits for its read however long it takes (its client decides how long it waits).
The event loop never waits on a reader: requests and answers go through pipes it reads as they come.

:class:`Answers` keeps what was read by what it answers (a route and its arguments) and the *state*
it was read in (a count the server bumps whenever the results, the league or the pages change): a
request whose answer was read in the current state gets it at no cost, so N identical requests after
a match cost one read. Each answer is read at most once at a time: a request that comes while it is
being read waits for that read if it started in the request's state, else for the next, which starts
when that one ends, in the then-current state. So every answer is at least as new as the state the
request saw (a client that saw ``match_finished`` finds that match) and a flood costs one read per
route and state. At most :data:`CACHE_BYTES` are kept; the answers used least lately go first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import pickle
import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import IO, Any, Final

LOGGER = logging.getLogger(__name__)
LENGTH: Final = 8
"""Bytes of the length before each message between the server and a reader (big-endian)."""
READERS: Final = 2
"""Reader processes: one may render a page that takes seconds (an entrant's, first asked for in a large
league) while the other reads."""
NICENESS: Final = 10
"""Added to the readers' niceness: on a busy machine the play comes first, the pages after."""
WAITING: Final = 32
"""Reads that may wait for a free reader; the next one is refused (503)."""
READ_DEADLINE: Final = 600.0
"""Seconds a reader may take over one read before it is taken for stuck: stopped and started again, the
read failed. Far above what a read takes (an export of a few hundred matches: seconds on an idle core,
a minute on a loaded one): a slow read that was cut would only be started again, and never end."""
START_DEADLINE: Final = 60.0
"""Seconds a new reader process has to import the referee and answer."""
STOP_DEADLINE: Final = 3.0
"""Seconds the readers have to exit when the server stops, before they are killed."""
CACHE_BYTES: Final = 64 * 2**20
"""Bytes of answers kept."""
RETRY_AFTER: Final = 2
"""Seconds a refused request is told to wait (``Retry-After``)."""


class Busy(Exception):
    """Every reader is busy and :data:`WAITING` reads wait already."""


class ReadFailed(Exception):
    """A read failed: its one line says why (the reader's error, or its deadline)."""


@dataclass(eq=False)
class _Reader:
    process: asyncio.subprocess.Process

    async def run(self, name: str, args: tuple[Any, ...]) -> Any:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        data = pickle.dumps((name, args), protocol=pickle.HIGHEST_PROTOCOL)
        self.process.stdin.write(len(data).to_bytes(LENGTH, "big") + data)
        await self.process.stdin.drain()
        head = await self.process.stdout.readexactly(LENGTH)
        outcome, value = pickle.loads(await self.process.stdout.readexactly(int.from_bytes(head, "big")))
        if outcome != "ok":
            raise ReadFailed(str(value))
        return value


class Readers:
    """A bounded pool of reader processes (:mod:`referee.web.reads`)."""

    def __init__(
        self,
        processes: int = READERS,
        waiting: int = WAITING,
        niceness: int = NICENESS,
        log: IO[Any] | None = None,
    ) -> None:
        self.processes = processes
        self.waiting = waiting
        self.niceness = niceness
        self.log = log
        """Where the readers' own output goes (their standard error): the league's log, or nowhere."""
        self._idle: asyncio.Queue[_Reader] = asyncio.Queue()
        self._all: set[_Reader] = set()
        self._waits = 0
        self._closed = False
        self._replacing: set[asyncio.Future[None]] = set()

    async def start(self) -> None:
        """Starts the processes and waits until each answers."""
        await asyncio.gather(*(self._spawn() for _ in range(self.processes)))

    async def _spawn(self) -> None:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-P",  # not the server's folder on the path: a league folder's files are not the referee's
            "-m",
            "referee.web.reads",
            str(self.niceness),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self.log if self.log is not None else asyncio.subprocess.DEVNULL,
            start_new_session=True,  # a signal to the server's group (Ctrl-C) is the server's to handle
        )
        reader = _Reader(process)
        self._all.add(reader)
        try:
            await asyncio.wait_for(reader.run("ready", ()), START_DEADLINE)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ReadFailed) as exc:
            await self._stop(reader)
            raise ReadFailed(f"a reader process did not start: {exc or type(exc).__name__}") from None
        if self._closed:
            await self._stop(reader)
            return
        self._idle.put_nowait(reader)

    async def call(self, name: str, *args: Any, deadline: float = READ_DEADLINE) -> Any:
        """``name`` (a job of :mod:`referee.web.reads`) run on ``args`` in a reader."""
        if self._closed:
            raise Busy("the server is stopping")
        if not self._all:
            raise Busy("no reader process is running")
        if self._idle.empty() and self._waits >= self.waiting:
            raise Busy(f"{self._waits} reads are waiting for a reader")
        self._waits += 1
        try:
            reader = await self._idle.get()
        finally:
            self._waits -= 1
        # Shielded: a caller that goes away (a client gone, the server stopping) leaves the reader to
        # finish its answer, so that the next read finds the pipe at a message's start.
        running = asyncio.ensure_future(self._run(reader, name, args, deadline))
        running.add_done_callback(_retrieved)
        return await asyncio.shield(running)

    async def _run(self, reader: _Reader, name: str, args: tuple[Any, ...], deadline: float) -> Any:
        healthy = False
        try:
            value = await asyncio.wait_for(reader.run(name, args), deadline)
            healthy = True
            return value
        except ReadFailed:
            healthy = True  # the job failed, the reader is fine
            raise
        except TimeoutError:
            raise ReadFailed(f"the read {name} took longer than {deadline:g}s") from None
        except (OSError, asyncio.IncompleteReadError, pickle.UnpicklingError) as exc:
            if self._closed:
                raise Busy("the server is stopping") from None
            raise ReadFailed(f"a reader process stopped ({type(exc).__name__})") from None
        finally:
            if healthy and not self._closed:
                self._idle.put_nowait(reader)
            else:  # in the background: the read's caller is told now
                replacing = asyncio.ensure_future(self._replace(reader))
                self._replacing.add(replacing)
                replacing.add_done_callback(self._replacing.discard)

    async def _replace(self, reader: _Reader) -> None:
        await self._stop(reader)
        if not self._closed:
            try:
                await self._spawn()
            except ReadFailed as exc:
                LOGGER.warning("%s", exc)

    async def _stop(self, reader: _Reader) -> None:
        self._all.discard(reader)
        process = reader.process
        if process.stdin is not None:
            process.stdin.close()
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), STOP_DEADLINE)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()

    async def close(self) -> None:
        """Stops every reader, what it is doing abandoned."""
        self._closed = True
        await asyncio.gather(*(self._stop(reader) for reader in list(self._all)))
        await asyncio.gather(*self._replacing, return_exceptions=True)


@dataclass(eq=False)
class _Entry:
    """An answer kept (``state`` -1: none yet), and the reads of it under way."""

    state: int = -1
    value: Any = None
    size: int = 0
    reading: asyncio.Future[Any] | None = None
    reading_state: int = -1
    next: asyncio.Future[Any] | None = None


def _size(value: Any) -> int:
    """The bytes an answer holds, roughly: a page of matches (its list and cursor) by its list's."""
    held = value[0] if isinstance(value, tuple) and value else value
    return len(held) if isinstance(held, bytes | str) else 4096


Job = Callable[[], tuple[str, tuple[Any, ...]]]
"""The name of a read (a job of :mod:`referee.web.reads`) and its arguments, when it starts."""


class Answers:
    """Answers read by :class:`Readers`, kept per state (the module's docstring says how)."""

    def __init__(self, readers: Readers, most: int = CACHE_BYTES) -> None:
        self.readers = readers
        self.most = most
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._bytes = 0
        self.reads = 0
        """Reads started since the server started."""

    async def get(self, key: Hashable, state: Callable[[], int], job: Job) -> Any:
        """The answer ``key`` as of the current ``state()``; ``job()``, called when a read starts, names
        the read and its arguments. Raises :class:`Busy` or :class:`ReadFailed` as the read does."""
        wanted = state()
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry()
        self._entries.move_to_end(key)
        if entry.state >= wanted:
            return entry.value
        if entry.reading is None:
            return await asyncio.shield(self._start(key, entry, state, job))
        if entry.reading_state >= wanted:
            return await asyncio.shield(entry.reading)
        if entry.next is None:  # being read in an older state: the next read, once that one ends
            entry.next = asyncio.get_running_loop().create_future()
            entry.next.add_done_callback(_retrieved)
        return await asyncio.shield(entry.next)

    def _start(self, key: Hashable, entry: _Entry, state: Callable[[], int], job: Job) -> asyncio.Future[Any]:
        entry.reading_state = state()
        name, args = job()
        self.reads += 1
        reading = entry.reading = asyncio.ensure_future(self.readers.call(name, *args))
        reading.add_done_callback(lambda done: self._done(key, entry, done, state, job))
        return reading

    def _done(
        self, key: Hashable, entry: _Entry, done: asyncio.Future[Any], state: Callable[[], int], job: Job
    ) -> None:
        entry.reading = None
        if not done.cancelled() and done.exception() is None:
            self._bytes += _size(done.result()) - entry.size
            entry.state, entry.value, entry.size = entry.reading_state, done.result(), _size(done.result())
        waiting, entry.next = entry.next, None
        if waiting is not None:  # the requests that came during that read: one more, in today's state
            self._start(key, entry, state, job).add_done_callback(lambda result: _settle(waiting, result))
        elif entry.state < 0 and self._entries.get(key) is entry:
            del self._entries[key]  # nothing read, nothing kept
        self._trim()

    def _trim(self) -> None:
        for key in list(self._entries):
            if self._bytes <= self.most:
                return
            entry = self._entries[key]
            if entry.reading is None:
                del self._entries[key]
                self._bytes -= entry.size


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Marks a failure seen, so that asyncio does not log it when no request was left to hear it."""
    if not future.cancelled():
        future.exception()


def _settle(future: asyncio.Future[Any], result: asyncio.Future[Any]) -> None:
    if future.done():
        return
    if result.cancelled():
        future.cancel()
    elif (error := result.exception()) is not None:
        future.set_exception(error)
    else:
        future.set_result(result.result())
