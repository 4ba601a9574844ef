"""What web clients cost a served league's play: the pace of ``referee serve`` (matches stored a minute)
while clients flood one route, against its pace while the same clients ask for a static file (the
yardstick: the HTTP layer's own cost, and the clients' CPU on the same cores, so that neither is counted
against the reads).

The league: 8 in-process entrants (sample_bots' random and heuristic bots as ``module:`` entrants, so
no bot process and no sandbox: the play is all in the server's process), 4 seats, balanced seatings,
three rounds of 840 matches, of which ``--stored`` (default 300) are stored before the server starts:
real matches of the engine between random agents, stored through the referee's own ``Store.save``
(``benchmarks/reads.py``). The database is made once and copied for every run, so each run starts from
the same state.

Each scenario gets a fresh ``referee serve`` on a copy, which once its first new match is stored and
its pages are written plays through ``--times`` windows of the scenario's load (default 3), each
between two windows of the yardstick's (``static`` from the same addresses), ``--seconds`` each
(default 20). The machine's load drifts within minutes, so each window's ratio is to the mean of the
two yardstick windows on either side of it, and the median of those ratios is what counts. Each window
gives matches stored a minute (the pace) and matches per minute of the server process's own CPU time
(what the pace would be with a core to itself: on a loaded machine the steadier figure, since it leaves
out the share of the cores other processes took); the resident memory of the server and of its reader
processes is sampled every second. Loads:

- ``none``: no client.
- ``static``, ``matches``, ``leaderboard``, ``page``, ``match``: ``--clients`` keep-alive clients
  (default 8), each sending ``--rate`` requests a second (default 10), on a static file
  (``/static/live.css``), ``/api/v1/matches``, ``/api/v1/leaderboard``, a random stored match's page
  (``/match-NNNN.html``) and a random stored match (``/api/v1/matches/ID``). A client waits for each
  answer (status and body) before its next request, and keeps its pace whatever the status.
- ``badhost``: the same clients on ``/api/v1/leaderboard`` with ``Host: evil.example``, which the
  server refuses (a DNS-rebinding page's requests).
- ``listeners``: ``--listeners`` (default 100) event-stream requests (``/api/v1/events``) that never
  read a byte; at the end of the window it counts those the server answered and closed, then closes
  the rest and counts the server's sockets left in CLOSE-WAIT 5 s later.

Every load but ``none`` runs from 127.0.0.1, and (a scenario name ending in ``@spread``, or every one
with ``--spread``) from ``--sources`` addresses (default 4: 127.0.0.2 to 127.0.0.5) in turn, so that a
cap per address does not hide the cost of what lies behind it.

    .venv/bin/python benchmarks/api_flood.py                        # every scenario: about 40 minutes
    .venv/bin/python benchmarks/api_flood.py --only none,matches --times 5 --seconds 30
    .venv/bin/python benchmarks/api_flood.py --keep /tmp/flood      # keep (and reuse) the database
    .venv/bin/python benchmarks/api_flood.py --referee ../main/.venv/bin/referee   # another checkout's
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from referee.league.config import load_league
from referee.league.planning import league_settings, schedule_of
from referee.results.reading import open_results
from referee.results.store import Store

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers

from support import ROOT
from support.cli import REFEREE
from support.net import free_port
from support.playthrough import played_outcome

NAMES = ("ann", "bob", "cid", "dee", "eve", "fay", "gus", "hal")
BOTS = ("sample_bots.heuristic:HeuristicBot", "sample_bots.random_bot:RandomBot")
LOADS = ("none", "static", "matches", "leaderboard", "page", "match", "badhost", "listeners")
SCENARIOS = (
    *LOADS,
    *(f"{load}@spread" for load in LOADS if load != "none"),
)
FIRST_MATCH = 300.0
"""Seconds to wait for a fresh server's first new match before giving up on the run."""
BAD_HOST = "evil.example"
"""The Host header of the ``badhost`` load: a name the server is not known by (a DNS rebinding page)."""
ANSWER = 120.0
"""Seconds a client waits for an answer: past it, counted as ``timeout`` and the connection dropped."""


