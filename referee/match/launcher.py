"""Bot processes: start them in their sandbox with a secret token, wait for their connection, and always
stop them.

The token reaches the process through an inherited pipe (file descriptor ``PYRAMID_TOKEN_FD``), never its
environment, which any process of the same user could read in ``/proc``; the SDKs read it once at start.
A bot gets a clean environment, not the referee's. Each process runs in its own process group (and, where
the sandbox runs, its own PID namespace) so that stopping it also stops anything it started; every process
a :class:`Launcher` started is stopped when the launcher's ``async with`` block ends, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import secrets
import shlex
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Protocol

from pyramid_sdk import transport

transport.configure()  # before gRPC loads: it reads its settings once (see pyramid_sdk.transport)
# isort: split
import grpc

from pyramid_sdk.client import ENV_ADDRESS, ENV_TLS_CA, ENV_TOKEN, ENV_TOKEN_FD, ENV_TOKEN_FILE
from referee.match.bots import BotSpec, BotSpecError, interpreter_family
from referee.match.output import Tail, quote
from referee.match.sandbox import (
    HOME_INSIDE,
    SOCKET_INSIDE,
    Limits,
    SandboxMode,
    SandboxPlan,
    entrant_uid,
    exit_signal,
    python_paths,
    resolve_mode,
)
from referee.match.sessions import INTERRUPTED, Session, SessionRegistry
from referee.match.watchdog import BOT_VARIABLE, sweep
from referee.match.watchdog import environment as watchdog_mark

LOGGER = logging.getLogger(__name__)
CONNECT_TIMEOUT: Final = 20.0
STOP_GRACE: Final = 2.0
KILL_WAIT: Final = 2.0
"""Seconds a stop waits for a SIGKILLed process to be reaped (a process in uninterruptible sleep can
take that long); after it, the stop goes on, its group killed again and its mark swept."""
STOP_SWEEP: Final = 2.0
"""Seconds at most a stop spends killing what a bot killed mid-start left outside its process group."""
EXIT_GRACE: Final = 1.0
"""Seconds a bot whose stream was closed cleanly gets to finish its match-end work and exit by itself."""
LOG_LIMIT: Final = 1024 * 1024
"""Bytes of output kept per bot log file (one older file of the same size is kept beside it)."""
_SETPRIV: Final = shutil.which("setpriv") if sys.platform == "linux" else None
_DEATH_SIGNAL: Final = (_SETPRIV, "--pdeathsig", "KILL", "--") if _SETPRIV else ()
"""Even a referee killed with SIGKILL takes its bots along: the kernel sends them SIGKILL when it dies.
(util-linux's setpriv sets that before it execs the bot; Python's preexec_fn is unsafe with threads.)
It cannot cover a referee that dies before setpriv runs, nor the sandbox's first process, which bubblewrap
clones and arms late: the watchdog (:mod:`referee.match.watchdog`) sweeps up whatever those windows
leave, found by the mark every bot process's environment carries."""


@dataclass(frozen=True, slots=True)
class Confinement:
    """How a launcher confines the processes it starts (see :mod:`referee.match.sandbox`)."""

    mode: SandboxMode = SandboxMode.AUTO
    limits: Limits = field(default_factory=Limits)
    hidden: tuple[Path, ...] = ()
    """Paths no bot may read even where they lie inside its folder: the league file, its database, logs
    and report. The other entrants' folders are added per bot from ``entrant_dirs``."""
    entrant_dirs: tuple[Path, ...] = ()


