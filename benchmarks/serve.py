"""Whether a served league costs the same per match on its two-thousandth stored match as on its
hundredth: the pace of ``referee serve`` against ``referee run`` on the same league from copies of one
database pre-filled to ``--sizes`` stored matches (default 100 and 2,000), the server's CPU per stored
match, and the time of ``/``, ``/api/v1/leaderboard`` and ``/api/v1/matches/ID`` as a client finds
them while the league plays (most requests are the first read after a new match: a match is stored
every fraction of a second).

The league (issue #34): 8 in-process entrants (sample_bots' random and heuristic bots as ``module:``
entrants: no bot process, so the play is all in the measured process), 4 seats, balanced seatings,
``rounds: 5`` (4,200 matches, so both commands have matches left to play). The pre-filled matches are
real matches of the engine between random agents, stored through the referee's own ``Store.save``
(``benchmarks/api_flood.py``'s ``build``). Each command runs ``--seconds`` (default 60) from a fresh
copy, ``run`` and ``serve`` alternating ``--rounds`` times (default 2) at each size; the figure is the
matches stored in that time (both commands start, open the database and plan before their first
match, and serve writes its first whole report meanwhile, in a reader process).

    .venv/bin/python benchmarks/serve.py
    .venv/bin/python benchmarks/serve.py --sizes 100 2000 --seconds 60 --rounds 2

``--soak MINUTES`` measures instead the server's resident memory (its own, and with its reader
processes) while it plays ``MINUTES`` on end, a league of ``rounds: SOAK_ROUNDS`` from 100 stored matches
(so that it does not run out), with one client asking for a page, the leaderboard and a stored match
every second; it prints a line a minute and the ratio of the last minute's to the fifth's::

    .venv/bin/python benchmarks/serve.py --soak 30

``--watched`` measures instead what watchers cost: one server on a copy of the largest ``--sizes``
database (of a league of ``rounds: SOAK_ROUNDS``, so that it does not run out of matches) plays through
``--rounds`` pairs of ``--seconds`` windows, alternating no client at all with ``--listeners`` event-
stream listeners (default 200, eight an address from 127.0.0.10 on, each reading every byte it is sent)
and ``--requests`` API and page requests a second (default 20, from 127.0.0.2 to .5: ``/``,
``/api/v1/leaderboard`` and a stored match in turn); it prints each window's pace, the events the
listeners got and the answers, and the median ratio::

    .venv/bin/python benchmarks/serve.py --watched --sizes 2000 --seconds 30 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from api_flood import build, copied, count, cpu, interrupted, load_average, resident, stored_ids

from support.cli import REFEREE
from support.net import free_port

ROUNDS = 5
SOAK_ROUNDS = 40
"""33,600 matches: at a few hundred a minute, more than half an hour of play."""
ROUTES = ("/", "/api/v1/leaderboard", "/api/v1/matches/ID")


def timed_get(url: str) -> float | None:
    """Seconds to the whole answer of ``url``, or ``None`` if it was not a 200."""
    begun = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=120) as answer:
            answer.read()
            ok = answer.status == 200
    except OSError:
        return None
    return time.perf_counter() - begun if ok else None


def one(command: str, base: Path, seconds: float) -> tuple[int, tuple[float, float], dict[str, list[float]]]:
    """(matches stored, CPU seconds of the process and of its children, read times by route) of one run of
    ``referee run`` or ``referee serve`` for ``seconds`` on a copy of the database in ``base``."""
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as scratch:
        folder = Path(scratch)
        database = copied(base, folder)
        before = count(database)
        ids = stored_ids(database)
        port = free_port()
        argv = [REFEREE, command, "league.yaml"]
        argv += ["--http", f"127.0.0.1:{port}"] if command == "serve" else []
        reads: dict[str, list[float]] = {route: [] for route in ROUTES}
        with (folder / "out").open("w") as out:
            process = subprocess.Popen(argv, cwd=folder, stdout=out, stderr=subprocess.STDOUT)
            begun = time.monotonic()
            try:
                while time.monotonic() - begun < seconds:
                    time.sleep(1.0)
                    if command == "serve":
                        for route in ROUTES:
                            path = route.replace("ID", urllib.parse.quote(random.choice(ids), safe=""))
                            took = timed_get(f"http://127.0.0.1:{port}{path}")
                            if took is not None:
                                reads[route].append(took)
                spent = cpu(process.pid)
            finally:
                interrupted(process)
        return count(database) - before, spent, reads


def soak(minutes: float) -> None:
    """The server's resident memory, a line a minute, while it plays ``minutes`` on end (see the doc)."""
    with tempfile.TemporaryDirectory(prefix="serve-soak-") as scratch:
        folder = Path(scratch)
        build(folder, 100, SOAK_ROUNDS)
        ids = stored_ids(folder / "league.sqlite")
        port = free_port()
        with (folder / "out").open("w") as out:
            argv = [REFEREE, "serve", "league.yaml", "--http", f"127.0.0.1:{port}"]
            process = subprocess.Popen(argv, cwd=folder, stdout=out, stderr=subprocess.STDOUT)
            begun = time.monotonic()
            samples: dict[int, tuple[float, float, int]] = {}
            try:
                while (elapsed := time.monotonic() - begun) < minutes * 60:
                    time.sleep(1.0)
                    for route in ("/", "/api/v1/leaderboard", "/api/v1/matches/ID"):
                        path = route.replace("ID", urllib.parse.quote(random.choice(ids), safe=""))
                        timed_get(f"http://127.0.0.1:{port}{path}")
                    minute = int(elapsed // 60) + 1
                    if minute not in samples and elapsed >= 60 * minute - 5:  # the end of each minute
                        own, whole = resident(process.pid)
                        samples[minute] = (own, whole, count(folder / "league.sqlite"))
                        print(
                            f"minute {minute}: server {own:.0f} MiB, with its readers {whole:.0f} MiB, "
                            f"{samples[minute][2]} stored (load {load_average()})",
                            flush=True,
                        )
            finally:
                interrupted(process)
    fifth, last = samples.get(5), samples[max(samples)]
    if fifth is not None:
        print(
            f"soak: minute {max(samples)} ÷ minute 5: server {last[0] / fifth[0]:.3f}, "
            f"with its readers {last[1] / fifth[1]:.3f}; {last[2] - fifth[2]} matches stored in between"
        )


async def _listener(port: int, source: str, stop: asyncio.Event, got: list[int]) -> None:
    """An event-stream listener that reads every byte, counting the events (``got[0]``) it is sent."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    except OSError:
        return
    writer.write(f"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    try:
        while not stop.is_set():
            try:
                data = await asyncio.wait_for(reader.read(1 << 16), 0.5)
            except TimeoutError:
                continue
            if not data:
                break
            got[0] += data.count(b"\nevent: ") + data.startswith(b"event: ")
    except OSError:
        pass
    finally:
        writer.close()


async def _requester(port: int, source: str, rate: float, paths: list[str], stop: asyncio.Event,
                     statuses: Counter[int]) -> None:  # fmt: skip
    """Requests at ``rate`` a second on a keep-alive connection, each answer read whole."""
    loop = asyncio.get_running_loop()
    due = loop.time()
    streams = None
    number = 0
    while not stop.is_set():
        due += 1 / rate
        await asyncio.sleep(max(0.0, due - loop.time()))
        try:
            if streams is None:
                streams = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
            reader, writer = streams
            path = paths[number % len(paths)]
            number += 1
            writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                ),
                0,
            )
            await reader.readexactly(length)
            statuses[status] += 1
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            statuses[0] += 1
            if streams is not None:
                streams[1].close()
            streams = None
    if streams is not None:
        streams[1].close()


def watched(base: Path, seconds: float, rounds: int, listeners: int, requests: float) -> None:
    """Pace without clients against pace with ``listeners`` and ``requests`` a second (see the doc)."""
    with tempfile.TemporaryDirectory(prefix="serve-watched-") as scratch:
        folder = Path(scratch)
        database = copied(base, folder)
        ids = stored_ids(database)
        port = free_port()
        with (folder / "out").open("w") as out:
            argv = [REFEREE, "serve", "league.yaml", "--http", f"127.0.0.1:{port}"]
            process = subprocess.Popen(argv, cwd=folder, stdout=out, stderr=subprocess.STDOUT)
            try:
                first = count(database)
                while count(database) == first:
                    time.sleep(0.5)
                paces: dict[str, list[float]] = {"none": [], "watched": []}
                for _ in range(rounds):
                    for load in ("none", "watched"):
                        paces[load].append(
                            asyncio.run(_window(port, database, ids, seconds, load, listeners, requests))
                        )
            finally:
                interrupted(process)
    ratios = [w / n for n, w in zip(paces["none"], paces["watched"], strict=True) if n]
    print(
        f"watched: {listeners} listeners and {requests:g} requests a second: pace ratios "
        f"{', '.join(f'{r:.2f}' for r in ratios)}, median {median(ratios):.2f}"
    )


async def _window(port: int, database: Path, ids: list[str], seconds: float, load: str, listeners: int,
                  requests: float) -> float:  # fmt: skip
    stop = asyncio.Event()
    got = [0]
    statuses: Counter[int] = Counter()
    tasks = []
    if load == "watched":
        tasks += [
            asyncio.create_task(_listener(port, f"127.0.0.{10 + n // 8}", stop, got))
            for n in range(listeners)
        ]
        paths = ["/", "/api/v1/leaderboard"] + [
            "/api/v1/matches/" + urllib.parse.quote(random.choice(ids), safe="") for _ in range(20)
        ]
        paths = [paths[n % 2] if n % 3 else paths[2 + n % 20] for n in range(60)]
        tasks += [
            asyncio.create_task(_requester(port, f"127.0.0.{2 + n}", requests / 4, paths, stop, statuses))
            for n in range(4)
        ]
        await asyncio.sleep(2)  # the listeners connected
    before, begun = count(database), time.monotonic()
    await asyncio.sleep(seconds)
    pace = (count(database) - before) / ((time.monotonic() - begun) / 60)
    stop.set()
    await asyncio.gather(*tasks)
    told = f"; {got[0]} events to the listeners, answers {dict(sorted(statuses.items()))}" if tasks else ""
    print(f"{load:8} {pace:7.1f} matches/min{told} (load {load_average()})", flush=True)
    return pace


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 2000])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--soak", type=float, metavar="MINUTES", help="the memory soak instead (see the doc)")
    parser.add_argument("--watched", action="store_true", help="what listeners and requests cost instead")
    parser.add_argument("--listeners", type=int, default=200)
    parser.add_argument("--requests", type=float, default=20.0, help="API and page requests a second")
    args = parser.parse_args()
    if args.soak:
        soak(args.soak)
        return
    if args.watched:
        with tempfile.TemporaryDirectory(prefix="serve-bench-base-") as scratch:
            base = Path(scratch)
            build(base, max(args.sizes), SOAK_ROUNDS)  # so that it does not run out of matches
            watched(base, args.seconds, args.rounds, args.listeners, args.requests)
        return
    with tempfile.TemporaryDirectory(prefix="serve-bench-base-") as scratch:
        results: dict[int, dict[str, list[tuple[int, tuple[float, float], dict[str, list[float]]]]]] = {}
        for size in args.sizes:
            base = Path(scratch) / str(size)
            base.mkdir()
            build(base, size, ROUNDS)
            results[size] = {"run": [], "serve": []}
            for number in range(args.rounds):
                for command in ("run", "serve") if number % 2 == 0 else ("serve", "run"):
                    done = one(command, base, args.seconds)
                    results[size][command].append(done)
                    print(
                        f"{size} stored, {command}: {done[0]} matches in {args.seconds:g} s, "
                        f"CPU s {done[1][0]:.1f} own, {done[1][1]:.1f} children (load {load_average()})",
                        flush=True,
                    )
        print(
            "\n| stored | run, matches | serve, matches | serve ÷ run | serve's own CPU s a match | "
            + " | ".join(f"`{route}` median ms" for route in ROUTES)
            + " |"
        )
        print("|---:|---|---|---:|---:|" + "---:|" * len(ROUTES))
        for size, by in results.items():
            run = [played for played, _, _ in by["run"]]
            serve = [played for played, _, _ in by["serve"]]
            per_match = sum(spent[0] for _, spent, _ in by["serve"]) / max(1, sum(serve))
            times = [
                1000 * median([t for _, _, reads in by["serve"] for t in reads[route]]) for route in ROUTES
            ]
            print(
                f"| {size} | {', '.join(map(str, run))} | {', '.join(map(str, serve))} | "
                f"{sum(serve) / max(1, sum(run)):.2f} | {per_match:.3f} | "
                + " | ".join(f"{t:.0f}" for t in times)
                + " |"
            )


if __name__ == "__main__":
    main()