def league_text(rounds: int = 3) -> str:
    entrants = "\n".join(
        f"  - {{name: {name}, module: '{BOTS[number % 2]}', cwd: {ROOT}}}"
        for number, name in enumerate(NAMES)
    )
    return (
        "name: api flood benchmark\nseed: 25\nplayers: 4\n"
        f"schedule: {{format: round-robin, rounds: {rounds}, seating: balanced}}\ndatabase: league.sqlite\n"
        f"entrants:\n{entrants}\n"
    )


def build(folder: Path, stored: int, rounds: int = 3) -> None:
    """The league file in ``folder`` and its database with the first ``stored`` matches of its schedule."""
    path = folder / "league.yaml"
    path.write_text(league_text(rounds), encoding="utf-8")
    league = load_league(path)
    store = Store(league.database)
    try:
        store.bind(league.name, league_settings(league, league.seed), path)
        for scheduled in schedule_of(league, league.seed)[:stored]:
            store.save(scheduled, played_outcome(scheduled, league.rules), time.time())
    finally:
        store.close()
    opened, _, _ = open_results(league, str(path))  # converted as every reader will find it
    opened.close()


def copied(base: Path, folder: Path) -> Path:
    """The league file and database of ``base`` copied into ``folder``; returns the copy's database."""
    for name in ("league.yaml", "league.sqlite"):
        shutil.copy(base / name, folder / name)
    return folder / "league.sqlite"


def interrupted(process: subprocess.Popen[bytes]) -> None:
    """Stops ``process`` as a person does, with Ctrl-C; killed if it has not ended within 60 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def count(database: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)) as db:
        return int(db.execute("SELECT COUNT(*) FROM matches").fetchone()[0])


def stored_ids(database: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        return [str(row[0]) for row in db.execute("SELECT match_id FROM matches")]


@dataclass
class Tally:
    """What the clients of one run got back."""

    statuses: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    answered: int = 0

    def text(self) -> str:
        mean = f" mean {1000 * self.seconds / self.answered:.0f} ms" if self.answered else ""
        return " ".join(f"{status}:{n}" for status, n in sorted(self.statuses.items())) + mean


async def _answer(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """Reads one answer: its status and whether the server closes the connection after it."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
    headers = {key.strip().lower(): value.strip() for key, value in headers.items()}
    await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers.get("connection", "").lower() == "close"


async def client(
    port: int, paths: list[str], rate: float, source: str, tally: Tally, stop: asyncio.Event, host: str = ""
) -> None:
    """One keep-alive client at ``rate`` requests a second: each answer waited for, the pace kept.
    ``host``: the Host header, if not the server's own address."""
    host = host or f"127.0.0.1:{port}"
    interval = 1 / rate
    due = time.monotonic() + random.random() * interval
    streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    while not stop.is_set():
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        due = max(due + interval, time.monotonic())
        try:
            if streams is None:
                streams = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
            reader, writer = streams
            path = random.choice(paths)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            begun = time.monotonic()
            status, closes = await asyncio.wait_for(_answer(reader), ANSWER)
            tally.seconds += time.monotonic() - begun
            tally.answered += 1
            tally.statuses[str(status)] += 1
            if closes:
                writer.close()
                streams = None
        except TimeoutError:
            tally.statuses["timeout"] += 1
            streams = _dropped(streams)
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            tally.statuses["error"] += 1
            streams = _dropped(streams)
            await asyncio.sleep(interval)
    _dropped(streams)


def _dropped(streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None) -> None:
    if streams is not None:
        streams[1].close()