class BotProcess:
    """One running bot process and its session."""

    def __init__(self, spec: BotSpec, log_path: Path | None = None, limits: Limits | None = None) -> None:
        self.spec = spec
        self.token = secrets.token_urlsafe(24)
        self.log_path = log_path
        self.limits = limits or Limits()
        self.process: asyncio.subprocess.Process | None = None
        self.session: Session | None = None
        self.scratch: Path | None = None
        """The unsandboxed process's own ``HOME`` and ``TMPDIR``, removed when it stops."""
        self._logger: asyncio.Task[None] | None = None
        self._tail = Tail()
        self.mark = secrets.token_hex(8)
        """This process's own mark (``watchdog.BOT_VARIABLE``): every process of its start carries it."""
        self._spawned = False

    async def start(
        self,
        registry: SessionRegistry,
        argv: Sequence[str],
        env: dict[str, str],
        timeout: float = CONNECT_TIMEOUT,
    ) -> Session:
        """Starts ``argv`` (the bot's command, wrapped in its sandbox or not) with the token on a pipe, and
        waits until the process has connected and said hello. However it fails or is cancelled, its token
        is forgotten (a process stopped before its hello can never use it); the caller stops it."""
        waiting = registry.expect(self.token)
        try:
            await self._spawn(argv, env)
            return await self._hello(waiting, timeout)
        except BaseException:
            registry.forget(self.token)
            raise

    async def _spawn(self, argv: Sequence[str], env: dict[str, str]) -> None:
        """Starts the process, its output on a pipe of our own. (Not asyncio's: a process's ``wait()``
        would then wait for that pipe to close too, and a sandbox left running by a kill at the wrong
        moment holds it open for ever.)"""
        token_in, token_out = os.pipe()
        output, into = os.pipe()
        try:
            os.write(token_out, self.token.encode())  # 32 bytes: never blocks on a pipe
            os.close(token_out)
            self._spawned = True  # from here on, a stop sweeps what a start cut short may leave
            self.process = await asyncio.create_subprocess_exec(
                *_DEATH_SIGNAL,
                *argv,
                cwd=self.spec.cwd,
                env={**env, ENV_TOKEN_FD: str(token_in), **watchdog_mark(), BOT_VARIABLE: self.mark},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=into,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(token_in,),
            )
        except OSError as exc:
            self._spawned = False  # the exec failed: the child is gone
            os.close(output)
            raise BotSpecError(
                f"bot {self.spec.name!r}: cannot start {shlex.join(self.spec.command)}: {exc}"
            ) from None
        except BaseException:
            os.close(output)
            raise
        finally:
            os.close(token_in)
            os.close(into)
        self._logger = asyncio.create_task(_keep_output(output, self.log_path, self._tail))

    async def _hello(self, waiting: asyncio.Future[Session], timeout: float) -> Session:
        assert self.process is not None
        exited = asyncio.create_task(self.process.wait())
        either: set[asyncio.Future[Any]] = {waiting, exited}
        try:
            done, _ = await asyncio.wait(either, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not exited.done():
                exited.cancel()
        if waiting in done:
            self.session = waiting.result()
            return self.session
        await self.stop()
        if exited in done:
            if self._logger is not None:
                await asyncio.wait({self._logger}, timeout=0.5)
            code = exited.result()
            problem = f"{describe_exit(code)} before connecting{self._limit_hit(code)}"
            if code == 0:
                problem += never_connected_hint(self.spec.command)
        else:
            problem = f"did not connect within {timeout:g}s"
        raise BotSpecError(f"bot {self.spec.name!r} {problem}{self.last_words()}")

    async def exit_words(self, wait: float = 0.5) -> str:
        """For a fault detail once the bot's stream has broken: how the process ended and the last line it
        printed. Waits up to ``wait`` seconds for the process to end and its output to be read."""
        process = self.process
        if process is None:
            return ""
        if process.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), wait)
        if process.returncode is None:
            return self.last_words()
        if self._logger is not None:
            await asyncio.wait({self._logger}, timeout=wait)
        code = process.returncode
        return f"; it {describe_exit(code)}{self._limit_hit(code)}{self.last_words()}"

    def _limit_hit(self, returncode: int) -> str:
        limit = self.limits.explain(returncode, quote(self._tail.text()))
        return f", having hit {limit}" if limit else ""

    def last_words(self) -> str:
        """The last few lines the bot printed that say why it failed (see :mod:`referee.match.output`),
        quoted for an error message, or ``""``."""
        words = quote(self._tail.text())
        return f"; its last output: {words!r}" if words else ""

    async def stop(self, grace: float = STOP_GRACE, interrupted: bool = False) -> None:
        """Stops the process group. A bot in good standing sees its stream end (status OK, or CANCELLED
        if the referee was ``interrupted``) and gets ``EXIT_GRACE`` seconds to exit by itself (the SDKs
        return from ``run`` then), so the work of its ``match_end`` hook is not cut short; then SIGTERM,
        and SIGKILL after ``grace`` seconds. A process that had to be killed, or whose start was cut
        short, may have left a sandbox running outside its group: its mark is swept. Every wait here
        has a deadline."""
        session = self.session
        polite = session is not None and not session.is_closed and not session.busy
        if session is not None:
            if interrupted:
                session.close(INTERRUPTED, grpc.StatusCode.CANCELLED)
            else:
                session.close("the referee stopped this bot")
        process, self.process = self.process, None  # stopped once: a reaped pid may be reused later
        killed = self._spawned and process is None  # a start cancelled while the process was created
        self._spawned = False
        if process is not None:
            if polite and process.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), EXIT_GRACE)
            if process.returncode is None:
                _signal_group(process.pid, signal.SIGTERM)
                try:
                    await asyncio.wait_for(process.wait(), grace)
                except TimeoutError:
                    _signal_group(process.pid, signal.SIGKILL)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(process.wait(), KILL_WAIT)
            _signal_group(process.pid, signal.SIGKILL)  # anything the bot left behind in its group
            killed = killed or process.returncode is None or process.returncode < 0
        if killed:  # by a signal, maybe while its sandbox was being set up: the clone is swept
            found = await asyncio.to_thread(sweep, self.mark, STOP_SWEEP, BOT_VARIABLE)
            if found:  # after a Ctrl-C, killing them is what was asked for: not worth a warning
                LOGGER.log(
                    logging.DEBUG if interrupted else logging.WARNING,
                    "bot %r: %d process(es) left by a stopped start were killed",
                    self.spec.name,
                    found,
                )
        if self._logger is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._logger), grace)
            self._logger.cancel()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