def listeners(port: int, how_many: int, sources: tuple[str, ...]) -> list[socket.socket]:
    """Event-stream requests that will never read a byte."""
    opened = []
    for number in range(how_many):
        sock = socket.socket()
        try:
            sock.bind((sources[number % len(sources)], 0))
            sock.connect(("127.0.0.1", port))
            sock.sendall(f"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        except OSError:
            sock.close()
            continue
        opened.append(sock)
    return opened


def fate(sock: socket.socket) -> tuple[str, bool]:
    """A never-reading listener's answer status (what it was sent is read now and dropped) and whether
    the server has closed or reset its connection."""
    sock.setblocking(False)
    head = b""
    try:
        while True:
            data = sock.recv(1 << 20)
            if not data:
                return _told(head), True
            head = head or data[:16]
    except BlockingIOError:
        return _told(head), False
    except OSError:
        return _told(head), True


def _told(head: bytes) -> str:
    parts = head.split()
    return parts[1].decode() if len(parts) > 1 else "none"


def server_sockets(port: int, state: str) -> int:
    """The server's sockets on ``port`` in ``state`` (``/proc/net/tcp``'s code: ``01`` established,
    ``08`` CLOSE-WAIT: the peer gone, the server not yet closed)."""
    total = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table, encoding="ascii") as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == state:
                    total += 1
    return total


def cpu(pid: int) -> tuple[float, float]:
    """CPU seconds (user and system) of the server's process so far, and of the processes under it."""
    try:
        process = psutil.Process(pid)
        own = process.cpu_times()
        children = [child.cpu_times() for child in process.children(recursive=True)]
    except psutil.Error:
        return 0.0, 0.0
    return own.user + own.system, sum(c.user + c.system for c in children)


def resident(pid: int) -> tuple[float, float]:
    """Resident MiB of the server's process, and of it with every process under it."""
    try:
        process = psutil.Process(pid)
        main = process.memory_info().rss
        children = sum(child.memory_info().rss for child in process.children(recursive=True))
    except psutil.Error:
        return 0.0, 0.0
    return main / 2**20, (main + children) / 2**20


@dataclass
class Run:
    scenario: str
    pace: float
    """Matches stored a minute."""
    tally: Tally
    rss: tuple[float, float]
    cpu_pace: float = 0.0
    """Matches stored a minute of the server process's own CPU time: what the pace would be with a core
    to itself. On a loaded machine it is the steadier figure: what the load costs the process that
    plays, without the share of the cores the other processes took meanwhile."""
    readers_cpu: float = 0.0
    """CPU seconds of the processes under the server (its readers) in the window."""
    note: str = ""


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


@dataclass
class Server:
    """A ``referee serve`` of a copy of the database, and what the loads ask it for."""

    process: subprocess.Popen[bytes]
    port: int
    database: Path
    paths: dict[str, list[str]]


async def window(server: Server, scenario: str, args: argparse.Namespace) -> Run:
    """One measured window of ``args.seconds`` under the load ``scenario`` names."""
    load, _, where = scenario.partition("@")
    sources = spread(args.sources) if where == "spread" else ("127.0.0.1",)
    port = server.port
    tally = Tally()
    stop = asyncio.Event()
    tasks = []
    held: list[socket.socket] = []
    if load in server.paths:
        tasks = [
            asyncio.create_task(
                client(
                    port,
                    server.paths[load],
                    args.rate,
                    sources[n % len(sources)],
                    tally,
                    stop,
                    BAD_HOST if load == "badhost" else "",
                )
            )
            for n in range(args.clients)
        ]
    elif load == "listeners":
        held = listeners(port, args.listeners, sources)
    first = count(server.database)
    cpu_first = cpu(server.process.pid)
    begun = time.monotonic()
    rss = (0.0, 0.0)
    while time.monotonic() - begun < args.seconds:
        await asyncio.sleep(1)
        now = resident(server.process.pid)
        rss = (max(rss[0], now[0]), max(rss[1], now[1]))
    last = count(server.database)
    cpu_last = cpu(server.process.pid)
    took = time.monotonic() - begun
    stop.set()
    await asyncio.gather(*tasks)
    note = ""
    if held:
        kept = server_sockets(port, "01")
        fates = Counter(fate(sock) for sock in held)
        for sock in held:
            sock.close()
        await asyncio.sleep(5)
        told = ", ".join(
            f"{n} {status} {'closed' if closed else 'open'}" for (status, closed), n in sorted(fates.items())
        )
        note = (
            f"{len(held)} listeners ({told}); the server held {kept} connections at the end, "
            f"{server_sockets(port, '08')} in CLOSE-WAIT 5 s after they closed"
        )
    spent = cpu_last[0] - cpu_first[0]
    cpu_pace = 60 * (last - first) / spent if spent > 0 else 0.0
    return Run(scenario, 60 * (last - first) / took, tally, rss, cpu_pace, cpu_last[1] - cpu_first[1], note)


async def session(referee: str, base: Path, windows: list[str], args: argparse.Namespace) -> list[Run]:
    """A fresh ``referee serve`` on a copy of the database in ``base``: once its first new match is
    stored and its pages are written, one window of each of ``windows`` in turn, then Ctrl-C."""
    with tempfile.TemporaryDirectory(prefix="api-flood-") as scratch:
        folder = Path(scratch)
        database = copied(base, folder)
        before = count(database)
        paths = {
            "static": ["/static/live.css"],
            "matches": ["/api/v1/matches"],
            "leaderboard": ["/api/v1/leaderboard"],
            "page": [f"/match-{n:04d}.html" for n in range(1, before + 1)],
            "match": [f"/api/v1/matches/{urllib.parse.quote(i, safe='')}" for i in stored_ids(database)],
            "badhost": ["/api/v1/leaderboard"],  # with Host: evil.example (BAD_HOST)
        }
        port = free_port()
        with (folder / "serve.out").open("w") as out, (folder / "serve.err").open("w") as err:
            process = subprocess.Popen(
                [referee, "serve", "league.yaml", "--http", f"127.0.0.1:{port}"],
                cwd=folder,
                stdout=out,
                stderr=err,
            )
        try:
            deadline = time.monotonic() + FIRST_MATCH
            while count(database) == before:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit(f"no match stored: {(folder / 'serve.err').read_text()}")
                await asyncio.sleep(0.5)
            while await asyncio.to_thread(status_of, f"http://127.0.0.1:{port}/") != 200:  # the pages written
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit(f"no pages: {(folder / 'serve.err').read_text()}")
                await asyncio.sleep(1)
            await asyncio.sleep(args.warm_up)
            server = Server(process, port, database, paths)
            done = []
            for scenario in windows:
                result = await window(server, scenario, args)
                done.append(result)
                print(
                    f"  {scenario}: {result.pace:.1f} matches/min, {result.cpu_pace:.1f} a CPU minute, "
                    f"readers {result.readers_cpu:.0f} CPU s; RSS server {result.rss[0]:.0f} MiB, with "
                    f"readers {result.rss[1]:.0f} MiB; {result.tally.text()} {result.note} "
                    f"(load {load_average()})",
                    flush=True,
                )
                await asyncio.sleep(args.pause)
            return done
        finally:
            interrupted(process)


def spread(count: int) -> tuple[str, ...]:
    """The loopback addresses a spread load comes from.

    >>> spread(4)
    ('127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5')
    """
    return tuple(f"127.0.{(n + 2) // 256}.{(n + 2) % 256}" for n in range(count))


def yardstick_of(scenario: str) -> str:
    return "static@spread" if scenario.endswith("@spread") else "static"


def interleaved(scenario: str, times: int) -> list[str]:
    """The windows of one server: the scenario ``times`` times, each between two static windows of
    the same addresses.

    >>> interleaved("match@spread", 2)
    ['static@spread', 'match@spread', 'static@spread', 'match@spread', 'static@spread']
    """
    yardstick = yardstick_of(scenario)
    return [yardstick] + [scenario, yardstick] * times


def ratios(done: list[Run], figure: Callable[[Run], float]) -> list[float]:
    """Each non-static window's ``figure`` over the mean of the static windows on either side of it."""
    found = []
    for number, result in enumerate(done):
        if result.scenario.startswith("static") or not 0 < number < len(done) - 1:
            continue
        yardstick = (figure(done[number - 1]) + figure(done[number + 1])) / 2
        if yardstick > 0:
            found.append(figure(result) / yardstick)
    return found


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def load_average() -> str:
    return " ".join(f"{figure:.2f}" for figure in os.getloadavg())