def never_connected_hint(command: Sequence[str]) -> str:
    """Why a bot would end with code 0 before it connected, in the words of its language: it never
    started playing (a bot plays until the referee ends its stream).

    >>> never_connected_hint(["python3", "bot.py"])
    ': it ended without playing; did it call run(MyBot()) (from pyramid_sdk.client import run)?'
    """
    family = interpreter_family(command[0]) if command else None
    if family == "python":
        call = "run(MyBot()) (from pyramid_sdk.client import run)"
    elif family == "node":
        call = 'main(new MyBot()) (const { main } = require("pyramid-arena-sdk"))'
    else:
        return (
            ": it ended without playing; a bot connects to PYRAMID_ADDRESS and plays until the referee "
            "ends its stream (docs/PROTOCOL.md)"
        )
    return f": it ended without playing; did it call {call}?"


def interrupted() -> bool:
    """Whether the running task is being cancelled: the referee was interrupted (Ctrl-C, SIGTERM), so
    the bots it stops now get CANCELLED rather than OK."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def describe_exit(returncode: int) -> str:
    """How a process ended, in words: ``exited with code 1``, ``was killed by SIGSEGV``. A sandboxed
    bot's code comes through bubblewrap, which reports a death by signal N as code 128 + N.

    >>> describe_exit(1), describe_exit(-11), describe_exit(137)
    ('exited with code 1', 'was killed by SIGSEGV', 'was killed by SIGKILL')
    """
    number = exit_signal(returncode)
    if number is not None:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(number).name}"
    return f"exited with code {returncode}"


async def _keep_output(fd: int, path: Path | None, tail: Tail) -> None:
    """:func:`_keep_log` of the read end ``fd`` of a bot's output pipe, closed at its end (or when the
    task is cancelled: a sandbox that outlived its kill may still hold the write end)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    pipe = os.fdopen(fd, "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    except BaseException:
        pipe.close()
        raise
    try:
        await _keep_log(reader, path, tail)
    finally:
        transport.close()


async def _keep_log(
    stream: asyncio.StreamReader, path: Path | None, tail: Tail, limit: int = LOG_LIMIT
) -> None:
    """Copies a bot's output to its log, if it has one, and keeps its last bytes in ``tail``. A log
    that reaches ``limit`` bytes becomes ``NAME.log.1`` (the older one is dropped) and a new one starts:
    a chatty bot costs at most twice the limit of disk, and the latest output, where crashes are, is
    always kept. The pipe is always drained, so a bot never blocks on a full pipe."""
    while chunk := await stream.read(65536):
        tail.add(chunk)
        if path is None:
            continue
        with contextlib.suppress(OSError):
            if path.exists() and path.stat().st_size >= limit:
                os.replace(path, path.with_name(path.name + ".1"))
            with path.open("ab") as log:
                log.write(chunk)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _environment(address: str, home: str, path: str) -> dict[str, str]:
    """A bot's whole environment: not the referee's (which may hold secrets, proxies or credentials),
    but what a bot needs, the referee's address, and any ``PYRAMID_*`` setting the organiser gave the
    referee for its bots (``PYRAMID_STREAM``, say). The referee's interpreter comes first on ``PATH``, so
    that a ``python`` command runs with the SDK installed."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key.startswith("PYRAMID_")
        and key not in (ENV_TOKEN, ENV_TOKEN_FD, ENV_ADDRESS, ENV_TOKEN_FILE, ENV_TLS_CA)
    }
    for key in ("LANG", "LC_ALL", "TZ"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env | {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), path]),
        "HOME": home,
        "TMPDIR": str(Path(home).parent) if home == HOME_INSIDE else home,
        "PYTHONUNBUFFERED": "1",
        ENV_ADDRESS: address,
    }


class Unclaimed(BotSpecError):
    """Remote entrants a claim could not take in time (``referee.remote.lobby.Absent``): ``names`` were
    not connected (a failed start of theirs), ``busy`` were connected but still in another match (no
    fault of theirs)."""

    names: tuple[str, ...] = ()
    busy: tuple[str, ...] = ()


class RemoteSource(Protocol):
    """Where a remote entrant's connection comes from (``referee.remote.lobby.Lobby``)."""

    async def claim_bots(self, specs: Sequence[BotSpec], deals: int | None = None) -> list[BotProcess]:
        """Connections for ``specs``, all at once, for a match on ``deals`` (its seed: no entrant plays
        two matches of the same deals at once); :class:`BotSpecError` naming who is missing."""
        ...

    def ready(self, names: Sequence[str], deals: int | None = None) -> bool:
        """Whether every one of ``names`` has a free connection for a match on ``deals`` now: a claim of
        them would not wait."""
        ...

    def capacity(self, name: str) -> int:
        """How many matches ``name`` can be playing at once now (its open connections)."""
        ...

    def connected(self, name: str) -> bool:
        """Whether ``name``'s bot is connected now (free or in a match)."""
        ...


class Launcher:
    """Owns bot processes; ``async with`` guarantees they are all stopped at the end.

    ``socket`` is the referee's Unix socket; a sandboxed bot sees it at ``SOCKET_INSIDE``.
    """

    def __init__(
        self,
        registry: SessionRegistry,
        socket: Path,
        log_dir: Path | None = None,
        confinement: Confinement | None = None,
    ) -> None:
        self.registry = registry
        self.socket = socket
        self.log_dir = log_dir
        self.confinement = confinement or Confinement()
        mode = self.confinement.mode
        self._sandboxed = resolve_mode(mode) if mode is SandboxMode.REQUIRED else None
        """Resolved when the first bot process starts (bubblewrap is tried once per process, by running
        it): a match of in-process bots starts no process at all. ``required`` is resolved at once, so
        that a machine without the sandbox is one line before anything plays."""
        self.processes: set[BotProcess] = set()
        """Those not stopped yet (a long league starts hundreds of thousands)."""
        self.started = 0
        self._uids: dict[str, int] = {}
        self.remote: RemoteSource | None = None
        """The lobby of remote entrants, when the referee listens for them."""

    @property
    def sandboxed(self) -> bool:
        if self._sandboxed is None:
            self._sandboxed = resolve_mode(self.confinement.mode)
        return self._sandboxed

    def plan(self, spec: BotSpec) -> tuple[list[str], dict[str, str], Path | None]:
        """The command line that starts ``spec`` (in its sandbox, if any), its environment, and the
        scratch folder an unsandboxed bot gets as ``HOME``."""
        if not self.sandboxed:
            scratch = Path(tempfile.mkdtemp(prefix="pyramid-bot-"))
            env = _environment(f"unix:{self.socket}", str(scratch), os.environ.get("PATH", os.defpath))
            limits = self.confinement.limits.prlimit_args(processes=False)  # it would count the referee's
            prlimit = ["prlimit", *limits, "--"] if shutil.which("prlimit") else []
            return [*prlimit, *spec.command], env, scratch
        cwd = (spec.cwd or Path.cwd()).resolve()
        granted = (cwd, *spec.paths, *python_paths())
        others = tuple(
            folder
            for folder in self.confinement.entrant_dirs
            if not any(root == folder or folder in root.parents for root in granted)
        )
        hidden = (*self.confinement.hidden, *others)
        # A file the command names (python /srv/bots/alpha.py) is shown too, unless it is a hidden one.
        named = (
            path
            for path in (Path(arg).resolve() for arg in spec.command if arg.startswith("/"))
            if path.is_file() and not any(secret == path or secret in path.parents for secret in hidden)
        )
        visible = (*granted[1:], *named)
        uid = None
        if os.geteuid() == 0:
            for root in (cwd, *spec.paths):
                if not root.exists():
                    raise BotSpecError(f"bot {spec.name!r}: no folder or file {root}")
                if not _world_readable(root):
                    raise BotSpecError(
                        f"bot {spec.name!r}: {root} is not readable by other users, and a sandboxed bot "
                        "runs as a uid of its own: make it readable (chmod -R o+rX), or use --sandbox none"
                    )
            uid = self._uids.get(spec.name)
            if uid is None:
                uid = self._uids[spec.name] = entrant_uid(spec.name, self._uids.values())
        plan = SandboxPlan(
            command=spec.command,
            cwd=cwd,
            socket=self.socket,
            visible=visible,
            hidden=hidden,
            uid=uid,
            limits=self.confinement.limits,
        )
        env = _environment(f"unix:{SOCKET_INSIDE}", HOME_INSIDE, "/usr/local/bin:/usr/bin:/bin")
        return plan.argv(), env, None

    def log_of(self, spec: BotSpec) -> Path | None:
        """The file the bot's output goes to (every process of the entrant appends to it)."""
        return self.log_dir / f"{_safe(spec.name)}.log" if self.log_dir else None

    async def claim(self, specs: Sequence[BotSpec], deals: int | None = None) -> list[BotProcess]:
        """The connections of remote entrants ``specs`` for a match on ``deals`` (its seed), taken
        together (see ``referee.remote.lobby``): a start that fails like a process that would not start."""
        if self.remote is None:
            raise BotSpecError(
                f"bot {specs[0].name!r} is a remote entrant: the referee must listen for it "
                "(referee run --listen HOST:PORT, docs/REMOTE.md)"
            )
        bots = await self.remote.claim_bots(specs, deals)
        self.processes.update(bots)
        return bots

    async def start(self, spec: BotSpec, timeout: float = CONNECT_TIMEOUT) -> BotProcess:
        if spec.remote:
            return (await self.claim([spec]))[0]
        log = self.log_of(spec)
        process = BotProcess(spec, log, self.confinement.limits)
        self.processes.add(process)
        self.started += 1
        argv, env, process.scratch = self.plan(spec)
        try:
            await process.start(self.registry, argv, env, timeout)
        except BaseException:
            await asyncio.shield(self.stop(process))  # a failed start stopped it; a cancelled one has not
            raise
        return process

    async def stop(self, process: BotProcess, interrupted: bool = False) -> None:
        try:
            await process.stop(interrupted=interrupted)
        finally:
            self.processes.discard(process)

    async def stop_all(self, interrupted: bool = False) -> None:
        await asyncio.gather(
            *(self.stop(process, interrupted) for process in list(self.processes)), return_exceptions=True
        )

    async def __aenter__(self) -> Launcher:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Stops every process left; a block left by a cancellation (Ctrl-C, SIGTERM) ends their streams
        with CANCELLED."""
        cancelled = kind is not None and issubclass(kind, (asyncio.CancelledError, KeyboardInterrupt))
        await asyncio.shield(self.stop_all(interrupted=cancelled or interrupted()))


def _world_readable(path: Path) -> bool:
    """Whether any uid can read ``path`` (and enter it, for a folder)."""
    mode = path.stat().st_mode
    need = stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0)
    return mode & need == need


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name) or "bot"