async def main() -> None:
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)  # its server stopped too
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SCENARIOS), help="scenarios, comma-separated")
    parser.add_argument("--spread", action="store_true", help="also every load from 127.0.0.2-.5")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of each measured window")
    parser.add_argument("--warm-up", type=float, default=5.0, help="seconds after the first new match")
    parser.add_argument("--stored", type=int, default=300, help="matches stored before the server starts")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rate", type=float, default=10.0, help="requests a second of each client")
    parser.add_argument("--listeners", type=int, default=100)
    parser.add_argument("--sources", type=int, default=4, help="addresses of a spread load, from 127.0.0.2")
    parser.add_argument("--referee", default=REFEREE, help="the referee executable to serve with")
    parser.add_argument("--keep", type=Path, help="make the database in this folder (or reuse it)")
    parser.add_argument("--times", type=int, default=3, help="windows of each scenario, between static ones")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between two windows")
    args = parser.parse_args()
    scenarios = [name.strip() for name in args.only.split(",") if name.strip()]
    if args.spread:
        scenarios += [f"{name}@spread" for name in scenarios if "@" not in name and name != "none"]
    unknown = [name for name in scenarios if name not in SCENARIOS]
    if unknown:
        raise SystemExit(f"unknown scenario(s) {', '.join(unknown)}: pick from {', '.join(SCENARIOS)}")
    with tempfile.TemporaryDirectory(prefix="api-flood-base-") as scratch:
        base = args.keep or Path(scratch)
        base.mkdir(parents=True, exist_ok=True)
        if not (base / "league.sqlite").exists():
            begun = time.perf_counter()
            build(base, args.stored)
            print(
                f"database: {args.stored} matches stored in {time.perf_counter() - begun:.0f} s", flush=True
            )
        print(f"referee: {args.referee}; load average at start: {load_average()}", flush=True)
        print(
            f"load: {args.clients} clients x {args.rate:g} requests/s; {args.listeners} listeners", flush=True
        )
        rows = []
        for scenario in scenarios:
            if scenario.startswith("static"):
                continue
            print(f"{scenario}: {args.times} windows between static ones, one server", flush=True)
            done = await session(args.referee, base, interleaved(scenario, args.times), args)
            loaded = [r for r in done if r.scenario == scenario]
            statics = [r for r in done if r.scenario != scenario]
            rows.append(
                (
                    scenario,
                    loaded,
                    statics,
                    ratios(done, lambda r: r.pace),
                    ratios(done, lambda r: r.cpu_pace),
                )
            )
        print(
            "\n| scenario | matches/min: static, loaded (medians) | ratio: median (range) | by CPU time "
            "| RSS MiB server / all, max | answers (all windows) |"
        )
        print("|---|---:|---:|---:|---:|---|")
        for scenario, loaded, statics, by_pace, by_cpu in rows:
            answers = Tally()
            for result in loaded:
                answers.statuses.update(result.tally.statuses)
                answers.seconds += result.tally.seconds
                answers.answered += result.tally.answered
            notes = "; ".join(sorted({r.note for r in loaded if r.note}))
            paces = f"{median([r.pace for r in statics]):.0f}, {median([r.pace for r in loaded]):.0f}"
            print(
                f"| {scenario} | {paces} "
                f"| {median(by_pace):.2f} ({min(by_pace):.2f}-{max(by_pace):.2f}) "
                f"| {median(by_cpu):.2f} ({min(by_cpu):.2f}-{max(by_cpu):.2f}) "
                f"| {max(r.rss[0] for r in loaded):.0f} / {max(r.rss[1] for r in loaded):.0f} "
                f"| {notes or answers.text()} |"
            )
        print(f"load average at end: {load_average()}")


if __name__ == "__main__":
    asyncio.run(main())
